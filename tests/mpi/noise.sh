# noise.sh - tpbal measures the CPU time other processes took on its machine during the run
# (base/cpuload.h, run/sweep_load.c): with as many processes of ours spinning beside a 2-rank
# run as the machine has CPUs, the summary's cpu_others share is over 0.25 (about N / (N + 2)
# of N CPUs shared with the ranks) and the noise is carried into the answer, tpbal-compare's
# verdict line and the report's headline; without them the share is recorded, within [0, 1].
# Asserts no timing: spinners can only add to what others take, whatever else runs here.
. "$(dirname "$0")/lib.sh"

spinners=()
stop_spinners() {
    for p in "${spinners[@]}"; do kill "$p" 2>/dev/null; done
    for p in "${spinners[@]}"; do wait "$p" 2>/dev/null; done
    spinners=()
}
trap 'stop_spinners; rm -rf "$WORK"' EXIT

tpbal 2 --tp 2 --split row --policy even --shape 128x256x256 --iters 30 --out "$WORK/quiet"
expect_rc 0
"$PY" - "$WORK/quiet/results.jsonl" <<'PY' || fail "no CPU load in the summary"
import json, sys
s = [json.loads(l) for l in open(sys.argv[1])][-1]
load = s["cpu_others"]
assert s["type"] == "summary" and 0.0 <= load["share"] <= 1.0 and load["host"], load
print("quiet: others took %.0f %% of %s's CPUs" % (100 * load["share"], load["host"]))
PY

for _ in $(seq "$(nproc)"); do
    (while :; do :; done) &
    spinners+=($!)
done
tpbal 2 --tp 2 --split row --policy even --shape 128x256x256 --iters 30 --out "$WORK/busy" --wide
rc=$RC
stop_spinners
RC=$rc
expect_rc 0
"$PY" - "$WORK/busy/results.jsonl" <<'PY' || fail "the spinners' CPU time not seen"
import json, sys
s = [json.loads(l) for l in open(sys.argv[1])][-1]
load = s["cpu_others"]
print("busy: others took %.0f %% of %s's CPUs" % (100 * load["share"], load["host"]))
assert load["share"] > load["noisy_above"] == 0.25, load
PY
grep -q "^# noise: other processes took [0-9]* % of .*'s CPU time during the run" "$WORK/out" ||
    fail "no noise line in the answer"
"${TPBAL_COMPARE:?}" --wide "$WORK/quiet" "$WORK/busy" >"$WORK/cmp" 2>&1
rc=$?
grep -q "; noise: .*B: other processes took [0-9]* % of .*'s CPUs" "$WORK/cmp" ||
    { cat "$WORK/cmp"; fail "tpbal-compare's verdict does not carry B's noise"; }
# B's own noise line is raised: no config is judged, whatever its interval (exit 3)
[ $rc -eq 3 ] && grep -q "^# can't tell ([0-9]* configs\?, counted inconclusive): .*B's run: other "\
"processes took" "$WORK/cmp" && ! grep -qE " (regressed|improved)$" "$WORK/cmp" ||
    { cat "$WORK/cmp"; fail "tpbal-compare judged a run whose noise line is raised (exit $rc)"; }
if [ -n "${TPBAL_REPORT:-}" ] && [ -n "${TPB_PYTHON_MPL:-}" ] &&
    "$TPB_PYTHON_MPL" -c "import matplotlib" 2>/dev/null; then
    "$TPBAL_REPORT" "$WORK/busy" >"$WORK/rep" 2>&1 || { cat "$WORK/rep"; fail "tpbal-report"; }
    grep -q "Other processes took [0-9]* % of .* CPU time during the run" \
        "$WORK/busy/report/index.html" || fail "the report's headline does not carry the noise"
fi
echo "PASS"
