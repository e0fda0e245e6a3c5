# standin.sh - tpbal's CUDA backend run end to end without a GPU, on the stand-in
# (tests/standin: CPU libraries with the CUDA runtime's, cuBLASLt's and NCCL's sonames, first
# on the library path; every device pointer resolved and range-checked, mismatched
# collectives reported). Skipped (77) in a build without CUDA.
#   matrix     --check on 1, 2 and 4 stand-in devices over every dtype x split x sequence
#              parallelism x --overlap none,chunked x even/weighted, --comm nccl and mpi;
#              no misuse reported by the stand-in
#   defects    one step each for what reading the CUDA code found (fp8 all-gathers of X at
#              4x the bytes: in the matrix; --comm-only --sequence-parallel with uneven
#              blocks; a plan cache that rebuilt plans inside timed loops; chunk pieces first
#              planned in a warm-up; TP 1 opening an NCCL communicator; a plan first met
#              behind the start gate)
#   features   --block, --shards-from, --fleet, --comm-only, --gather parts, marks never
#              recorded late (a host lagging the device), SMs left to NCCL in chunked overlap
#   faults     the planted ones end as designed: one line (busy device, exclusive mode),
#              a skipped config (no cuBLASLt algorithm), the run's records kept with its
#              status (an allocation failure, an NCCL asynchronous error, a collective that
#              never completes, ended by --timeout)
# Nothing here asserts a timing (the stalls' bounds are --timeout + 5 s and 30 s: beside other
# tests, side by side); standin-timing.sh holds the steps that do (a slow device, emulation, an
# alternating device, gpu.sh), one at a time.
# TPB_STANDIN_QUICK=1 (the sanitizer stage): the matrix for fp32, bf16 and fp8 at 2 devices
# and fp32 through MPI.
. "$(dirname "$0")/standin-lib.sh"

# ---- matrix: every dtype, split, sequence parallelism, overlap and policy, checked
matrix() { # NP COMM DTYPE
    local tps=1
    [ "$1" -ge 2 ] && tps=1,2
    [ "$1" -ge 4 ] && tps=1,2,4
    fresh
    tpbal "$1" --backend cuda --comm "$2" --dtype "$3" --tp "$tps" --split row,col \
        --sequence-parallel off,on --policy even,weighted --overlap none,chunked --chunks 2 \
        --shape 64x256x256 --check --iters 3 --warmup 1 --timeout 30 --out "$WORK/r"
    clean
    check_results "$WORK/r" all-pass
    local n
    n=$(grep -c '"check":"pass"' "$WORK/r/results.jsonl")
    echo "matrix: $1 devices, --comm $2, $3: $n configs pass --check"
    [ "$n" -ge $((2 + 16 * ($1 >= 2) + 16 * ($1 >= 4))) ] || fail "only $n configs"
    if [ "$1" -ge 2 ] && [ "$3" = fp8 ]; then # the X all-gather moved fp8 as fp32
        "$PY" -c 'import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
sys.exit(not [r for r in rs if r.get("split") == "col" and r.get("tp", 1) > 1 and
              r.get("sequence_parallel") == "on" and r.get("check") == "pass"])' \
            "$WORK/r/results.jsonl" || fail "no col+sp fp8 config passed"
    fi
}
if [ "${TPB_STANDIN_QUICK:-0}" = 1 ]; then # the sanitizer stage: each kind of dtype once
    for dt in fp32 bf16 fp8; do matrix 2 nccl "$dt"; done # 4-byte, 2-byte, fp8 with scales
    matrix 2 mpi fp32
else
    for dt in fp32 fp8; do matrix 1 nccl "$dt"; done # a singleton; TP 1 of each dtype below
    for dt in fp32 fp64 tf32 fp16 bf16 fp8; do matrix 2 nccl "$dt"; done
    for dt in fp32 fp64; do matrix 2 mpi "$dt"; done
    for dt in fp32 bf16 fp8; do matrix 4 nccl "$dt"; done
    matrix 4 mpi fp64
fi

# ---- defects found by reading, each failing before its fix
# --comm-only --sequence-parallel: blocks that NCCL's equal-count calls cannot take are
# skipped at planning with the reason (the ranks called ncclAllGather with 751 and 750)
fresh
tpbal 2 --backend cuda --tp 2 --comm-only --sequence-parallel on,off --comm-sizes 3002,4K \
    --iters 3 --timeout 30 --out "$WORK/r" --wide # --wide: the skip line whole, for grep
