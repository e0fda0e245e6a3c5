#!/usr/bin/env bash
# bench/gpu-check.sh [--dry-run] - the one prepared check of the CUDA backend, planned for a
# machine with ONE GPU (an H200 lent for ~10 minutes) in under 8 minutes: every step has a
# budget (their sum is printed first and stays under DEADLINE, 470 s), the whole check stops
# at the deadline, and every tpbal runs with --timeout 30. Steps that need several GPUs run
# only when there are several. Run from a bundle (scripts/gpu-bundle DIR, then
# DIR/bench/gpu-check.sh on the GPU machine) it builds nothing and needs nothing installed
# but the CUDA driver, cuBLAS and NCCL; from a source tree it builds BUILD first. What it
# leaves in $OUT (a second run replaces it): summary.txt (one line per step: pass/FAIL/SKIP/
# TIMEOUT and the figures), commands.txt, and details.tar.gz (every step's output, the
# result folders, nvidia-smi's clocks and power every 250 ms): three files.
#   device     name, driver, compute mode, MIG, max and current SM clocks (stops without a
#              GPU or with a driver too old for CUDA 13)
#   build      configure --with-cuda, make; tests: the CUDA unit tests and tests/mpi/gpu.sh
#   check-DT   --check at TP 1, 2048^3, for fp32 tf32 fp16 bf16 fp8
#   timed-DT   bf16 and fp8 at 8192^3 against a bare cuBLASLt loop on the same data, both
#              timed the same way (per-GEMM event pairs, medians): fails outside [0.97, 1.10],
#              or when a config is disturbed (steps bimodal or spiky), or when another process
#              holds the GPU before it (nvidia-smi --query-compute-apps); and against the
#              datasheet peak; gate-bf16 the same at 1024^3 (the start gate's share of a short
#              GEMM)
#   emulate-F  green-context emulation on one rank at 0.25, 0.5, 0.75 and work mode 0.5:
#              SMs granted / SM count, the probe's achieved factor, and the factor measured
#              against timed-bf16's compute: fails when it misses the one asked by > 10 %
#   shared-*   TP 2 on one shared GPU (--comm mpi --dtype fp32), even and weighted with
#              --check, and the col split with --col-collective allreduce; nccl-refused: NCCL
#              refuses a shared GPU in one line; comm: --comm-only on the shared GPU
#              (skipped in exclusive-process compute mode or with MIG, with a line)
#   nccl-*     with >= 2 GPUs: bare all-reduce, all-gather and grouped broadcasts, and a TP
#              sweep over all GPUs
#   sweep      a short whole sweep (llama3-8b shapes) with --check
# --dry-run needs no GPU: every step's tpbal command goes through `tpbal --dry-run` (the
# command line resolved for --backend cuda; the check fails if any is refused), the other
# commands are printed, and the summary parsing runs on a host-backend result. It uses
# BUILD if it holds a tpbal, else build/ (what ./scripts/test builds).
# --standin is the dress rehearsal without a GPU: every step runs on the GPU stand-in
# (tests/standin; the bundle's tests/standin/) with two stand-in devices, the steps for one shared
# GPU on one, and shapes 4-16x smaller in each dimension (said in the summary): it proves the
# commands, the step machinery and the CUDA path run; the figures are the stand-in's model,
# not a GPU's. There, GPU_CHECK_PLANT="kind:step,..." plants a bad figure of each kind the check
# must catch (ratio, disturbed, emulation, holder: gpu-check-lib.sh), and GPU_CHECK_ONLY="step
# ..." runs only those steps (tests/mpi/gpucheck-figures.sh). GPU_CHECK_LOADED=1 says the rehearsal
# shares the machine with other work (tests/mpi/bundle.sh beside the suite's other tests): the
# stand-in's timings are then not its model's, so the timing figures (tpbal/bare, disturbed
# configs, emulation factors) are printed and not judged, a step passes on its exit status
# (--check included), and each step's budget is four times its own; gpucheck-figures.sh judges the
# figures alone.
# Every step runs in a session of its own, and what it started is killed at its end.
set -uo pipefail
TOP=$(cd "$(dirname "$0")/.." && pwd)
usage() {
    echo "usage: bench/gpu-check.sh [--dry-run | --standin]  (OUT=DIR, BUILD=DIR, DEADLINE=S;"
    echo "       see the head of this script: the steps, their budgets, the three files in OUT)"
}
DRY=0
STANDIN=0
case "${1:-}" in
"") ;;
--dry-run) DRY=1 ;;
--standin) STANDIN=1 ;;
-h | --help)
    usage
    exit 0
    ;;
