#!/usr/bin/env bash
# bench/gpu-check.sh [--dry-run] - the one prepared check of the CUDA backend on a
# machine with a GPU (one is enough; all are used for the NCCL step), in under 8
# minutes, each step under a timeout and with its own line in $OUT/summary.txt:
#   device    driver and GPUs first; stops at once without a GPU or with a driver too old
#   build     configure --with-cuda, make (and the GPU tests: gpu.sh, cuda.sh, unit tests)
#   check     --check at 2048^3 for every dtype (fp32 tf32 fp16 bf16 fp8)
#   timed     8192^3 without --check (its fp64 CPU reference alone would cost minutes):
#             compute TFLOP/s, % of the device's peak, against a bare cuBLASLt loop on
#             the same seeded data (bench/gpu_bare; goal >= 0.97)
#   nccl      with >= 2 GPUs: a TP sweep over all GPUs against a bare ncclAllReduce loop
#   emulate   two ranks sharing a GPU (--comm mpi), rank 1 at 0.5 through a green context:
#             the SMs granted and the slowdown achieved
#   comm      --comm-only on the GPU: NCCL over every GPU (>= 2), else two ranks sharing
#             one GPU through --comm mpi; the alpha-beta fit in the summary
# Every run uses --timeout 60 and --bind-to none. --dry-run prints every step's command
# and runs the host-side parts (the result parsing, on a host-backend result) so that
# ./scripts/test keeps this script working on machines without a GPU.
set -uo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
DRY=0
[[ "${1:-}" == --dry-run ]] && DRY=1
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
MPIRUN="mpirun --bind-to none"
T="$BUILD/src/tpbal"
COMMON="--timeout 60 --iters 20 --warmup 5"

# step NAME SECONDS CMD...: run (or, dry, print) a command under a timeout; sets RC
step() {
    local name=$1 secs=$2
    shift 2
    echo "+ [$name] timeout $secs $*" >>"$OUTDIR/commands.txt"
    if [[ $DRY == 1 ]]; then
        say "$name: DRY-RUN: $*"
        RC=0
        return
    fi
    timeout "$secs" "$@" >"$OUTDIR/$name.txt" 2>&1
    RC=$?
    [[ $RC -ne 124 ]] || say "$name: TIMEOUT after $secs s"
}

# summary NAME DIR [BARE]: the named fields of a result directory (host result when dry)
summary() {
    local name=$1 dir=$2 bare=${3:-}
    [[ $DRY == 1 ]] && dir="$OUTDIR/dry-host" bare=
    say "$name: rc $RC, $(python3 "$TOP/bench/gpu_summary.py" "$dir" $bare 2>&1 | tail -1)"
}

say "# tpbal GPU check, $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname)$([[ $DRY == 1 ]] && echo ' (dry run)')"
# ---- device: driver and GPUs first
if [[ $DRY == 0 ]]; then
    if ! nvidia-smi --query-gpu=index,name,memory.total,driver_version,pci.bus_id \
        --format=csv,noheader >"$OUTDIR/device.txt" 2>&1; then
        say "device: FAIL: no GPU or no driver ($(head -1 "$OUTDIR/device.txt"))"
        exit 2
    fi
    sed 's/^/device: /' "$OUTDIR/device.txt" | tee -a "$SUM"
    drv=$(head -1 "$OUTDIR/device.txt" | awk -F', ' '{print $4}')
    if [[ ${drv%%.*} -lt 580 ]]; then
        say "device: FAIL: driver $drv is too old for the CUDA 13 runtime (needs >= 580)"
        exit 2
    fi
    NGPU=$(wc -l <"$OUTDIR/device.txt")
else
    say "device: DRY-RUN: nvidia-smi --query-gpu=index,name,memory.total,driver_version,pci.bus_id"
    NGPU=2
    $MPIRUN -np 2 "$T" --backend host --tp 2 --shape 64x64x64 --emulate-speed 1,0.5 --check \
        --iters 3 --out "$OUTDIR/dry-host" >"$OUTDIR/dry-host.txt" 2>&1 ||
        { say "dry-host: FAIL: $(tail -1 "$OUTDIR/dry-host.txt")"; exit 1; }
fi

# ---- build and the GPU tests
if [[ $DRY == 0 ]]; then
    (cd "$TOP" && { [ -x configure ] || autoreconf -fi >/dev/null 2>&1; })
    mkdir -p "$BUILD"
