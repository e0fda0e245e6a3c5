# cost.sh - --cost-profile: work that is not uniform along the split dimension. A file
# profile of four blocks at TP 1 and 2 with unequal given speeds and rank 1 emulated at half
# speed (the emulation probe runs a block GEMM): every split and policy
# passes --check (the block-sparse GEMMs skip the zeros, the reference has them), the cost
# policy's shards reach the optimum a dynamic programme finds (check_results.py, sharing no
# code with the bisection), and the layer's FLOPs are the blocks' non-zero parts. Bad
# profiles are refused in one line. Timing: with skew:4 and two equal ranks (--speeds 1,1)
# the cost-aware split's LB >= 0.8 (the goal, 0.9, is shown by bench/cost: 0.986 measured)
# where even and the speed-only weighted split stay at the skew's (LB <= 0.45; 0.25
# expected). The ranks are equal when both even configs' LB are within 25 % of 0.25;
# otherwise the goal is not checked (said in a line: a vCPU of this machine is at times
# 1.75x slower than the other). Five attempts, the false-failure rate in doc/TESTING.md; not
# checked (said in a line) when another process took over a quarter of the machine's CPU
# time during the run, which makes the two ranks unequal.
. "$(dirname "$0")/lib.sh"

printf '# thick and thin\n4 1\n2, 0.5\n' >"$WORK/costs"
tpbal 2 --tp 1,2 --shape 64x512x384 --cost-profile "$WORK/costs" --speeds 1,2 --check \
    --emulate-speed 1,0.5 \
    --iters 3 --warmup 1 --out "$WORK/exact"
expect_rc 0
check_results "$WORK/exact" cost-exact
grep -q "^# cost profile: $WORK/costs, 4 blocks along the split dimension" "$WORK/out" ||
    fail "no cost profile line in the header"
grep -q '"cost_profile":{"source":"'"$WORK"'/costs","costs":\[4,1,2,0.5\]}' \
    "$WORK/exact/results.jsonl" || fail "the run record lacks the cost profile"

# tpbal-plan models dense GEMMs: it refuses such a run in one line
"${TPBAL_PLAN:?}" "$WORK/exact" >"$WORK/plan.out" 2>&1 && fail "tpbal-plan took a cost profile"
grep -q "ran with --cost-profile $WORK/costs: tpbal-plan models dense GEMMs" "$WORK/plan.out" ||
    fail "tpbal-plan's refusal: $(cat "$WORK/plan.out")"

# bad input: one line, exit code 2, nothing measured
refused "--cost-profile '$WORK/none': no such file" --cost-profile "$WORK/none"
printf '1 x\n' >"$WORK/bad"
refused "block 1 is 'x', not a number" --cost-profile "$WORK/bad"
printf '1 0\n' >"$WORK/zero"
refused "the cost of block 1 is 0: costs must be finite and > 0" --cost-profile "$WORK/zero"
refused "a built-in profile is skew:R" --cost-profile skew:0.5
refused "--policy cost balances a --cost-profile" --policy cost
# more blocks than the dimension has units: every config skipped, with the reason
seq 1 100 >"$WORK/many"
tpbal 2 --tp 2 --shape 16x64x64 --cost-profile "$WORK/many" --speeds 1,1 --iters 2 --warmup 1
expect_rc 2
grep -q "^# skipped: --cost-profile $WORK/many: 100 blocks on a dimension of 64" "$WORK/out" ||
    fail "no skip line for a profile finer than the dimension"

goal() {
    cpu_mark
    tpbal 2 --tp 2 --shape 128x1024x1024 --cost-profile skew:4 --speeds 1,1 --iters 40 \
        --out "$WORK/goal$1"
    expect_rc 0
    other=$(cpu_others)
    echo "CPU time used beside the run: $(awk -v o="$other" 'BEGIN{printf "%.0f", 100 * o}') %"
    if awk -v o="$other" 'BEGIN{exit !(o > 0.25)}'; then
        # the goal is for equal ranks: a busy core moving between them makes them unequal
        echo "cost: the LB goal is not checked: another process took over 25 % of the CPUs"
        return 0
    fi
    timing_check "$WORK/goal$1" cost-lb 0.8 0.45 0.25
}
# five attempts: in a noisy hour 3 of 11 attempts failed (doc/TESTING.md)
attempts "cost-aware split LB" goal 5
