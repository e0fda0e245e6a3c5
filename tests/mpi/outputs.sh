# outputs.sh - result files, calibration files, presets, --timeline off, --help.
. "$(dirname "$0")/lib.sh"

# a preset with natural splits, 2 ranks
d="$WORK/preset"
tpbal 2 --preset tiny --iters 3 --out "$d"
expect_rc 0
check_results "$d" fields
check_results "$d" no-slurm # outside Slurm: null, nothing invented
check_results "$d" count 9 # tp 1: 3 shapes; tp 2: 3 shapes x 2 policies
ls "$d"/trace-008.json >/dev/null || fail "no trace file for the last config"

# calibration file: the first run writes it, the second reuses it
cal="$WORK/cal/speeds.csv"
mkdir -p "$WORK/cal"
tpbal 2 --tp 2 --shape 64x128x128 --policy weighted --iters 2 --calibration-file "$cal" \
    --out "$WORK/c1"
expect_rc 0
head -1 "$cal" | grep -qx 'split,m,n,k,tp,dtype,rank,host,gflops,spread,samples' || fail "calibration header"
[ "$(wc -l <"$cal")" -eq 5 ] || fail "calibration file: expected 4 entries"
check_results "$WORK/c1" source calibration
tpbal 2 --tp 2 --shape 64x128x128 --policy weighted --iters 2 --calibration-file "$cal" \
    --out "$WORK/c2"
expect_rc 0
check_results "$WORK/c2" source file

# --timeline off: no per-iteration records, still a step time
tpbal 2 --tp 2 --shape 64x128x128 --iters 3 --timeline off --out "$WORK/off"
expect_rc 0
ls "$WORK/off"/trace-*.json >/dev/null 2>&1 && fail "--timeline off wrote traces"
"$PY" -c "
import json,sys
c=[json.loads(l) for l in open('$WORK/off/results.jsonl')][1]
assert c['step_us']['median'] > 0 and c['compute_us'][0] is None, c
" || fail "--timeline off results"

# help and version
timeout 60 $MPIRUN -np 2 "$TPBAL" --help >"$WORK/out" 2>&1 || fail "--help"
[ "$(grep -c '^Usage:' "$WORK/out")" -eq 1 ] || fail "--help printed by more than rank 0"
grep -q -- "--inject-delay" "$WORK/out" || fail "--help lacks the fault injection options"
"$TPBAL" --version | grep -q "^tpbal " || fail "--version"
# --bind core: each rank on a core of its own, recorded; more ranks than cores refused
d="$WORK/bind"
tpbal 2 --bind core --tp 2 --shape 32x64x64 --split row --policy even --iters 2 --out "$d"
expect_rc 0
"$PY" - "$d" <<'PY' || fail "cpusets not recorded"
import json, sys
run = json.loads(open(sys.argv[1] + "/results.jsonl").readline())
sets = [r["cpuset"] for r in run["ranks"]]
print("cpusets", sets, "node", run["ranks"][0]["node"])
assert len(set(sets)) == 2 and all("-" not in c and "," not in c for c in sets), sets
assert run["ranks"][0]["node"]["cores"] >= 2
PY
cores=$(nproc)
tpbal $((cores + 1)) --bind core --shape 32x32x32
expect_rc 2
grep -q "ranks on this node but it has $cores cores" "$WORK/err" || fail "--bind core over cores"

# --trace-iters: a window of 4 around the slowest step, plus the slowest 4 spikes outside it:
# the 30 ms stalls of every 10th iteration (4 of the 40) are in the records, the slowest step
# is in the trace, and no spike left out is slower than one kept outside the window (on a
# quiet machine: the four stalls; beside other tests a spike of their own may be slower than
# a stall, as on a fresh clone's first phase: kept 17 and 19 over a left-out stall at 18); the
# records keep every iteration
d="$WORK/window"
tpbal 2 --tp 2 --shape 32x64x64 --split row --policy even --iters 40 --warmup 2 \
    --inject-delay 1:30000:10 --trace-iters 4 --out "$d"