fi
step build 300 bash -c "cd '$BUILD' && '$TOP/configure' --with-cuda='${CUDA_HOME:-/usr/local/cuda}' >configure.log 2>&1 && make -j\$(nproc) >make.log 2>&1"
[[ $RC -eq 0 ]] || { say "build: FAIL (see $BUILD/make.log)"; exit 1; }
[[ $DRY == 1 ]] || say "build: ok; $("$T" --version | tr '\n' ' ')"
step tests 240 make -C "$BUILD" check TESTS="tests/test_cuda_plan tests/test_cuda_errors tests/mpi/cuda.sh tests/mpi/gpu.sh"
[[ $DRY == 1 ]] || say "tests: $([[ $RC -eq 0 ]] && echo pass || echo FAIL) $(grep -E '^(PASS|FAIL|SKIP|ERROR):' "$OUTDIR/tests.txt" | tr '\n' ' ')"

# ---- --check at 2048^3 for every dtype
for dt in fp32 tf32 fp16 bf16 fp8; do
    step "check-$dt" 60 $MPIRUN -np 1 "$T" --backend cuda --tp 1 --shape 2048x2048x2048 \
        --dtype "$dt" --check $COMMON --out "$OUTDIR/check-$dt"
    summary "check-$dt" "$OUTDIR/check-$dt"
done

# ---- 8192^3 timed, against the bare cuBLASLt loop on the same data
for dt in bf16 fp16 tf32 fp8; do
    step "bare-$dt" 60 "$BUILD/bench/gpu_bare" gemm 8192 8192 8192 "$dt" 50
    bare=$([[ $DRY == 1 ]] && echo 1.0 || sed -n 's/^bare_tflops //p' "$OUTDIR/bare-$dt.txt")
    step "timed-$dt" 90 $MPIRUN -np 1 "$T" --backend cuda --tp 1 --shape 8192x8192x8192 \
        --dtype "$dt" $COMMON --out "$OUTDIR/timed-$dt"
    summary "timed-$dt" "$OUTDIR/timed-$dt" "${bare:-}"
done

# ---- NCCL over every GPU
if [[ $NGPU -ge 2 ]]; then
    step nccl-bare 60 $MPIRUN -np "$NGPU" "$BUILD/bench/gpu_bare" allreduce $((8192 * 8192 * 2)) 50
    say "nccl-bare: rc $RC, $([[ $DRY == 1 ]] || tail -1 "$OUTDIR/nccl-bare.txt")"
    step nccl 120 $MPIRUN -np "$NGPU" "$T" --backend cuda --comm nccl --tp "$NGPU" --split row \
        --policy even --shape 8192x8192x8192 $COMMON --out "$OUTDIR/nccl"
    summary nccl "$OUTDIR/nccl"
else
    say "nccl: skipped (one GPU: NCCL needs one GPU per rank)"
fi

# ---- green-context emulation: two ranks on one GPU
step emulate 120 $MPIRUN -np 2 "$T" --backend cuda --comm mpi --dtype bf16 --tp 2 \
    --emulate-speed 1,0.5 --policy even,weighted --shape 4096x8192x8192 $COMMON --check \
    --out "$OUTDIR/emulate"
summary emulate "$OUTDIR/emulate"
[[ $DRY == 1 ]] || grep -E "emulation" "$OUTDIR/emulate.txt" | sed 's/^/emulate: /' | tee -a "$SUM"
# ---- collective-only sweep: no GEMM, the GPU path's marks and collectives alone
if [[ $NGPU -ge 2 ]]; then
    step comm 90 $MPIRUN -np "$NGPU" "$T" --backend cuda --comm nccl --comm-only \
        --comm-sizes 64K:256M:4 --timeout 60 --iters 20 --out "$OUTDIR/comm"
else
    step comm 90 $MPIRUN -np 2 "$T" --backend cuda --comm mpi --comm-only \
        --comm-sizes 64K:64M:4 --timeout 60 --iters 20 --out "$OUTDIR/comm"
fi
summary comm "$OUTDIR/comm"
[[ $DRY == 1 ]] || grep -E "^# comm model" "$OUTDIR/comm.txt" | sed 's/^/comm: /' | tee -a "$SUM"
say "# done in ${SECONDS} s; details in $OUTDIR"
