#!/usr/bin/env bash
# bench/gpu-check.sh - the one prepared check of the CUDA backend on a machine
# with a GPU (a single GPU is enough), in at most about 5 minutes:
#   1. build with the CUDA backend (needs what ./scripts/deps installs, and the
#      CUDA toolkit with cuBLAS and NCCL at $CUDA_HOME or /usr/local/cuda);
#   2. run the GPU tests (tests/mpi/gpu.sh, tests/mpi/cuda.sh);
#   3. a TP = 1 sweep over dtypes with --check;
#   4. a 2- and a 4-rank sweep sharing the GPU (--comm mpi) with emulated
#      speeds through green contexts, checked;
#   5. tpbal's GEMM TFLOP/s against a bare cuBLAS loop on the same shape in
#      the same run (goal: ratio >= 0.97).
# Writes everything to $OUT (or ./gpu-check-out) with summary.txt on top.
set -uo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
OUTDIR=${OUT:-$TOP/gpu-check-out}
BUILD=${BUILD:-$TOP/build-gpu}
mkdir -p "$OUTDIR"
SUM="$OUTDIR/summary.txt"
: >"$SUM"
say() { echo "$*" | tee -a "$SUM"; }
if [[ $(id -u) -eq 0 ]]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl=self,vader,tcp OMPI_MCA_pml=ob1

say "# tpbal GPU check, $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname)"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 | sed 's/^/# gpu: /' | tee -a "$SUM"

# 1. build
(cd "$TOP" && { [ -x configure ] || autoreconf -fi >/dev/null 2>&1; })
mkdir -p "$BUILD"
if ! (cd "$BUILD" && "$TOP/configure" --with-cuda="${CUDA_HOME:-/usr/local/cuda}" >"$OUTDIR/configure.log" 2>&1 &&
      make -j"$(nproc)" >"$OUTDIR/make.log" 2>&1); then
    say "build: FAILED (see configure.log / make.log)"
    tail -20 "$OUTDIR/make.log" "$OUTDIR/configure.log" 2>/dev/null
    exit 1
fi
T="$BUILD/src/tpbal"
say "build: ok; $("$T" --version | tr '\n' ' ')"

# 2. GPU tests
if make -C "$BUILD" check TESTS="tests/test_cuda_plan tests/mpi/cuda.sh tests/mpi/gpu.sh" \
    >"$OUTDIR/tests.log" 2>&1; then
    say "gpu tests: $(grep -E '^(PASS|FAIL|SKIP)' "$OUTDIR/tests.log" | tr '\n' ' ')"
else
    say "gpu tests: FAILED: $(grep -E '^(PASS|FAIL|SKIP)' "$OUTDIR/tests.log" | tr '\n' ' ')"
    cp "$BUILD"/tests/mpi/gpu.log "$BUILD"/tests/mpi/cuda.log "$OUTDIR/" 2>/dev/null
fi

# 3. TP = 1 sweep over dtypes (8192^3 bf16: ~1.1 TFLOP per GEMM)
for dt in bf16 fp16 tf32 fp8; do
    timeout 120 mpirun -np 1 "$T" --backend cuda --tp 1 --shape 8192x8192x8192 --dtype "$dt" \
        --check --iters 20 --out "$OUTDIR/tp1-$dt" >"$OUTDIR/tp1-$dt.txt" 2>&1
    say "tp1 $dt: rc $? $(grep -E '^ +[0-9]+ ' "$OUTDIR/tp1-$dt.txt" | awk '{print "TFLOP/s", $(NF-3), "check", $NF}')"
done

# 4. ranks sharing the GPU with emulated speeds
for np in 2 4; do
    emu=$(python3 -c "print(','.join(['1.0','0.5']*($np//2)))")
    timeout 150 mpirun -np "$np" --bind-to none "$T" --backend cuda --comm mpi --dtype fp32 \
        --tp "$np" --emulate-speed "$emu" --shape 2048x8192x8192 --check --iters 10 \
        --out "$OUTDIR/shared-$np" >"$OUTDIR/shared-$np.txt" 2>&1
    say "shared np=$np emulate $emu: rc $?"
    grep -E "emulation|^ +[0-9]+ " "$OUTDIR/shared-$np.txt" | tee -a "$SUM"
done

# 5. tpbal against a bare cuBLAS loop, same shape, same run
for dt in bf16 tf32; do
    bare=$("$BUILD/bench/gpu_bare" 8192 8192 8192 "$dt" 50 | sed -n 's/^bare_tflops //p')
    mine=$(python3 -c "
import json
c=[json.loads(l) for l in open('$OUTDIR/tp1-$dt/results.jsonl') if '\"config\"' in l][0]
print(c['tflops'] * c['step_us']['median'] / max(c['compute_us']))" 2>/dev/null)
    ratio=$(python3 -c "print('%.3f' % ($mine / $bare))" 2>/dev/null)
    say "gemm $dt 8192^3: tpbal compute ${mine:-?} TFLOP/s, bare cuBLAS ${bare:-?} TFLOP/s, ratio ${ratio:-?} (goal >= 0.97)"
done
say "# done; details in $OUTDIR"