clean
grep -q "^# skipped: --comm-only --sequence-parallel on: 1501 elements do not divide by tp 2, and the cuda backend's reduce-scatter needs equal blocks under --comm ccl" "$WORK/out" ||
    fail "the uneven reduce-scatter was not skipped with its reason"
fresh
tpbal 2 --backend cuda --comm mpi --dtype fp32 --tp 2 --comm-only --sequence-parallel on \
    --comm-sizes 3004,64K --iters 3 --timeout 30 --out "$WORK/r"
clean # MPI takes uneven blocks (751 and 750 elements)
check_results "$WORK/r" comm-only 3004,65536

# a layer of 100 block GEMMs (a cost profile): each planned once, never in a timed loop (the
# least-recently-used cache of 64 rebuilt every plan every iteration: 400 then 800
# heuristic calls at 2 and 6 iterations)
seq 1 100 | tr '\n' ' ' >"$WORK/costs"
for it in 2 6; do
    fresh
    tpbal 1 --backend cuda --tp 1 --split row --policy even --shape 16x1600x6400 \
        --cost-profile "$WORK/costs" --check --iters "$it" --warmup 1 --out "$WORK/r"
    clean
    check_results "$WORK/r" all-pass
    $ST stats "$WORK/stats" heuristic eq 100 || fail "cuBLASLt's heuristic ran again ($it iterations)"
done

# a chunk piece's plan refused: the config skipped with the reason (its plan was first made
# in the warm-up, where a refusal ended the sweep)
fresh
TPBAL_STANDIN_NO_ALGO=2 tpbal 2 --backend cuda --tp 2 --split row --policy even \
    --overlap none,chunked --chunks 3 --shape 96x256x256 --iters 3 --out "$WORK/r"
expect_rc 0
grep -q "^# skipped: cuBLASLt has no algorithm for a bf16 GEMM of 32x256x128" "$WORK/out" ||
    fail "the refused chunk piece did not skip its config"
# TP 1: no NCCL communicator at all (it opened one per group and never used it); x1 after the
# GEMMs where no collective orders the streams (emulating at TP 1, x1 came before c0)
fresh
tpbal 2 --backend cuda --tp 1 --emulate-speed 1,0.5 --shape 64x256x256 --iters 3 --out "$WORK/r"
clean
$ST stats "$WORK/stats" comms eq 0 || fail "TP 1 opened an NCCL communicator"
"$PY" -c 'import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if "step_us" in r:
        assert r["step_us"]["min"] > 0 and min(r["compute_us"]) > 0, r["step_us"]' \
    "$WORK/r/results.jsonl" || fail "a step or compute time <= 0 at TP 1"

# ---- features on the CUDA path
printf 'up 64 256 128 col\ndown 64 128 256 row\n' >"$WORK/block.shapes" # a small MLP
fresh
tpbal 2 --backend cuda --preset "$WORK/block.shapes" --block --tp 1,2 --iters 3 --warmup 1 \
    --check --out "$WORK/b"
clean
grep -q '"type":"block"' "$WORK/b/results.jsonl" || fail "--block wrote no block record"
"$TPBAL_PLAN" "$WORK/b" --plan-out "$WORK/plan.json" >"$WORK/plan.txt" 2>&1 ||
    fail "tpbal-plan --plan-out: $(tail -3 "$WORK/plan.txt")"
fresh
tpbal 2 --backend cuda --preset "$WORK/block.shapes" --block --tp 2 --policy weighted \
    --iters 3 --warmup 1 --check --shards-from "$WORK/plan.json" --out "$WORK/bp"
clean
grep -q '"speed_source":"plan"' "$WORK/bp/results.jsonl" || fail "--shards-from not applied"

fresh
tpbal 2 --backend cuda --fleet --fleet-bytes 1M --shape 128x256x256 --out "$WORK/fleet"
clean
[ -s "$WORK/fleet/fleet.json" ] || fail "no fleet.json"
# one NCCL communicator a rank for the node's all-reduces, not one per round (5)
$ST stats "$WORK/stats" comms eq 2 || fail "--fleet made a communicator per round"

fresh
tpbal 2 --backend cuda --tp 2 --gather parts --trace-ranks all --shape 64x256x256 --iters 5 \
    --check --out "$WORK/parts"
clean
check_results "$WORK/parts" all-pass