*)
    echo "gpu-check: unknown argument '$1'" >&2
    usage >&2
    exit 2
    ;;
esac
[[ $# -le 1 ]] || { usage >&2; exit 2; }
OUTDIR=${OUT:-$TOP/gpu-check-out}
DEADLINE=${DEADLINE:-470}
source "$TOP/bench/gpu-check-lib.sh"
if [[ -f "$TOP/.tpbal-bundle" ]]; then # scripts/gpu-bundle's tree: nothing to build
    BUNDLE=1
    T="$TOP/bin/tpbal"
    MPIRUN=("$TOP/bin/mpirun" --bind-to none)
    BARE=("$TOP/bench/bin/gpu_bare")
    SI="$TOP/tests/standin/run"
else
    BUNDLE=0
    BUILD=${BUILD:-$TOP/build-gpu}
    [[ ($DRY == 1 || $STANDIN == 1) && ! -x "$BUILD/src/tpbal" ]] && BUILD=$TOP/build
    T="$BUILD/src/tpbal"
    MPIRUN=(mpirun --bind-to none)
    BARE=("$BUILD/bench/gpu_bare")
    SI="$BUILD/tests/standin/run"
fi
# the shapes: a GPU's, or the stand-in's (a CPU runs its GEMMs at a few GFLOP/s)
S_CHECK=2048x2048x2048 S_TIMED=8192x8192x8192 S_GATE=1024x1024x1024 S_SHARED=2048x4096x4096
S_NCCL=8192x8192x8192 COMM_SIZES=64K:64M:4 BARE_BYTES=$((8192 * 8192 * 2)) PRESET=llama3-8b
ONE=()   # the steps that share one GPU: on the stand-in, one device
TIMED=() # the timed steps: on the stand-in, its time model alone (no host arithmetic to
# outrun it) at 10x the rate: deterministic figures, and GEMMs short enough for the budgets
if [[ -n "${GPU_CHECK_PLANT:-}${GPU_CHECK_ONLY:-}${GPU_CHECK_LOADED:-}" && $STANDIN != 1 ]]; then
    echo "gpu-check: GPU_CHECK_PLANT, GPU_CHECK_ONLY and GPU_CHECK_LOADED are for the rehearsal (--standin) only" >&2
    exit 2
fi
case ${GPU_CHECK_LOADED:-0} in
0 | 1) LOADED=${GPU_CHECK_LOADED:-0} ;;
*)
    echo "gpu-check: GPU_CHECK_LOADED='$GPU_CHECK_LOADED': give 1 (the rehearsal shares the machine) or 0" >&2
    exit 2
    ;;
esac
# wanted NAME: the step runs (GPU_CHECK_ONLY unset, or names it; a bare loop with its step)
wanted() { [[ -z "${GPU_CHECK_ONLY:-}" || " $GPU_CHECK_ONLY " == *" ${1#bare-} "* ]]; }
if [[ $STANDIN == 1 ]]; then
    [[ -x "$SI" ]] || { echo "gpu-check: no stand-in at $SI (make check builds it in a CUDA build)" >&2; exit 2; }
    NVIDIA_SMI=${NVIDIA_SMI:-true} # no GPU to hold: no other process holds it
    export TPBAL_STANDIN_DEVICES=2
    MPIRUN=("$SI" "${MPIRUN[@]}")
    BARE=("$SI" "${BARE[@]}")
    ONE=(env TPBAL_STANDIN_DEVICES=1)
    TIMED=(env TPBAL_STANDIN_NO_MATH=1 TPBAL_STANDIN_GFLOPS=40)
    S_CHECK=256x256x256 S_TIMED=512x512x512 S_GATE=256x256x256 S_SHARED=256x512x512
    S_NCCL=512x512x512 COMM_SIZES=64K:4M:4 BARE_BYTES=$((4 << 20)) PRESET=tiny
