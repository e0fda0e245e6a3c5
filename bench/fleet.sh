#!/usr/bin/env bash
# bench/fleet.sh [RUNS] [FACTOR] - --fleet's detection on the emulated two-node cluster
# (tests/mpi/cluster-lib.sh; needs root): RUNS fleets with node n2's ranks slowed to FACTOR
# of their speed (--emulate-speed, default 0.5) and RUNS equal fleets, each the 4 ranks,
# 2 per node. Prints how often n2 was excluded (for its GEMM) in the slowed fleets and how
# often any node was excluded in the equal ones, with each run's scores.
#   Run from the top of the tree after ./scripts/test: bench/fleet.sh 20
set -uo pipefail
runs=${1:-20}
factor=${2:-0.5}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
build=${TPBAL_BUILD_DIR:-$top/build}
export TPBAL=$build/src/tpbal PYTHON3=${PYTHON3:-python3}
if [[ $(id -u) -eq 0 ]]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
export MPIRUN="mpirun --bind-to none"
. "$top/tests/mpi/lib.sh"
HERE=$top/tests/mpi
. "$top/tests/mpi/cluster-lib.sh"
named=0 clean=0 fp=0
for i in $(seq 1 "$runs"); do
    cl_tpbal --fleet --shape 256x256x256 --fleet-bytes 1M --emulate-speed "1,1,$factor,$factor" \
        --out "$WORK/s$i"
    ex=$("$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(",".join(d["exclude"]) or "none", " ".join("%.2f" % n["gemm"]["score"] for n in d["nodes"]))' "$WORK/s$i/fleet.json")
    [[ $ex == n2\ * ]] && named=$((named + 1))
    echo "slowed $i: excluded $ex"
    cl_tpbal --fleet --shape 256x256x256 --fleet-bytes 1M --out "$WORK/e$i"
    ex=$("$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(",".join(d["exclude"]) or "none", " ".join("%.2f" % n["gemm"]["score"] for n in d["nodes"]))' "$WORK/e$i/fleet.json")
    if [[ $ex == none\ * ]]; then clean=$((clean + 1)); else fp=$((fp + 1)); fi
    echo "equal $i: excluded $ex"
done
echo "fleet: n2 at $factor excluded in $named of $runs runs; equal fleets: no node excluded in $clean of $runs ($fp false exclusions)"
