# plan.sh - tpbal-plan on real runs: a sweep of 3 shapes x TP {1, 2} x both splits x both
# policies on 2 ranks (rank 1 at half speed), five times; every config predicted from models
# fitted without it (leave-one-out) against the median of its five measured medians: median
# |error| <= 5 % and p90 <= 15 % (the issue's goal). The text and JSON outputs, a shard plan
# (--plan-out) and bad input are checked without timing.
#
# Timing: five runs pooled, because one run's config is now and then 1.5-2x slower for its
# whole measurement on this 2-vCPU kind (a rank's core shared); the median over the runs
# keeps one such config from failing the goal, and the goal is held over the configs whose
# reference is reliable (the middle three of the five runs within 10 %; at least 12 of 18,
# else the attempt is inconclusive). A failed attempt is printed and tried again (five
# attempts at most; three until a fresh clone on 2026-12-02 had one attempt at a median of
# 5.0 % and two inconclusive); the false-failure rates are in doc/TESTING.md. Beside a process that
# takes over a quarter of the machine's CPU time the goal is not checked (said in a line):
# the models assume that each rank keeps its speed, which a busy core moving between the
# two cores breaks (errors of 15-40 %, measured).
. "$(dirname "$0")/lib.sh"
PLAN=${TPBAL_PLAN:?}
SWEEP="--emulate-speed 1,0.5 --emulate-mode work --tp 1,2 --shape 64x512x512,128x256x256,96x384x384 --iters 60"