fi
check_start
if [[ $(id -u) -eq 0 ]]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl=self,vader,tcp OMPI_MCA_pml=ob1
# Open MPI's cross-process copy (CMA) needs ptrace rights a container or sandbox may not give:
# off, as in the test suite
export OMPI_MCA_btl_vader_single_copy_mechanism=none
COMMON="--timeout 30 --iters 20 --warmup 5"

# the plan: step budgets in seconds (one GPU); their sum is the planned total
declare -A BUDGET=([device]=5 [build]=85 [tests]=60 [check]=10 [bare]=12 [timed]=18 [gate]=20
    [emulate]=12 [shared]=25 [refused]=10 [comm]=20 [overlap]=20 [sweep]=40)
[[ $BUNDLE == 1 || $STANDIN == 1 ]] && BUDGET[build]=0 # prebuilt (the stand-in: the build's)
planned=$((BUDGET[device] + BUDGET[build] + BUDGET[tests] + 5 * BUDGET[check] +
    2 * (BUDGET[bare] + BUDGET[timed]) + BUDGET[gate] + 4 * BUDGET[emulate] +
    2 * BUDGET[shared] + BUDGET[refused] + BUDGET[comm] + BUDGET[overlap] + BUDGET[sweep]))

say "# tpbal GPU check, $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname)$([[ $DRY == 1 ]] && echo ' (dry run)')$([[ $STANDIN == 1 ]] && echo ' (dress rehearsal on the GPU stand-in)')"
[[ $STANDIN == 1 ]] && say "# stand-in: 2 devices (1 for the shared-GPU steps), shapes scaled down: check $S_CHECK, timed $S_TIMED, gate $S_GATE, shared $S_SHARED, nccl $S_NCCL, comm $COMM_SIZES, sweep --preset $PRESET; figures are the stand-in's time model, not a GPU's"
[[ $LOADED == 1 ]] && say "# loaded (GPU_CHECK_LOADED=1): the machine is shared, timing figures printed and not judged, step budgets x4"
say "# plan: $planned s of step budgets for one GPU (deadline $DEADLINE s)"
# ---- device: facts first, and the clock/power log in the background
SHARED_OK=1
if [[ $STANDIN == 1 ]]; then
    NGPU=2
    say "device: stand-in: $($SI "$T" --version 2>&1 | tr '\n' ' ')"
elif [[ $DRY == 0 ]]; then
    q=index,name,driver_version,compute_mode,mig.mode.current,clocks.max.sm,clocks.sm,memory.total,pci.bus_id
    if ! nvidia-smi --query-gpu=$q --format=csv,noheader >"$RUN/device.txt" 2>&1; then
        say "device: FAIL: no GPU or no driver ($(head -1 "$RUN/device.txt"))"
        exit 2
    fi
    sed 's/^/device: /' "$RUN/device.txt" | tee -a "$SUM"
    nvidia-smi --query-gpu=timestamp,index,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu,clocks_event_reasons.active \
        --format=csv -lms 250 >"$RUN/clocks.csv" 2>&1 &
    LOGGER=$!
    drv=$(head -1 "$RUN/device.txt" | awk -F', ' '{print $3}')
    if [[ ${drv%%.*} -lt 580 ]]; then
        say "device: FAIL: driver $drv is too old for the CUDA 13 runtime (needs >= 580)"
        exit 2
    fi
    NGPU=$(wc -l <"$RUN/device.txt")
    mode=$(head -1 "$RUN/device.txt" | awk -F', ' '{print $4}')
    mig=$(head -1 "$RUN/device.txt" | awk -F', ' '{print $5}')
    if [[ $mode != Default || $mig == Enabled ]]; then
        SHARED_OK=0
        say "device: compute mode $mode, MIG $mig: the steps that share one GPU are skipped"
    fi