# the start gate holds each compute phase's stream until the marks that close it are queued
# (issue 55, item 6): with the host lagging 300 us before every event record (a host slower
# than a short GEMM), no timing mark is recorded on a stream that had gone idle after work,
# in every mode (TP 1 and 2, both splits, chunked, emulated, NCCL and MPI); released before
# c1 as it was, 110 of 113 closing marks were (the H200: bf16 1024^3 at 7.9 us for 6.1)
for comm in nccl mpi; do
    fresh
    TPBAL_STANDIN_RECORD_LAG_US=300 TPBAL_STANDIN_GFLOPS=1000 tpbal 2 --backend cuda \
        --comm "$comm" --dtype fp32 --tp 1,2 --split row,col --overlap none,chunked --chunks 2 \
        --emulate-speed 1,0.5 --shape 64x256x256 --iters 20 --warmup 2 --check --timeout 60
    clean
    $ST stats "$WORK/stats" late_record eq 0 || fail "a mark recorded late (--comm $comm)"
done

# a plan first met behind the start gate is built with the gate let go (cuda_gemm.c), under
# the warm-ups that keep it from happening: TPBAL_TEST_FAULT=cold-plans skips the calibration's,
# so its first timed GEMM builds its plan there; without the release, the stand-in's lazy
# loading reports the deadlock that hung the H200's weighted runs (8 lines, exit 2)
for comm in nccl mpi; do
    fresh
    TPBAL_TEST_FAULT=cold-plans tpbal 2 --backend cuda --comm "$comm" --dtype fp32 --tp 2 \
        --policy even,weighted --shape 64x256x256 --iters 3 --warmup 1 --check --timeout 30 \
        --out "$WORK/cold-$comm"
    clean
    check_results "$WORK/cold-$comm" all-pass
done

# --overlap chunked beside NCCL: the chunks' GEMMs leave SMs to the collective (cuBLASLt's SM
# count target, 16 fewer than the device's), the serial configs' take them all; through
# --comm mpi nothing overlaps (the host waits for each staged collective): said, not figured
fresh
tpbal 2 --backend cuda --comm nccl --dtype fp32 --tp 2 --split row --overlap none,chunked \
    --chunks 2 --shape 64x256x256 --iters 5 --warmup 1 --check
clean
[ "$($ST sum "$WORK/stats" sm_targeted)" -gt 0 ] || fail "chunked GEMMs beside NCCL took every SM"
fresh
tpbal 2 --backend cuda --dtype fp32 --tp 2 --split row --shape 64x256x256 --iters 5 --warmup 1
clean
$ST stats "$WORK/stats" sm_targeted eq 0 || fail "a serial GEMM left SMs idle"
fresh
tpbal 2 --backend cuda --comm mpi --dtype fp32 --tp 2 --split row --overlap none,chunked \
    --chunks 2 --shape 64x256x256 --iters 5 --warmup 1 --check --out "$WORK/ovm" --wide
clean
$ST stats "$WORK/stats" sm_targeted eq 0 || fail "--comm mpi: SMs left to a collective that uses none"
grep -q "the host waits for each --comm mpi collective (staged): nothing can overlap" "$WORK/out" ||
    fail "--comm mpi chunked: overlap figures printed as if it could overlap"
grep -q "over serial" "$WORK/out" && fail "--comm mpi chunked: 'over serial' printed"
grep -q '"host_waits":1' "$WORK/ovm/results.jsonl" || fail "--comm mpi chunked: host_waits not recorded"

# ---- planted faults end as designed
fault() { # WANT_RC ENV... -- ARGS: tpbal on 2 ranks with the stand-in's switches
    local want=$1
    shift
    local envs=""
    while [ "$1" != "--" ]; do
        envs="$envs $1"
        shift
    done
    shift
    fresh
    # shellcheck disable=SC2086
    env $envs timeout 240 $MPIRUN -np 2 "$TPBAL" "$@" >"$WORK/out" 2>"$WORK/err"
    RC=$?
    echo "fault$envs: exit $RC"
    expect_rc "$want"
}
Q="--backend cuda --tp 2 --shape 64x256x256 --iters 5 --timeout 5"
fault 2 TPBAL_STANDIN_BUSY=1 TPBAL_STANDIN_FAULT_RANK=1 -- $Q
one_error_line busy
grep -q "^tpbal: error: GPU 1 is busy or unavailable" "$WORK/err" || fail "busy: the line"
fault 2 TPBAL_STANDIN_DEVICES=1 TPBAL_STANDIN_COMPUTE_MODE=exclusive -- $Q --comm mpi --dtype fp32
one_error_line exclusive
grep -q "exclusive-process compute mode and another process holds it" "$WORK/err" ||
    fail "exclusive: the line"
