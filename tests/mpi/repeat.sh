# repeat.sh - --repeat N (issue 42): N passes of the whole sweep in one launch, each a run of
# its own in DIR/pass-K, and repeat.json's answer over them recomputed from the passes'
# records (check_repeat.py: the steps, the verdicts by the pooled or the by-pass rule, the
# pooled straggler blocks); with --block, --budget and on the GPU stand-in; bad values and
# the wrong directory refused in one line; a stop between passes leaves the passes done and
# a repeat.json that says so; tpbal-compare of two --repeat runs takes a pass as the unit.
# Nothing here asserts a timing or a verdict's value: every check holds on any noise.
. "$(dirname "$0")/lib.sh"
COMPARE=${TPBAL_COMPARE:?}
REPORT=${TPBAL_REPORT:?}

refused "expected an integer from 1 to 64" --repeat 0
refused "expected an integer from 1 to 64" --repeat 65
refused "expected an integer from 1 to 64" --repeat two

tpbal 2 --dry-run --tp 2 --split row --shape 128x256x256 --repeat 3
expect_rc 0
grep -q "dry run: --repeat 3: all of the above 3 times" "$WORK/out" || fail "no dry-run line"

args=(--tp 2 --split row,col --shape 128x256x256 --iters 12 --warmup 2)
tpbal 2 "${args[@]}" --emulate-speed 1,0.9 --repeat 3 --out "$WORK/r"
expect_rc 0
for k in 1 2 3; do
    grep -q "^# pass $k of 3" "$WORK/out" || fail "no pass $k line"
done
grep -q "^# over 3 of 3 passes" "$WORK/out" || fail "no answer over the passes"
grep -q "^#   run to run: a config's median step moved by" "$WORK/out" || fail "no run-to-run line"
"$PY" "$HERE/check_repeat.py" "$WORK/r" 3 || fail "check_repeat.py"
[ ! -e "$WORK/r/results.jsonl" ] || fail "a results.jsonl beside the passes"

# the answer over the passes ends the run: its use lines, the last of the output
grep -q "^# use for 128x256x256 over 3 passes, shortest step (latency): " "$WORK/out" ||
    fail "no use line over the passes"
grep "^# [a-z]" "$WORK/out" | tail -1 | grep -q "^# use for 128x256x256 over 3 passes, " ||
    fail "the run does not end with the use lines over the passes"
# the tools read the folder: the report's answer and tpbal-plan's picks are the run's over
# its passes (each pass is still a run of its own)
"$REPORT" "$WORK/r" >"$WORK/rep.out" 2>&1 || fail "tpbal-report of a --repeat dir: $(tail -2 "$WORK/rep.out")"
"$PY" - "$WORK/r" <<'PYEOF' || fail "the report's answer is not the run's over its passes"
import html, json, re, sys
d = sys.argv[1]
use = [u for u in json.load(open(d + "/repeat.json"))["use"] if u["question"] == "latency"][0]
page = html.unescape(open(d + "/report/index.html").read())
want = "Use %s %s at TP %d for 128x256x256: " % (use["split"], use["policy"], use["tp"])
assert want in page, want
assert "A --repeat run of 3 passes: the answer above is the one over the passes" in page
PYEOF
"$REPORT" "$WORK/r/pass-2" >/dev/null || fail "tpbal-report of a pass"
if [ -n "${TPBAL_PLAN:-}" ]; then
    "$TPBAL_PLAN" "$WORK/r" --format json >"$WORK/plan.json" 2>"$WORK/plan.err" ||
        fail "tpbal-plan of a --repeat dir: $(tail -2 "$WORK/plan.err")"
    "$PY" - "$WORK/r" "$WORK/plan.json" <<'PYEOF' || fail "tpbal-plan's picks are not the run's over its passes"
import json, sys
use = json.load(open(sys.argv[1] + "/repeat.json"))["use"]
plan = json.load(open(sys.argv[2]))["recommend"]
for q in ("latency", "throughput"):
    u = [x for x in use if x["question"] == q][0]
    p = plan[0][q]
    if u["tp"] > 1:  # at TP 1 the split changes nothing: any TP 1 pick is the same
        assert (p["tp"], p["split"], p["policy"]) == (u["tp"], u["split"], u["policy"]), (q, p, u)
    else:
        assert p["tp"] == 1, (q, p, u)
    if u.get("sure"):
        assert plan[0][q + "_sure"]["sure"] == u["sure"], (plan[0][q + "_sure"], u)
PYEOF
fi
"$COMPARE" --wide "$WORK/r" "$WORK/r" >"$WORK/cmp.out" 2>&1 || fail "a --repeat run against itself"
grep -q "a run as the unit" "$WORK/cmp.out" || fail "compare of --repeat runs: no pass-unit interval"
"$COMPARE" --wide "$WORK/r/pass-1" "$WORK/r/pass-2" >"$WORK/cmp1.out" 2>&1
grep -q "single runs on both sides: a change below" "$WORK/cmp1.out" || fail "single runs: not said"