else
    say "device: DRY-RUN: nvidia-smi --query-gpu=index,name,driver_version,compute_mode,..."
    NGPU=1 # the plan for one GPU; the steps for several are resolved at 2 ranks below
    "${MPIRUN[@]}" -np 2 "$T" --backend host --tp 2 --shape 64x64x64 --emulate-speed 1,0.5 --check \
        --iters 3 --out "$RUN/dry-host" >"$RUN/dry-host.txt" 2>&1 ||
        { say "dry-host: FAIL: $(tail -1 "$RUN/dry-host.txt")"; exit 1; }
    say "dry-host: the summary of a host result: $(python3 "$TOP/bench/gpu_summary.py" "$RUN/dry-host" 2>&1 | grep -v '^verdict ' | tail -1)"
    if ! "$T" --version 2>/dev/null | grep -q "^backend cuda: built"; then
        say "dry-run: SKIP: $T was built without CUDA: its commands cannot be resolved"
        DRY=2
    fi
fi
[[ $DRY == 2 ]] && { say "# done (dry run, CUDA commands not resolved)"; exit 0; }

# ---- build (a source tree only) and the GPU tests
# the GPU tests, as one command for bash -c (every path quoted by printf %q)
CUDA_UNITS="tests/test_cuda_plan tests/test_cuda_errors tests/test_peak"
if [[ $BUNDLE == 1 ]]; then # prebuilt: the unit tests, then gpu.sh on the bundle's tpbal
    TESTS_CMD=""
    for u in $CUDA_UNITS; do TESTS_CMD+="$(printf %q "$TOP/$u") && "; done
    # gpu.sh splits MPIRUN at spaces: the bundle's mpirun by PATH, whatever its folder's name
    TESTS_CMD+="PATH=$(printf %q "$TOP/bin"):\$PATH TPBAL=$(printf %q "$T") MPIRUN='mpirun --bind-to none'"
    TESTS_CMD+=" TPBAL_COMPARE=$(printf %q "$TOP/bin/tpbal-compare") bash $(printf %q "$TOP/tests/mpi/gpu.sh")"
else
    TESTS_CMD="make -C $(printf %q "${BUILD:-}") check TESTS='$CUDA_UNITS tests/mpi/gpu.sh'"
fi
if [[ $DRY == 0 ]]; then
    if [[ $STANDIN == 1 ]]; then
        say "build: none (the stand-in runs $T)"
    elif [[ $BUNDLE == 0 ]]; then
        (cd "$TOP" && { [ -x configure ] || autoreconf -fi >/dev/null 2>&1; })
        mkdir -p "$BUILD"
        step build "${BUDGET[build]}" bash -c "cd '$BUILD' && { [ -f config.status ] || '$TOP/configure' --with-cuda='${CUDA_HOME:-/usr/local/cuda}' >configure.log 2>&1; } && make -j\$(nproc) >make.log 2>&1"
        [[ $RC -eq 0 ]] || { fail_step build "see $BUILD/make.log"; exit 1; }
        say "build: pass; $("$T" --version | tr '\n' ' ')"
    else
        say "build: none (bundle $(cat "$TOP/VERSION" 2>/dev/null)); $("$T" --version | tr '\n' ' ')"
    fi
    if ! wanted tests; then
        :
    elif [[ $STANDIN == 1 ]]; then # the same tests, all under one stand-in, shapes scaled down
        step tests "${BUDGET[tests]}" env TPB_GPU_SHAPES=small TPBAL_STANDIN_DEVICES=1 "MPIRUN=mpirun --bind-to none" \
            "$SI" bash -c "$TESTS_CMD"
    else
        step tests "${BUDGET[tests]}" bash -c "$TESTS_CMD"
    fi
    wanted tests && verdict tests "$(grep -E '^(PASS|FAIL|SKIP|ERROR):|^gpu: ok|^[0-9]+%: Checks' "$RUN/tests.txt" | tr '\n' ' ')"
else
    say "build: DRY-RUN: $([[ $BUNDLE == 1 ]] && echo "none (a bundle)" || echo "configure --with-cuda && make (using $BUILD)")"
    say "tests: DRY-RUN: $TESTS_CMD"
fi

