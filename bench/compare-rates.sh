#!/usr/bin/env bash
# bench/compare-rates.sh [PAIRS] [ITERS] - the error rates of tpbal-compare's gate on this
# machine: PAIRS + 1 identical runs, compared pair by pair (every flagged config is a false
# alarm: a regression or an improvement between two runs of one command), and PAIRS runs
# whose step is 10 % slower (both ranks' compute slowed by --emulate-speed 0.904: compute is
# ~94 % of these steps; the measured ratio is printed), each compared with a normal run
# (every config not called a regression is a miss). Prints the rates at the
# default tolerance (5 %), the inconclusive share and the median smallest detectable change.
#   Run from the build directory (after ./scripts/test): bench/compare-rates.sh 20 100
set -euo pipefail
pairs=${1:-20}
iters=${2:-100}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
build=${TPBAL_BUILD_DIR:-$top/build}
tpbal=$build/src/tpbal
cmp=$build/src/tools/tpbal-compare
work=$(mktemp -d "${TMPDIR:-/tmp}/tpbal-rates.XXXXXX")
trap 'rm -rf "$work"' EXIT
if [[ $(id -u) -eq 0 ]]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
export OPENBLAS_NUM_THREADS=1
args=(--tp 1,2 --shape 512x512x512 --speeds 1,1 --iters "$iters" --warmup 5 --quiet)
run() { mpirun -np 2 "$tpbal" "${args[@]}" "$@" >/dev/null 2>&1; }
echo "compare-rates: $pairs pairs, $iters iterations, $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs))"
for i in $(seq 0 "$pairs"); do
    run --out "$work/n$i"
    [[ $i -lt $pairs ]] && run --emulate-speed 0.904,0.904 --out "$work/s$i"
    echo -n "."
done
echo
verdicts() { # A B: one verdict per config, and its smallest detectable change
    "$cmp" --format json "$1" "$2" 2>/dev/null | python3 -c '
import json, sys
for r in json.load(sys.stdin)["rows"]:
    s = r["step"] or {}
    print(r["verdict"], s.get("detectable"), s.get("ratio"), r["config"].replace(" ", "_"))' || true
}
for i in $(seq 0 $((pairs - 1))); do
    verdicts "$work/n$i" "$work/n$((i + 1))" | sed 's/^/same /'
    verdicts "$work/n$i" "$work/s$i" | sed 's/^/slow /'
done >"$work/v"
# against a baseline of the first 5 normal runs: the other normal runs and every slow one
"$cmp" --baseline-out "$work/base.json" "$work"/n{0..4} 2>/dev/null
for i in $(seq 5 "$pairs"); do verdicts "$work/base.json" "$work/n$i" | sed 's/^/bsame /'; done >>"$work/v"
for i in $(seq 0 $((pairs - 1))); do verdicts "$work/base.json" "$work/s$i" | sed 's/^/bslow /'; done >>"$work/v"
python3 - "$work/v" <<'PY'
import sys, statistics
rows = [l.split() for l in open(sys.argv[1])]
def rate(kind, verdicts):
    r = [x for x in rows if x[0] == kind]
    return sum(1 for x in r if x[1] in verdicts), len(r)
for pre, what in (("", "run against run"), ("b", "5-run baseline against a run")):
    fa, n = rate(pre + "same", ("regression", "improved"))
    inc, _ = rate(pre + "same", ("inconclusive",))
    det, m = rate(pre + "slow", ("regression",))
    inc_s, _ = rate(pre + "slow", ("inconclusive",))
    ratios = [float(x[3]) for x in rows if x[0] == pre + "slow" and x[3] != "None"]
    print("%s: identical reruns: %d configs, false alarms %d (%.1f %%), inconclusive %d "
          "(%.1f %%); 10 %% slower (step ratio median %.3f): %d configs, detected %d (%.1f %%),"
          " inconclusive %d" % (what, n, fa, 100.0 * fa / max(n, 1), inc, 100.0 * inc / max(n, 1),
                                statistics.median(ratios) if ratios else float("nan"), m, det,
                                100.0 * det / max(m, 1), inc_s))
dets = [float(x[2]) for x in rows if x[2] not in ("None", "inf") and x[0] in ("same", "slow")]
by = {}
for x in rows:
    by.setdefault((x[0], x[4]), []).append(x[1])
for (kind, label), vs in sorted(by.items()):
    print("  %-4s %-40s %s" % (kind, label, " ".join("%s %d" % (v, vs.count(v))
                                                   for v in sorted(set(vs)))))
print("smallest detectable change: median %.1f %%, p90 %.1f %%" % (
    100 * statistics.median(dets), 100 * sorted(dets)[int(0.9 * (len(dets) - 1))]))
PY
