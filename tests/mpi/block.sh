# block.sh - --block (--model): a transformer block's GEMMs back to back as one step per TP
# degree and policy, on 2 ranks. The block and its GEMMs pass --check; every block's step is
# recomputed from its GEMMs' traces and its tokens/s per rank from its step, the answer's
# use lines from the blocks (check_block.py); tpbal-plan predicts the measured TP 2 block
# leave-one-out (within 10 %: a timing assertion, four attempts), plans a 64-rank world
# (TP x PP x DP) and writes the block's shards per GEMM, which a second block run applies
# (speed source "plan"); the report draws the block view; what --block cannot do is refused
# in one line.
. "$(dirname "$0")/lib.sh"
SHAPES=qkv_proj,o_proj,gate_up_proj,down_proj

tpbal 2 --model llama3-8b-cpu --tp 1,2 --iters 8 --warmup 2 --check --out "$WORK/b"
expect_rc 0
"$PY" "$HERE/check_block.py" "$WORK/b" "$SHAPES" || fail "check_block.py"
self_compare "$WORK/b"
grep -q "^# block llama3-8b-cpu tp 2 weighted: " "$WORK/out" || fail "no block line in the table"
grep -q "TP degrees by tokens/s per rank: tp [12] [0-9]*, tp [12] [0-9]*$" "$WORK/out" ||
    fail "no ranking of the TP degrees"
grep -q "^# use for block llama3-8b-cpu, highest tokens/s per rank (throughput): " "$WORK/out" ||
    fail "no throughput use line"
grep -q "^# use for block llama3-8b-cpu, shortest step (latency): " "$WORK/out" ||
    fail "no latency use line"
# the run ends with the block's answer; its GEMMs' lines, before it, are parts, not use lines
grep "^# [a-z]" "$WORK/out" | tail -1 | grep -q "^# use for block llama3-8b-cpu, " ||
    fail "the run does not end with the block's answer: $(grep "^# [a-z]" "$WORK/out" | tail -1)"
! grep -q "^# use for [0-9]" "$WORK/out" || fail "a GEMM of the block has a use line of its own"
grep -q "^# part 512x768x512 qkv_proj alone" "$WORK/out" || fail "no part line for qkv_proj"

if [ -n "${TPBAL_PLAN:-}" ]; then
    # at the measured world the plan ends with the run's own block answer, the same configs
    # as the run's use lines; the block's GEMMs are parts, each at the split the block gave it
    "$TPBAL_PLAN" "$WORK/b" --wide >"$WORK/plan.txt" 2>&1 || fail "tpbal-plan: $(tail -3 "$WORK/plan.txt")"
    grep "^# use for block" "$WORK/out" | sed 's/^# use for block [^,]*, \([^:]*\): \([a-z]*\) at tp \([0-9]*\) .*/\1 TP \3 \2/' \
        >"$WORK/run.picks"
    grep "^# recommend for block .* as the run measured it: " "$WORK/plan.txt" |
        sed 's/.* as the run measured it: \([^T]*\) TP \([0-9]*\) \([a-z]*\) .*/\1 TP \2 \3/' >"$WORK/plan.picks"
    [ -s "$WORK/run.picks" ] && cmp -s "$WORK/run.picks" "$WORK/plan.picks" ||
        fail "the plan's block picks differ from the run's: $(cat "$WORK/run.picks" "$WORK/plan.picks")"
    grep "^# [a-z]" "$WORK/plan.txt" | tail -1 | grep -q "as the run measured it" ||
        fail "the plan does not end with the run's block answer"
    ! grep -q "^# recommend for [0-9]" "$WORK/plan.txt" || fail "a GEMM of the block recommended alone"
    grep -q "^# part 512x512x512 o_proj alone on 2 ranks: shortest step (latency) TP [12] (row " \
        "$WORK/plan.txt" || fail "o_proj's part is not at its block's split (row)"
    "$TPBAL_PLAN" "$WORK/b" --world 64 --ranks-per-node 8 --pp 1,2,4,8 --microbatches 8 \
        >"$WORK/plan.txt" 2>&1 || fail "tpbal-plan: $(tail -3 "$WORK/plan.txt")"
    grep -q "^# world plan for block llama3-8b-cpu on 64 ranks (8 per node)" "$WORK/plan.txt" ||
        fail "no world plan"
    grep -q "^# recommend for block llama3-8b-cpu on 64 ranks: TP [0-9]* x PP [0-9]* x DP " \
        "$WORK/plan.txt" || fail "no world recommendation"
    # --world alone: the world plan at its documented defaults (PP 1, 8 microbatches)
    "$TPBAL_PLAN" "$WORK/b" --world 64 --ranks-per-node 8 >"$WORK/plan.txt" 2>&1 ||
        fail "tpbal-plan --world: $(tail -3 "$WORK/plan.txt")"
    grep -q "^# world plan for block llama3-8b-cpu on 64 ranks (8 per node)" "$WORK/plan.txt" ||
        fail "no world plan with --world alone"
    "$TPBAL_PLAN" "$WORK/b" --plan-out "$WORK/plan.json" >"$WORK/plan.txt" 2>&1 ||
        fail "tpbal-plan --plan-out: $(tail -3 "$WORK/plan.txt")"
    "$PY" - "$WORK/plan.json" <<'PYEOF' || fail "the block's shard plan"