attempt() {
    dirs=""
    me=$(sh -c 'echo $PPID') # this attempt's shell
    before=$(machine_cpu) ours=$(children_cpu "$me") t0=$(date +%s.%N)
    for r in 1 2 3 4 5; do
        tpbal 2 $SWEEP --out "$WORK/a$1-$r"
        expect_rc 0
        dirs="$dirs $WORK/a$1-$r"
    done
    echo "$(children_cpu "$me") $ours $(date +%s.%N) $t0" >"$WORK/time"
    # the models assume each rank keeps its speed through the runs: a process beside the test
    # that takes CPU (a busy core moving between the two) breaks that, and the goal cannot
    # be checked; the share of the machine's CPU time the runs did not use says so
    other=$(awk -v b="$before" -v a="$(machine_cpu)" -v n="$(nproc)" \
        'NF == 4 {o = (a - b) - ($1 - $2); printf "%.2f\n", o / (($3 - $4) * n)}' "$WORK/time")
    [ -n "$other" ] || fail "no CPU times of the runs: $(cat "$WORK/time")"
    echo "CPU time used beside the runs: $(awk -v o="$other" 'BEGIN{printf "%.0f", 100 * o}') % of the machine's"
    "$PLAN" $dirs >"$WORK/plan.txt" 2>&1 || { cat "$WORK/plan.txt"; fail "tpbal-plan"; }
    cat "$WORK/plan.txt"
    "$PLAN" --format json $dirs >"$WORK/plan.json" || fail "tpbal-plan --format json"
    if awk -v o="$other" 'BEGIN{exit !(o > 0.25)}'; then
        echo "plan: the goal is not checked: another process took over 25 % of the CPUs"
        return 0
    fi
    rc=0
    "$PY" - "$WORK/plan.json" $dirs <<'PY' || rc=$?
import json, statistics, sys
d = json.load(open(sys.argv[1]))
meds = {}  # (tp, split, policy, shape) -> the five runs' median steps
for run in sys.argv[2:]:
    for line in open(run + "/results.jsonl"):
        c = json.loads(line)
        if c["type"] == "config":
            key = (c["tp"], c["split"], c["policy"], "%dx%dx%d" % (c["m"], c["n"], c["k"]))
            meds.setdefault(key, []).append(c["step_us"]["median"])
rows = d["validation"]["configs"]
assert len(rows) == 18 and all(r["error"] is not None for r in rows), rows
# a reference is reliable when the middle three of its five runs agree within 10 %
def reliable(r):
    m = sorted(meds[(r["tp"], r["split"], r["policy"], r["shape"])])[1:4]
    return m[-1] / m[0] - 1 <= 0.10
ok = [abs(r["error"]) for r in rows if reliable(r)]
print("leave-one-out: %d of 18 configs with a reliable reference (five runs' middle three "
      "within 10 %%)" % len(ok))
if len(ok) < 12:
    print("inconclusive: this machine's identical runs disagree too much to check a 5 % goal")
    sys.exit(3)
ok.sort()
med, p90 = statistics.median(ok), ok[min(len(ok) - 1, -(-9 * len(ok) // 10) - 1)]
print("  over them: median |error| %.1f %%, p90 %.1f %%, largest %.1f %%" % (
    100 * med, 100 * p90, 100 * ok[-1]))
assert med <= 0.05 and p90 <= 0.15, (med, p90)
PY
    [ $rc -eq 0 ] || exit $((rc == 3 ? 76 : 75))
}
# five attempts (lib.sh), three while none failed: a goal missed over reliable references is
# retried, then fails;
# attempts whose references were not reliable (the machine's identical runs disagreeing by
# > 10 %) are inconclusive and retried, and if no attempt had reliable references the goal is
# not asserted (said in a line): such a machine cannot tell a model's 5 % from its own noise
attempts "plan" attempt 5 3

# one run: every config has a validation row with its error, predictions, a recommendation
d="$WORK/a1-1"
[ -d "$d" ] || d=$(ls -d "$WORK"/a*-1 | head -1)
"$PLAN" "$d" >"$WORK/one.txt" || fail "tpbal-plan on one run"
[ "$(grep -cE '^ +[0-9]+ +[12] (row|col) ' "$WORK/one.txt")" -eq 18 ] || fail "not 18 validation rows"
grep -q "^# median |error| " "$WORK/one.txt" || fail "no validation summary"
grep -q "^# recommend for 64x512x512 on 2 ranks: shortest step (latency) TP " "$WORK/one.txt" || fail "no recommendation"
# a world that was not run: predictions flagged as extrapolated, the layout TP x rest = P
"$PLAN" "$d" --world 8 --ranks-per-node 4 --tp 1,2,4 --shape 64x512x512 --wide >"$WORK/w8.txt" ||
    fail "--world 8"
# by default every line fits 120 columns piped (the recommendation's line folds)
"$PLAN" "$d" --world 8 --ranks-per-node 4 --tp 1,2,4 --shape 64x512x512 >"$WORK/w8n.txt" &&
    [ "$(awk 'length($0) > 120' "$WORK/w8n.txt" | wc -l)" -eq 0 ] || fail "a tpbal-plan line over 120"
grep -qE "^ +4 packed +row +weighted +64x512x512 +[0-9.]+ [mu]?s\*" "$WORK/w8.txt" || fail "TP 4 not predicted as an extrapolation"
grep -q "on 8 ranks: shortest step (latency) TP [124] .* the other [248]-way for DP/PP" "$WORK/w8.txt" || fail "no layout for 8 ranks"
# --world without --ranks-per-node says what it assumed, and how to ask for more; with it,
# nothing to say
"$PLAN" "$d" --world 8 --tp 1,2,4 --shape 64x512x512 --wide >"$WORK/w8a.txt" || fail "--world 8 alone"
grep -q "^# assumed: nodes of 2 ranks, as measured (--ranks-per-node N plans nodes of N)" \
    "$WORK/w8a.txt" || fail "--world alone: the nodes assumed not said"
! grep -q "^# assumed" "$WORK/w8.txt" || fail "an assumption said where --ranks-per-node was given"
# the shard plan: schema, groups that cover the split dimension; TP 2 alone, so that the read
# back below has groups to measure (beside a busy core the recommendation was TP 1, which
# has no shards to plan, in 10 of 10 runs)
"$PLAN" "$d" --tp 2 --plan-out "$WORK/shards.json" >/dev/null || fail "--plan-out"
"$PY" - "$WORK/shards.json" <<'PY' || fail "the shard plan"
import json, sys
p = json.load(open(sys.argv[1]))
assert p["schema"] == "tpbal-plan/1", p["schema"]
for c in p["configs"]:
    dim = c["k"] if c["split"] == "row" else c["n"]
    for g in c["groups"]:
        assert sum(g["shards"]) == dim and g["offsets"][0] == 0, g
        assert all(a + s == b for a, s, b in zip(g["offsets"], g["shards"], g["offsets"][1:]))
        assert len(g["world_ranks"]) == c["tp"] == len(g["hosts"]) == len(g["speeds_gflops"])
print("shard plan: %d configs" % len(p["configs"]))
PY
# read back: a run with --shards-from measures exactly the planned shards, without calibrating
# them (speeds "plan"); a plan for other ranks is refused in one line, nothing written
c=$("$PY" -c "import json,sys; c=json.load(open(sys.argv[1]))['configs'][0]; print('%dx%dx%d %s %s %d' % (c['m'], c['n'], c['k'], c['split'], c['policy'], c['tp']))" "$WORK/shards.json")
set -- $c
tpbal 2 --emulate-speed 1,0.5 --shape "$1" --split "$2" --policy "$3" --tp "$4" --iters 5 \
    --shards-from "$WORK/shards.json" --out "$WORK/replay"
expect_rc 0
"$PY" - "$WORK/shards.json" "$WORK/replay" <<'PY' || fail "the plan read back"
import json, sys
plan = json.load(open(sys.argv[1]))["configs"][0]
cfg = [json.loads(l) for l in open(sys.argv[2] + "/results.jsonl")][1]
want = [s for g in plan["groups"] for s in g["shards"]]
print("planned shards %s, measured with %s (%s)" % (want, cfg["shards"], cfg["speed_source"]))
assert cfg["shards"] == want and cfg["speed_source"] == "plan", cfg
assert cfg["world_ranks"] == [w for g in plan["groups"] for w in g["world_ranks"]]
PY
"$PY" - "$WORK/shards.json" "$WORK/other.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
for c in p["configs"]:
    for g in c["groups"]:
        g["world_ranks"] = list(reversed(g["world_ranks"]))  # not this run's order
json.dump(p, open(sys.argv[2], "w"))
PY
tpbal 2 --shape "$1" --split "$2" --policy "$3" --tp "$4" --iters 2 --shards-from "$WORK/other.json" \
    --out "$WORK/refused"
expect_rc 2
[ "$(grep -c '^tpbal' "$WORK/err")" -eq 1 ] && grep -q "has no group of world ranks 0.. in this run's order" "$WORK/err" ||
    fail "a plan for other ranks: $(cat "$WORK/err")"
[ ! -e "$WORK/refused/results.jsonl" ] || fail "a refused run wrote results"
# a plan that plans none of the run's configs, or shards its policy does not make: refused
# before anything is written (not ignored, not applied)
tpbal 2 --shape 64x64x64 --tp 2 --iters 2 --shards-from "$WORK/shards.json" --out "$WORK/refused"
expect_rc 2
grep -q "plans none of this run's configs" "$WORK/err" || fail "a plan of other configs: $(cat "$WORK/err")"
"$PY" - "$WORK/shards.json" "$WORK/uneven.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
c = p["configs"][0]
sh = c["groups"][0]["shards"]
c["policy"] = "even"
sh[0], sh[-1] = sum(sh) - len(sh) + 1, 1  # "even" 63/1, say
json.dump(p, open(sys.argv[2], "w"))
PY
tpbal 2 --shape "$1" --split "$2" --policy even --tp "$4" --iters 2 --shards-from "$WORK/uneven.json" \
    --out "$WORK/refused"
expect_rc 2
[ "$(grep -c '^tpbal' "$WORK/err")" -eq 1 ] && grep -q "not the even split" "$WORK/err" ||
    fail "an even plan of uneven shards: $(cat "$WORK/err")"
[ ! -e "$WORK/refused/results.jsonl" ] || fail "a refused run wrote results"
# a plan that recommends TP 1 is usable by a TP 1 run (it was "plans none of this run's configs")
tpbal 2 --tp 1 --shape 64x128x128 --iters 3 --out "$WORK/p1"
expect_rc 0
"$PLAN" "$WORK/p1" --plan-out "$WORK/p1.json" >/dev/null || fail "tpbal-plan --plan-out of a TP 1 run"
# at the measured world the picks are among the TP degrees the run measured, as its answer;
# a better prediction elsewhere is said apart, as what to measure
"$PLAN" "$WORK/p1" --wide >"$WORK/p1.txt" || fail "tpbal-plan of a TP 1 run"
grep -q "^# recommend for 64x128x128 on 2 ranks: shortest step (latency) TP 1 (.*highest layer rate (throughput) TP 1 (" \
    "$WORK/p1.txt" || fail "a pick at a TP degree the run did not measure: $(grep "^# recommend" "$WORK/p1.txt")"
! grep "^# not measured" "$WORK/p1.txt" | grep -vq "at TP 2 (.*measure it (tpbal --tp 2)" ||
    fail "the unmeasured line: $(grep "^# not measured" "$WORK/p1.txt")"
tpbal 2 --tp 1 --shape 64x128x128 --iters 3 --shards-from "$WORK/p1.json" --out "$WORK/p1r"
expect_rc 0
tpbal 2 --shape 64x64x64 --shards-from "$WORK/none.json"
expect_rc 2
grep -q "no such file" "$WORK/err" || fail "--shards-from a missing file"

# bad input: one line, exit 2
"$PLAN" "$WORK/none" >/dev/null 2>"$WORK/err"
[ $? -eq 2 ] && [ "$(wc -l <"$WORK/err")" -eq 1 ] || fail "a missing directory"
"$PLAN" "$d" --world 0 >/dev/null 2>"$WORK/err"
[ $? -eq 2 ] && grep -q "from 1 to" "$WORK/err" || fail "--world 0"
echo "plan: ok"
