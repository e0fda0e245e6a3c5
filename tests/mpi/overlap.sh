# overlap.sh - --overlap chunked: every chunk count gives the serial result (--check, on the
# row split, col + all-gather-v with even and weighted shards, col + all-reduce); the
# figures' accounting (efficiency, speed-up and the ratios are what they say; T_overlap >=
# 0.8 max(T_gemm alone, exposed)) and the exposed communication and T_overlap recomputed from
# the trace's per-chunk spans within 5 % (check_results.py overlap); the trace's chunk spans
# inside their iteration (check_trace.py); the answer's overlap lines; bad input refused.
. "$(dirname "$0")/lib.sh"

run_overlap() { # DIR ARGS... (weighted by --speeds 1,2 unless ARGS say --policy even)
    local d=$1 sp=(--speeds 1,2)
    shift
    [[ " $* " != *" --policy even "* ]] || sp=()
    tpbal 2 --tp 2 --shape 64x384x256 --overlap none,chunked --chunks 1,3,8 --check \
        --iters 6 --warmup 2 --trace-iters all "${sp[@]}" --out "$d" "$@"
    expect_rc 0
    check_results "$d" overlap 1,3,8
    timing_check "$d" overlap-bound
    check_trace "$d" 2
    grep -q "^#     overlap 3 chunks: serial .* us, overlapped .* hidden" "$WORK/out" || fail "no overlap line"
    grep -Eq "^#   overlap 64x384x256 tp 2 (row|col) even: (best at|overlap does not pay)" \
        "$WORK/out" || fail "no overlap answer"
}
attempt() {
    run_overlap "$WORK/ov$1"
    run_overlap "$WORK/ar$1" --split col --col-collective allreduce --policy even
}
# T_overlap >= 0.8 x T_gemm alone is the one timing assertion (timing_check): an attempt
# that fails it is retried; everything else fails at once
attempts "overlap accounting" attempt

refused "--chunks and --overlap-polls need --overlap chunked" --chunks 2
refused "--overlap chunked times every chunk of a dense layer: drop --cost-profile" \
    --overlap chunked --cost-profile skew:2
refused "--overlap chunked times every chunk of a dense layer: drop --policy adaptive" \
    --overlap chunked --policy adaptive
refused "--comm-only times collectives without GEMMs: drop --overlap chunked" --comm-only \
    --overlap chunked
refused "--chunks '0'" --overlap chunked --chunks 0
# more chunks than rows: that config is skipped with the reason, the others run
tpbal 2 --tp 2 --shape 4x64x64 --overlap chunked --chunks 2,8 --iters 2 --warmup 1 --speeds 1,1
expect_rc 0
grep -q "^# skipped: --chunks 8: M = 4 has fewer rows than chunks" "$WORK/out" ||
    fail "no skip line for more chunks than rows"
# a run of chunked configs only counts them (the record said 0 measured); a repeated
# chunk count is measured once, with a note
tpbal 2 --tp 2 --split row --policy even --shape 16x64x64 --overlap chunked --chunks 2,2 \
    --iters 2 --warmup 1 --out "$WORK/onlychunked"
expect_rc 0
grep -q "^tpbal: note: --chunks repeats 2: measured once" "$WORK/err" || fail "no note for --chunks 2,2"
"$PY" - "$WORK/onlychunked/results.jsonl" <<'PY' || fail "the run record's count of chunked configs"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
run = [r for r in recs if r["type"] == "run"][-1]
cfgs = [r for r in recs if r["type"] == "config"]
assert len(cfgs) == 1 and cfgs[0]["chunks"] == 2 and run["configs"] == 1, (len(cfgs), run["configs"])
PY

# tpbal-plan models the serial configs only (chunked ones interleave compute and transfer)
d=$(ls -d "$WORK"/ov* | head -1)
"${TPBAL_PLAN:?}" "$d" >"$WORK/plan.out" 2>&1 || fail "tpbal-plan: $(tail -2 "$WORK/plan.out")"
grep -q "^tpbal-plan: $d, 4 configs measured on 2 ranks" "$WORK/plan.out" ||
    fail "tpbal-plan did not leave the chunked configs out: $(head -1 "$WORK/plan.out")"

# the report's overlap plot: one line per split and policy, the records' figures
MPL=${TPB_PYTHON_MPL:-}
if [ -n "${TPBAL_REPORT:-}" ] && [ -n "$MPL" ] && "$MPL" -c "import matplotlib" 2>/dev/null; then
    d=$(ls -d "$WORK"/ov* | head -1)
    "$TPBAL_REPORT" "$d" >"$WORK/rep" 2>&1 || fail "tpbal-report: $(tail -2 "$WORK/rep")"
    [ -s "$d/report/overlap.png" ] || fail "no overlap plot"
    "$PY" - "$d" <<'PY' || fail "the overlap plot's numbers are not the records'"
import json, sys
d = sys.argv[1]
plot = json.load(open(d + "/report/plots.json"))["overlap"]
cfgs = [json.loads(l) for l in open(d + "/results.jsonl")]
cfgs = [c for c in cfgs if c.get("type") == "config" and c["chunks"]]
assert len(plot) == 4, plot.keys()  # row and col, even and weighted
for c in cfgs:
    key = "tp%d %s %s %dx%dx%d" % (c["tp"], c["split"], c["policy"], c["m"], c["n"], c["k"])
    i = plot[key]["chunks"].index(c["chunks"])
    assert plot[key]["efficiency"][i] == c["overlap_figures"]["efficiency"], (key, c["id"])
print("overlap plot: %d lines, the records' figures" % len(plot))
PY
else
    echo "overlap: the report's plot not checked (no tpbal-report or matplotlib)"
fi