# the directory: a second --repeat run needs --force; single runs and --repeat runs keep apart
tpbal 2 "${args[@]}" --repeat 2 --out "$WORK/r"
expect_rc 2
grep -q "holds the passes of an earlier --repeat run" "$WORK/err" || fail "no refusal of the old passes"
tpbal 2 "${args[@]}" --out "$WORK/r"
expect_rc 2
grep -q "a single run goes into a directory of its own" "$WORK/err" || fail "single run into passes"
tpbal 2 "${args[@]}" --out "$WORK/one"
expect_rc 0
tpbal 2 "${args[@]}" --repeat 2 --out "$WORK/one"
expect_rc 2
grep -q "a --repeat run goes into a directory of its own" "$WORK/err" || fail "passes into a single run"
tpbal 2 "${args[@]}" --repeat 2 --force --out "$WORK/r" # pass-3 would stay, stale: refused
expect_rc 2
grep -q "holds pass-3 of an earlier --repeat run" "$WORK/err" || fail "a stale pass-3 accepted"
tpbal 2 "${args[@]}" --repeat 3 --force --out "$WORK/r"
expect_rc 0
"$PY" "$HERE/check_repeat.py" "$WORK/r" 3 || fail "check_repeat.py (--force)"

# --block and --budget: each pass its own blocks and budget
tpbal 2 --tp 2 --block --split row --shape 128x256x256,128x256x512 --iters 12 --warmup 2 \
    --repeat 2 --budget 10 --out "$WORK/blk"
expect_rc 0
"$PY" "$HERE/check_repeat.py" "$WORK/blk" 2 || fail "check_repeat.py (--block)"
grep -q '"kind": *"block"' "$WORK/blk/repeat.json" || fail "no block in repeat.json"

# --fleet: each pass a qualification, the nodes over the passes (whether this machine's one
# node is excluded in a pass is its noise's: the counts are checked against the passes'
# fleet.json either way; test_fleet.c has the rule on known lists)
tpbal 2 --fleet --shape 128x128x128 --fleet-bytes 256K --repeat 2 --out "$WORK/fl"
expect_rc 0
grep -q "^# over 2 of 2 passes: " "$WORK/out" || fail "no fleet answer over the passes"
grep -q "^# exclude over the passes: " "$WORK/out" || fail "no exclude line over the passes"
for p in 1 2; do [ -s "$WORK/fl/pass-$p/fleet.json" ] || fail "no fleet.json in pass $p"; done
"$PY" - "$WORK/fl" <<'PYEOF' || fail "the fleet's repeat.json"
import json, sys
d = sys.argv[1]
rep = json.load(open(d + "/repeat.json"))
assert rep["kind"] == "fleet" and rep["passes_done"] == 2 and rep["status"] == "finished", rep
# every node a pass excluded is counted once per pass that excluded it
seen = {}
for p in rep["pass_dirs"]:
    f = json.load(open("%s/%s/fleet.json" % (d, p)))
    for h in f["exclude"]:
        seen[h] = seen.get(h, 0) + 1
assert {n["host"]: n["excluded_in"] for n in rep["nodes"]} == seen, (rep["nodes"], seen)
want = [h for h, k in seen.items() if 2 * k > 2]
assert rep["exclude"] == want, (rep["exclude"], want)
assert rep["slurm_exclude"] == ("--exclude=" + ",".join(want) if want else None), rep
PYEOF

# a stop in the second pass: the first stays whole, repeat.json says "interrupted" with the
# passes done (it said "running" for ever)
d="$WORK/stop"
"$TPBAL" --tp 1 --shape 128x256x256 --iters 3000 --warmup 2 --repeat 3 --out "$d" >"$WORK/out" 2>"$WORK/err" &
pid=$!
for _ in $(seq 1 600); do [ -e "$d/pass-2" ] && break; sleep 0.05; done
kill -TERM "$pid"
wait "$pid"
rc=$?
[ $rc -eq 143 ] || fail "a stop in pass 2: exit $rc, expected 143"
"$PY" - "$d" <<'PYEOF' || fail "the stopped --repeat run's files"
import json, sys
d = sys.argv[1]
rep = json.load(open(d + "/repeat.json"))
assert rep["status"] == "interrupted" and 1 <= rep["passes_done"] < 3, rep
assert rep["pass_dirs"] == ["pass-%d" % (k + 1) for k in range(rep["passes_done"])], rep
first = json.loads(open(d + "/pass-1/results.jsonl").readline())
assert first["status"] == "finished", first["status"]
PYEOF

# the CUDA path on the stand-in
build=$(cd "$(dirname "$TPBAL")/.." && pwd)
if "$TPBAL" --version | grep -q "^backend cuda: built" && [ -x "$build/tests/standin/run" ]; then
    export OMPI_MCA_btl_vader_single_copy_mechanism=none
    MPIRUN="$build/tests/standin/run $MPIRUN" TPBAL_STANDIN_GFLOPS=20 \
        tpbal 2 --backend cuda --tp 2 --split row --shape 256x512x512 --iters 12 --warmup 2 \
        --emulate-speed 1,0.9 --repeat 2 --out "$WORK/g"
    expect_rc 0
    ! grep -q "^tpbal-standin:" "$WORK/err" || fail "the stand-in reported a misuse"
    "$PY" "$HERE/check_repeat.py" "$WORK/g" 2 || fail "check_repeat.py (cuda)"
else
    echo "repeat: no CUDA build: the stand-in case is not run"
fi
echo "repeat: ok"