# ---- --check at 2048^3 for every dtype
for dt in fp32 tf32 fp16 bf16 fp8; do
    wanted "check-$dt" || continue
    step "check-$dt" "${BUDGET[check]}" "${MPIRUN[@]}" -np 1 "$T" --backend cuda --tp 1 \
        --shape "$S_CHECK" --dtype "$dt" --check --timeout 30 --iters 5 --warmup 2 \
        --out "$RUN/check-$dt"
    summary "check-$dt" "$RUN/check-$dt"
done

# ---- 8192^3 timed against the bare cuBLASLt loop and the datasheet peak; 1024^3 for the gate
timed() { # NAME SHAPE DTYPE BUDGET_BARE BUDGET_TPBAL
    local name=$1 shape=$2 dt=$3
    local m=${shape%%x*} rest=${shape#*x}
    wanted "$name" || return 0
    gpu_free "bare-$name" || return 0
    step "bare-$name" "$4" "${TIMED[@]}" "${BARE[@]}" gemm "$m" "${rest%%x*}" "${rest#*x}" "$dt" 50
    bare=$([[ $DRY == 1 ]] && echo 1.0 || sed -n 's/^bare_tflops //p' "$RUN/bare-$name.txt")
    [[ $DRY == 1 ]] || verdict "bare-$name" "(bare_tflops ${bare:-?})"
    gpu_free "$name" || return 0
    step "$name" "$5" "${TIMED[@]}" "${MPIRUN[@]}" -np 1 "$T" --backend cuda --tp 1 --shape "$shape" --dtype "$dt" \
        $COMMON --out "$RUN/$name"
    summary "$name" "$RUN/$name" --timed ${bare:+--bare "$bare"}
}
timed timed-bf16 "$S_TIMED" bf16 "${BUDGET[bare]}" "${BUDGET[timed]}"
timed timed-fp8 "$S_TIMED" fp8 "${BUDGET[bare]}" "${BUDGET[timed]}"
timed gate-bf16 "$S_GATE" bf16 5 15

# ---- green-context emulation on one rank, against timed-bf16's full-device compute
for f in 0.25 0.5 0.75 work-0.5; do
    mode="time"
    [[ $f == work-* ]] && mode=work f=${f#work-}
    name="emulate-$mode-$f"
    wanted "$name" || continue
    gpu_free "$name" || continue
    step "$name" "${BUDGET[emulate]}" "${TIMED[@]}" "${MPIRUN[@]}" -np 1 "$T" --backend cuda --tp 1 \
        --shape "$S_TIMED" --split row --dtype bf16 --emulate-speed "$f" --emulate-mode "$mode" \
        $COMMON --out "$RUN/$name"
    summary "$name" "$RUN/$name" --timed
    [[ $DRY == 1 || ! -d "$RUN/timed-bf16" ]] || judged "$name-factor" --versus "$RUN/timed-bf16" "$RUN/$name"
done

# ---- two ranks on one GPU: --comm mpi with fp32, NCCL's refusal, comm-only
if [[ -n "${GPU_CHECK_ONLY:-}" ]]; then
    : # a rehearsal of named steps: none of these
elif [[ $SHARED_OK == 1 ]]; then
    step shared-tp2 "${BUDGET[shared]}" "${ONE[@]}" "${MPIRUN[@]}" -np 2 "$T" --backend cuda --comm mpi --dtype fp32 \
        --tp 2 --policy even,weighted --shape "$S_SHARED" --check $COMMON \
        --out "$RUN/shared-tp2"
    summary shared-tp2 "$RUN/shared-tp2"
    step shared-col-ar "${BUDGET[shared]}" "${ONE[@]}" "${MPIRUN[@]}" -np 2 "$T" --backend cuda --comm mpi \
        --dtype fp32 --tp 2 --split col --col-collective allreduce --shape "$S_SHARED" \
        --check $COMMON --out "$RUN/shared-col-ar"
    summary shared-col-ar "$RUN/shared-col-ar"
    if [[ $NGPU -eq 1 || $DRY == 1 || $STANDIN == 1 ]]; then
        if [[ $DRY == 1 ]]; then
            say "nccl-refused: DRY-RUN: --comm nccl on one shared GPU (refused at start, on the GPU)"
        else
            step nccl-refused "${BUDGET[refused]}" "${ONE[@]}" "${MPIRUN[@]}" -np 2 "$T" --backend cuda --comm nccl \
                --tp 2 --shape "$S_GATE" --dtype bf16 --timeout 30
            lines=$(grep -c '^tpbal: error' "$RUN/nccl-refused.txt")
            if [[ $RC -eq 2 && $lines -eq 1 ]] &&
                grep -q "ranks of this node drive GPU" "$RUN/nccl-refused.txt"; then
                say "nccl-refused: pass: $(grep -m1 '^tpbal: error' "$RUN/nccl-refused.txt")"
            else
                fail_step nccl-refused "rc $RC, $lines error lines"
            fi
        fi
    fi
    step comm "${BUDGET[comm]}" "${ONE[@]}" "${MPIRUN[@]}" -np 2 "$T" --backend cuda --comm mpi --dtype fp32 \
        --comm-only --comm-sizes "$COMM_SIZES" --timeout 30 --iters 20 --out "$RUN/comm"
    summary comm "$RUN/comm"
    # the chunked path on the GPU (GEMM stream, comm stream, events, chunk marks): every chunk
    # count gives the serial result; through --comm mpi a chunk's collective is staged and
    # blocking, so little is hidden here: the NCCL step below measures the overlap
    step overlap-shared "${BUDGET[overlap]}" "${ONE[@]}" "${MPIRUN[@]}" -np 2 "$T" --backend cuda --comm mpi \
        --dtype fp32 --tp 2 --split row --policy even --shape "$S_SHARED" --overlap none,chunked \
        --chunks 2,4,8 --check $COMMON --out "$RUN/overlap-shared"
    summary overlap-shared "$RUN/overlap-shared"
else
    say "shared-tp2, shared-col-ar, nccl-refused, comm: SKIP: one GPU cannot be shared here"
fi

# ---- several GPUs: NCCL against bare loops
NP_MULTI=$NGPU
[[ $DRY == 1 ]] && NP_MULTI=2 # resolved at the rank count they would run with
if [[ -n "${GPU_CHECK_ONLY:-}" ]]; then
    : # a rehearsal of named steps: none of these
elif [[ $NGPU -ge 2 || $DRY == 1 ]]; then
    for op in allreduce allgather bcastgroup; do
        step "nccl-bare-$op" 20 "${MPIRUN[@]}" -np "$NP_MULTI" "${BARE[@]}" "$op" "$BARE_BYTES" 50
        [[ $DRY == 1 ]] || verdict "nccl-bare-$op" "($(tail -1 "$RUN/nccl-bare-$op.txt"))"
    done
    step nccl 60 "${MPIRUN[@]}" -np "$NP_MULTI" "$T" --backend cuda --comm nccl --tp "$NP_MULTI" \
        --shape "$S_NCCL" $COMMON --out "$RUN/nccl"
    summary nccl "$RUN/nccl"
    # overlap with NCCL on its own stream: the goal to beat is Flux's 75 % hidden at TP 8
    step overlap-nccl 60 "${MPIRUN[@]}" -np "$NP_MULTI" "$T" --backend cuda --comm nccl --tp "$NP_MULTI" \
        --policy even --shape "$S_NCCL" --overlap none,chunked --chunks 2,4,8 --check \
        $COMMON --out "$RUN/overlap-nccl"
    summary overlap-nccl "$RUN/overlap-nccl"
else
    say "nccl: SKIP: one GPU (NCCL needs one GPU per rank)"
fi

# ---- a short whole sweep with --check
if wanted sweep; then
    step sweep "${BUDGET[sweep]}" "${MPIRUN[@]}" -np "$NGPU" "$T" --backend cuda --preset "$PRESET" --check \
        --timeout 30 --iters 5 --warmup 2 --out "$RUN/sweep"
    summary sweep "$RUN/sweep"
fi
if [[ $FAILED == 0 ]]; then
    say "# done in ${SECONDS} s (plan $planned s): every step passed; details in $OUTDIR/details.tar.gz"
else
    say "# done in ${SECONDS} s (plan $planned s): some step FAILED; details in $OUTDIR/details.tar.gz"
fi
exit $FAILED
