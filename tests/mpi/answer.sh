# answer.sh - the run's answer knows how sure it is (issue "answers with confidence"):
# 1. rank 1 at half speed, the policies measured side by side: weighted is "better" over
#    even at TP 2 on a paired interval below the bound, the use lines name it, and
#    tpbal-plan on the same directory recommends the same TP degree and policy for the
#    same two questions (latency, throughput);
# 2. a weighted config measured after the machine sped up (--emulate-schedule, measured
#    one after the other): a speed-up beyond the bound is "disturbed", never a use line;
# 3. --interleave off measures alone (no rounds recorded), on records the rounds.
# Timing: 1 rests on a 2x contrast (speed-up 1.3-1.5x against a 5 % tolerance and a bound
# of 1.5x), and is not checked (an inconclusive attempt, said) when another process took
# over 25 % of the CPUs during the run, when a weighted config's paired interval is wider
# than 1.35x (the run could not resolve its own speed-up), or when the ranks' speed ratio moved by more than
# 1.2x between the calibration, the even and the weighted configs or was more than 1.2x from
# the 0.5 asked for (check_results steady: two vCPUs that slow each other); 2 on a 2x one against a bound near 1x; a failed
# timing attempt is printed and tried again (five at most for 1, three for 2). False-failure rates:
# doc/TESTING.md.
. "$(dirname "$0")/lib.sh"

better() {
    d="$WORK/half$1"
    cpu_mark
    tpbal 2 --emulate-speed 1,0.5 --emulate-mode work --tp 1,2 --shape 192x768x768 \
        --split row,col --iters 30 --out "$d"
    expect_rc 0
    cat "$WORK/out"
    other=$(cpu_others)
    echo "CPU time used beside the run: $(awk -v o="$other" 'BEGIN{printf "%.0f", 100 * o}') %"
    if awk -v o="$other" 'BEGIN{exit !(o > 0.25)}'; then
        # a busy core moving between the ranks makes their speeds change 2x within a run:
        # the honest answer is then "inconclusive", which is not what this checks
        echo "answer: not checked: another process took over 25 % of the CPUs"
        exit 76
    fi
    # and the two ranks kept their speed ratio through calibration, even and weighted: on
    # this VM the vCPUs at times slow each other with no process beside the run (an even
    # col config at LB 0.72-0.79 where rank 1 does twice the work, the previous binary
    # alike), and then no weighting can follow the calibration (not asserted, said so)
    steady_gate "$d" steady 1.2 0.5
    # and the run resolved its own speed-ups: a paired interval wider than 1.35x (hi / lo)
    # cannot tell a 1.3-1.5x speed-up from 5 % (a fresh-clone run on a noisy VM: row weighted
    # 0.95x [0.67, 1.36] in a run steady by its medians): the honest verdict there is
    # "inconclusive", which is not what this checks
    "$PY" - "$d" <<'PY' || exit 76
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1] + "/results.jsonl")]
summ = [r for r in recs if r["type"] == "summary"][-1]
wide = [(p["split"], p["speedup_hi"] / p["speedup_lo"]) for a in summ["answer"]
        for p in a.get("policies", []) if a["tp"] == 2 and p["policy"] == "weighted"
        and p["speedup_lo"] and p["speedup_hi"] / p["speedup_lo"] > 1.35]
if wide:
    print("answer: not checked: the run's own intervals too wide to decide (hi/lo %s > 1.35)"
          % ", ".join("%s %.2f" % w for w in wide))
    sys.exit(1)
PY
    grep -q "weighted .* over even \[.*([0-9]* paired rounds).*: better$" "$WORK/out" || timing_failed "$d"
    grep -q "^# use for 192x768x768.*: [a-z+]* weighted at tp 2" "$WORK/out" || timing_failed "$d"
    "${TPBAL_PLAN:?}" "$d" --format json >"$WORK/plan.json" || fail "tpbal-plan on the run"
    "${TPBAL_PLAN:?}" "$d" --wide | grep "^# measured by the run: .* weighted .*: better" ||
        fail "tpbal-plan does not show the run's verdicts"
    "$PY" - "$d" "$WORK/plan.json" <<'PY' || timing_failed "$d"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1] + "/results.jsonl")]
summ = [r for r in recs if r["type"] == "summary"][-1]
plan = json.load(open(sys.argv[2]))["recommend"][0]
for q in ("latency", "throughput"):
    use = [a for a in summ["answer"] if a["kind"] == "use" and a["question"] == q][0]
    mine = plan[q]
    print("%s: tpbal %s %s tp %d; tpbal-plan %s %s tp %d" % (
        q, use["split"], use["policy"], use["tp"], mine["split"], mine["policy"], mine["tp"]))
    assert (use["tp"], use["policy"]) == (mine["tp"], mine["policy"]), q
for a in summ["answer"]:
    for p in a.get("policies", []):
        if a["tp"] == 2 and p["policy"] == "weighted":
            assert p["paired"] == "yes" and p["rounds"] >= 3, p
            assert 1.05 < p["speedup_lo"] <= p["speedup"] <= p["speedup_hi"], p
            assert p["speedup"] <= p["speedup_bound"] * 1.05, p
PY
}
attempts "better, side by side" better 5

disturbed() {
    d="$WORK/dist$1"
    # even at half speed on both ranks (calibrated so: equal), weighted after both sped up
    tpbal 2 --emulate-speed 0.5,0.5 --emulate-schedule 25:1,1 --emulate-mode work --tp 2 \
        --shape 192x768x768 --split row --iters 20 --warmup 5 --out "$d"
    expect_rc 0
    cat "$WORK/out"
    grep -q "row: weighted .* over even.*at most .*: disturbed: more than balancing can buy" \
        "$WORK/out" || timing_failed "$d"
    ! grep -q "^# use for [^:]*: [a-z+]* weighted at" "$WORK/out" ||
        fail "a disturbed speed-up became a use line"
    grep -q '"interleave_rounds":0' "$d/results.jsonl" ||
        fail "a run with --emulate-schedule was interleaved"
}
attempts "disturbed beyond the bound" disturbed

tpbal 2 --tp 2 --shape 64x256x256 --split row --iters 12 --interleave off --out "$WORK/off"
expect_rc 0
! grep -q '"interleave_rounds":[1-9]' "$WORK/off/results.jsonl" || fail "--interleave off interleaved"
grep -q "weighted .* over even" "$WORK/out" && ! grep -q "paired rounds)" "$WORK/out" ||
    fail "--interleave off: the answer claims a paired interval"
check_results "$WORK/off" fields
tpbal 2 --tp 2 --shape 64x256x256 --split row --iters 12 --out "$WORK/on"
expect_rc 0
grep -q '"interleave_rounds":3' "$WORK/on/results.jsonl" || fail "12 iterations: 3 rounds"
check_results "$WORK/on" fields
refused "--interleave 'maybe': expected on or off" --interleave maybe
echo "answer: ok"