expect_rc 0
check_trace "$d" 2 4
"$PY" - "$d" <<'PY' || fail "trace window"
import json, sys
d = sys.argv[1]
cfg = [json.loads(l) for l in open(d + "/results.jsonl")][1]
tr = json.load(open(d + "/trace-000.json"))["otherData"]
stalls = [s["iter"] for s in cfg["spikes"] if s["step_us"] > 25000]
print("kept", tr["kept"], "stalls", stalls)
assert cfg["iters"] == 40 and tr["iters_kept"] <= 8 and len(stalls) >= 4, (tr, stalls)
step = {s["iter"]: s["step_us"] for s in cfg["spikes"]}
kept, top = set(tr["kept"]), max(step, key=step.get)
assert top in kept, "the slowest step left out of the trace"
near = set(range(top - 3, top + 4))  # where the window around it may lie
out = [step[i] for i in kept - near if i in step]
left = [i for i in step if i not in kept]
assert not out or all(step[i] <= min(out) for i in left), "a spike left out, slower than one kept"
PY
# --trace-per run: one trace.json, every config on the run's time axis (even then
# weighted on the same rank tracks), arrows from each last arrival, comm spans with their
# collective and bytes; the report reads it as a config's own trace
d="$WORK/perrun"
# (30 ms a step on rank 1: beside other tests, under the sanitizers, 3 ms was within what a
# descheduled rank 0 loses, and an arrow started at rank 0)
tpbal 2 --tp 1,2 --shape 32x64x64 --iters 6 --inject-delay 1:30000 --trace-per run --out "$d"
expect_rc 0
ls "$d"/trace-*.json >/dev/null 2>&1 && fail "--trace-per run wrote per-config traces"
check_trace "$d" 2
check_results "$d" fields
"$PY" - "$d" <<'PY' || fail "the run's trace"
import json, sys
d = sys.argv[1]
cfgs = [json.loads(l) for l in open(d + "/results.jsonl") if '"config"' in l]
cfgs = [c for c in cfgs if c["type"] == "config"]
tr = json.load(open(d + "/trace.json"))
infos = tr["otherData"]["configs"]
assert [i["config"] for i in infos] == [c["id"] for c in cfgs], (infos, cfgs)
first = {}
for e in tr["traceEvents"]:
    if e.get("ph") == "X":
        first.setdefault(e["args"]["config"], e["ts"])
starts = [first[c["id"]] for c in cfgs]
assert starts == sorted(starts), ("configs out of time order", starts)
flows = [e for e in tr["traceEvents"] if e.get("ph") == "s"]
assert all(e["tid"] == 1 for e in flows) and flows, "the arrows start at the delayed rank"
print("%d configs in one trace, %d arrows from rank 1" % (len(infos), len(flows)))
PY
if [ -n "${TPBAL_REPORT:-}" ] && "${TPB_PYTHON_MPL:-false}" -c "import matplotlib" 2>/dev/null; then
    "$TPBAL_REPORT" "$d" >"$WORK/rep.out" 2>&1 || { cat "$WORK/rep.out"; fail "tpbal-report on a run's trace"; }
    grep -q "gantt" "$WORK/rep.out" || fail "no Gantt chart from the run's trace"
fi
# one answer in every view (issue 44): tpbal's use lines (the summary record), tpbal-plan's
# recommendation and the report's headline on the same directories pick the same TP degree,
# split and policy for both questions: measured beats predicted, so this holds by
# construction, whatever the timings (equal ranks, and rank 1 at half speed)
views() {
    "${TPBAL_PLAN:?}" "$1" --format json >"$WORK/views.json" || fail "tpbal-plan on $1"
    "$PY" - "$1" "$WORK/views.json" "$HERE/../../src/tools" <<'PY' || fail "the views disagree on $1"
import json, sys
sys.path.insert(0, sys.argv[3])
import tpbal_headline as hl
recs = [json.loads(l) for l in open(sys.argv[1] + "/results.jsonl")]
summ = [r for r in recs if r["type"] == "summary"][-1]
plan = {(r["m"], r["n"], r["k"]): r for r in json.load(open(sys.argv[2]))["recommend"]}
heads = [t for k, t in hl.answers(summ, {"ranks": []}) if k == "use"]
for use in (a for a in summ["answer"] if a["kind"] == "use"):
    mine = plan[(use["m"], use["n"], use["k"])][use["question"]]
    pick = lambda a: (a["tp"], a["split"], a["sequence_parallel"], a["policy"])
    print("%s: tpbal %s; tpbal-plan %s (%s)" % (use["question"], pick(use), pick(mine),
                                               mine["basis"]))
    assert pick(use) == pick(mine) and mine["basis"] == "measured", use["question"]
    said = "Use %s %s at TP %s" % (use["split"], use["policy"], use["tp"])
    assert any(h.startswith(said) for h in heads), (said, heads)
PY
}
for speeds in 1,1 1,0.5; do
    tpbal 2 --tp 1,2 --shape 64x192x128 --emulate-speed "$speeds" --iters 6 --out "$WORK/v$speeds"
    expect_rc 0
    views "$WORK/v$speeds"
done
# and a --budget run's (its sets measured again while open: the same rule picks)
tpbal 2 --tp 1,2 --shape 64x192x128 --iters 6 --budget 3 --out "$WORK/vbudget"
expect_rc 0
views "$WORK/vbudget"

tpbal 2 --tp 2 --shape 32x64x64 --iters 2 --trace-iters 0
expect_rc 2
grep -q "expected all, auto or an integer from 1" "$WORK/err" || fail "--trace-iters 0"
echo "outputs: ok"