import json, sys
p = json.load(open(sys.argv[1]))
got = {(c["n"], c["k"], c["split"], c["policy"], c["tp"]) for c in p["configs"]}
want = {(n, k, s, pol, 2) for (n, k, s) in [(768, 512, "col"), (512, 512, "row"),
                                            (3584, 512, "col"), (512, 1792, "row")]
        for pol in ("even", "weighted")}
assert got == want, (got, want)
PYEOF
    tpbal 2 --model llama3-8b-cpu --tp 2 --iters 3 --warmup 1 --check \
        --shards-from "$WORK/plan.json" --out "$WORK/bp"
    expect_rc 0
    "$PY" "$HERE/check_block.py" "$WORK/bp" "$SHAPES" plan || fail "check_block.py plan"

    # leave-one-out: the TP 2 even block predicted from the other blocks' GEMMs (not asserted,
    # said so, when another process took over 25 % of the CPUs during the run: beside a busy
    # core the error was -13 to -32 % in 6 of 6 runs, doc/TESTING.md)
    loo() {
        cpu_mark
        tpbal 2 --model llama3-8b-cpu --tp 1,2 --iters 24 --warmup 3 -q --out "$WORK/loo$1"
        expect_rc 0
        local others
        others=$(cpu_others)
        if awk -v o="$others" 'BEGIN{exit !(o > 0.25)}'; then
            echo "block leave-one-out: $others of the CPUs taken by other processes"
            exit 76
        fi
        "$TPBAL_PLAN" "$WORK/loo$1" --format json >"$WORK/loo.json" || fail "tpbal-plan"
        "$PY" - "$WORK/loo.json" <<'PYEOF' || exit 75
import json, sys
v = [b for b in json.load(open(sys.argv[1]))["blocks"] if b["tp"] == 2 and b["policy"] == "even"]
print("TP 2 even block: measured %.0f us, predicted %.0f us leave-one-out: %+.1f %%" % (
    v[0]["measured_us"], v[0]["predicted_us"], 100 * v[0]["error"]))
assert abs(v[0]["error"]) <= 0.10
PYEOF
    }
    attempts "block leave-one-out" loo 4
fi

if [ -n "${TPBAL_REPORT:-}" ] && [ -n "${TPB_PYTHON_MPL:-}" ]; then
    "$TPBAL_REPORT" "$WORK/b" --out "$WORK/rep" >"$WORK/rep.txt" 2>&1 || fail "tpbal-report"
    [ -s "$WORK/rep/blocks.png" ] || fail "no block view in the report"
    grep -q "Blocks (tpbal --block llama3-8b-cpu)" "$WORK/rep/index.html" || fail "no block table"
fi

# a shape that cannot be split at tp 2 (wherever it comes): that block skipped with the reason
tpbal 2 --block --split row --shape 64x64x64,64x64x2 --tp 1,2 --granularity 2 --iters 3 --warmup 1
expect_rc 0
grep -q "^# skipped: block tp 2: dimension 2 cannot be split" "$WORK/out" || fail "no block skip line"
grep -q "^# block block tp 1 even: " "$WORK/out" || fail "the tp 1 block was not measured"

refused "--block times the shapes' GEMMs back to back as one step of fixed shards: drop --policy adaptive" \
    --model llama3-8b-cpu --policy adaptive
refused "--block times the shapes' GEMMs back to back as one step of fixed shards: drop --comm-only" \
    --block --comm-only
refused "has no split of its own" --block --shape 64x64x64,64x128x64
refused "--block: the shapes' M differ (64 and 32)" --block --split row --shape 64x64x64,32x64x64
refused "--preset and --model both given" --model llama3-8b-cpu --preset tiny
echo "block.sh: ok"