# a cuBLASLt without the functions tpbal calls, first on the path (cuda_blasdl.c loads it when
# the backend opens, not at start): one line naming the library and what it lacks, exit 2
mkdir -p "$WORK/nolt" && cp "$(dirname "$SI")/../keepdso.so" "$WORK/nolt/libcublasLt.so.13"
fresh
# shellcheck disable=SC2086
timeout 240 "$SI" env LD_LIBRARY_PATH="$WORK/nolt:$(dirname "$SI")/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    $PLAIN_MPIRUN -np 2 "$TPBAL" $Q >"$WORK/out" 2>"$WORK/err"
RC=$?
echo "a cuBLASLt without its functions: exit $RC"
expect_rc 2
one_error_line no-cublasLt
grep -q "^tpbal: error: libcublasLt.so.13 lacks cublasLtCreate: the CUDA backend needs cuBLASLt" \
    "$WORK/err" || fail "a cuBLASLt without its functions: the line"
fault 0 TPBAL_STANDIN_NO_ALGO=2 TPBAL_STANDIN_FAULT_RANK=0 -- $Q --out "$WORK/r"
grep -q "^# skipped: .*cuBLASLt has no algorithm" "$WORK/out" || fail "no-algo: no skip line"
fault 2 TPBAL_STANDIN_FAIL_MALLOC=12 TPBAL_STANDIN_FAULT_RANK=1 -- $Q --out "$WORK/r"
grep -q "cudaMalloc.*out of memory" "$WORK/err" || fail "malloc: the line"
grep -q '"status":"failed"' "$WORK/r/results.jsonl" || fail "malloc: the record not sealed"
fault 1 TPBAL_STANDIN_NCCL_ERROR=13 TPBAL_STANDIN_FAULT_RANK=1 -- $Q --out "$WORK/r"
grep -q "^tpbal: error on rank 1: ncclCommGetAsyncError failed: unhandled system error" \
    "$WORK/err" || fail "nccl error: reported as $(grep '^tpbal' "$WORK/err" | head -1)"
grep -q '"status":"failed"' "$WORK/r/results.jsonl" || fail "nccl error: the record not sealed"
[ "$(grep -c '"check"' "$WORK/r/results.jsonl")" -ge 1 ] || fail "nccl error: the first config lost"
t0=$(date +%s)
fault 4 TPBAL_STANDIN_NCCL_HANG=13 TPBAL_STANDIN_FAULT_RANK=1 -- $Q --out "$WORK/r"
[ $(($(date +%s) - t0)) -le 30 ] || fail "a hung collective was not ended by --timeout 5"
grep -q "did not complete within --timeout 5 s" "$WORK/err" || fail "hang: the line"
grep -q '"status":"timeout"' "$WORK/r/results.jsonl" || fail "hang: the record not sealed"
# the progress watchdog (issue 55, item 2): a rank stuck where no wait of tpbal's is polled
# (inside the cuBLASLt heuristic, inside a host synchronization) is ended under NCCL and MPI
# within --timeout + 5 s of its last progress (the watchdog's own figure, in the message),
# rank 0 names the rank and the phase in the record it seals "timeout", --out is free again
# (on the H200 such a rank hung for ever: no watchdog thread under NCCL, none outside a
# staged collective under MPI)
watched() { # WHAT: the checks after a planted stall
    local secs
    secs=$(grep -o '"stop_reason":"rank 1 ([^)]*) made no progress for [0-9]* s' \
        "$WORK/r/results.jsonl" | grep -o '[0-9]* s$' | cut -d' ' -f1)
    echo "$1: ended after ${secs:-?} s without progress (--timeout 5)"
    [ -n "$secs" ] && [ "$secs" -le 10 ] || fail "$1: no stop reason naming rank 1 within 10 s"
    grep -q '"status":"timeout"' "$WORK/r/results.jsonl" || fail "$1: the record not sealed"
    [ ! -e "$WORK/r/.tpbal.lock" ] || fail "$1: the lock on --out was left"
    grep -q "^tpbal: error on rank 0: rank 1 (" "$WORK/err" || fail "$1: rank 0's line"
}
for comm in nccl mpi; do
    fault 4 TPBAL_STANDIN_HEURISTIC_STALL=1 TPBAL_STANDIN_FAULT_RANK=1 -- $Q --comm "$comm" \
        --dtype fp32 --out "$WORK/r"
    watched "heuristic stall, --comm $comm"
    grep -q "inside cublasLtMatmulAlgoGetHeuristic" "$WORK/r/results.jsonl" ||
        fail "heuristic stall: the call not named"
    fault 4 TPBAL_STANDIN_SYNC_STALL=3 TPBAL_STANDIN_FAULT_RANK=1 -- $Q --comm "$comm" \
        --dtype fp32 --out "$WORK/r"
    watched "synchronize stall, --comm $comm"
