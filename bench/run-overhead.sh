#!/usr/bin/env bash
# bench/run-overhead.sh - the benchmarks of tpbal itself, as quoted in the docs.
#   BUILD=build bench/run-overhead.sh
set -euo pipefail
BUILD=${BUILD:-build}
if [[ $(id -u) -eq 0 ]]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
export OPENBLAS_NUM_THREADS=1 OMPI_MCA_rmaps_base_oversubscribe=1
echo "== harness overhead (2 ranks, ~1-3 ms iterations)"
mpirun --bind-to none -np 2 "$BUILD/bench/overhead" 256 1024 1024 30 7
echo "== GEMM fidelity: tpbal's compute phase against a bare BLAS loop (TP = 1)"
mpirun --bind-to none -np 2 "$BUILD/bench/fidelity" 256 1024 1024 20 9
echo "== gather and write path (4096 virtual ranks x 1000 iterations)"
mpirun --bind-to none -np 2 "$BUILD/bench/gather" 4096 1000 8 "${TMPDIR:-/tmp}/tpbal-gather"