done
# a TP-1 config whose GEMM outlasts --timeout (no communicator watched: the wait read the
# first watched group and segfaulted both ranks, the record left "running" and the lock)
fault 4 TPBAL_STANDIN_GFLOPS=0.02 -- --backend cuda --tp 1 --shape 256x512x512 --iters 3 \
    --warmup 1 --timeout 3 --out "$WORK/r"
grep -q "the GPU did not finish this rank's work within --timeout 3 s" "$WORK/err" ||
    fail "TP 1 past --timeout: $(grep -m1 '^tpbal: error' "$WORK/err")"
grep -q '"status":"timeout"' "$WORK/r/results.jsonl" || fail "TP 1 past --timeout: not sealed"
[ ! -e "$WORK/r/.tpbal.lock" ] || fail "TP 1 past --timeout: the lock on --out was left"
if grep -qi "segmentation\|signal 11" "$WORK/err"; then fail "TP 1 past --timeout: a crash"; fi
# a rank that never reaches its wait is named by its world rank, also in a spread group: two
# emulated nodes (each pair of ranks under its own host name, a UTS namespace), groups {0,2}
# and {1,3}; rank 2 stalls in a collective call (rank 0 named rank 1 before the fix)
if unshare --uts true 2>/dev/null; then
    printf '%s\n' '#!/bin/sh' \
        'exec unshare --uts sh -c '"'"'hostname "n$((OMPI_COMM_WORLD_RANK / 2))" && exec "$0" "$@"'"'"' "$@"' \
        >"$WORK/node"
    chmod +x "$WORK/node"
    fresh
    TPBAL_STANDIN_DEVICES=4 TPBAL_STANDIN_NCCL_STALL=13 TPBAL_STANDIN_FAULT_RANK=2 timeout 240 \
        $MPIRUN -np 4 "$WORK/node" "$TPBAL" $Q --tp-placement spread >"$WORK/out" 2>"$WORK/err"
    RC=$?
    echo "stall of rank 2 in a spread group: exit $RC"
    expect_rc 4
    grep -q "^tpbal: error on rank 0: .*--timeout 5 s on rank 0; ranks that did not arrive: 2$" \
        "$WORK/err" || fail "stall: $(grep -m1 '^tpbal: error' "$WORK/err")"
else
    echo "stall in a spread group: not run (no UTS namespace here)"
fi
# a collective that silently delivers a wrong element on rank 1 (every NCCL result of rank
# 1): --check fails every TP 2 config, all-reduce and all-gather included (it checked group
# rank 0's copy of Y only: those passed before the fix), and passes TP 1 (no collective)
fault 3 TPBAL_STANDIN_NCCL_CORRUPT=all TPBAL_STANDIN_FAULT_RANK=1 -- --backend cuda --tp 1,2 \
    --split row,col --sequence-parallel off,on --shape 64x256x256 --iters 3 --timeout 30 \
    --check --out "$WORK/r"
"$PY" - "$WORK/r/results.jsonl" <<'EOF' || fail "corrupt: not every TP 2 config failed its check"
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1]) if '"type":"config"' in l]
got = sorted((r["tp"], r["split"], r["sequence_parallel"], r["policy"], r["check"]) for r in rs)
print("corrupt:", got)
assert len(got) == 10 and all(c == ("fail" if tp == 2 else "pass") for tp, *_, c in got)
EOF
# an off-by-one shard offset on the CUDA path: the sampled check's reference comes from the
# generator's global indices, so every TP 2 config fails and TP 1 passes
fault 3 TPBAL_TEST_FAULT=shard-offset -- --backend cuda --tp 1,2 --split row,col --shape 64x256x256 \
    --iters 3 --timeout 30 --check --out "$WORK/r"
"$PY" - "$WORK/r/results.jsonl" <<'EOF' || fail "shard-offset: not every TP 2 config failed"
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1]) if '"type":"config"' in l]
got = [(r["tp"], r["check"]) for r in rs]
print("shard-offset:", got)
assert len(got) >= 4 and all(c == ("fail" if tp == 2 else "pass") for tp, c in got)
EOF
fault 0 TPBAL_STANDIN_GREEN=0 TPBAL_STANDIN_WAIT_VALUE=0 TPBAL_STANDIN_NCCL_INPROGRESS=1 -- \
    $Q --emulate-speed 1,0.5 --check
grep -q "emulation repeat x2.00 (green contexts not available" "$WORK/out" ||
    fail "no green contexts: the repeat fallback not said"

echo "standin: ok"
