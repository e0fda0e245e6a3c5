# threads.sh - BLAS threads that fit the cores: under mpirun --bind-to none, socket and
# core each rank runs its share of the cores it may use (recomputed from the recorded
# cpusets by check_results.py), ranks that share cores get a warning, the variables
# OpenBLAS reads and --threads override (an oversubscription is named), and two unbound
# ranks, one at half speed, balance under the weighted policy.
. "$(dirname "$0")/lib.sh"
unset OPENBLAS_NUM_THREADS GOTO_NUM_THREADS OMP_NUM_THREADS
BASE=$MPIRUN
run_bound() { # BIND NP ARGS...: tpbal under mpirun --bind-to BIND
    local bind=$1
    shift
    MPIRUN=${BASE/--bind-to none/--bind-to $bind}
    tpbal "$@"
}
small=(--tp 2 --shape 64x256x256 --policy even --split row --iters 3 --warmup 1)

for bind in none socket; do
    run_bound "$bind" 2 "${small[@]}" --out "$WORK/$bind"
    expect_rc 0
    check_results "$WORK/$bind" threads auto 2
    grep -q "^# warning: all ranks: cpus .* shared by 2 ranks" "$WORK/out" ||
        fail "--bind-to $bind: no warning about shared cores"
done
ncores=$(lscpu -p=core | grep -v '^#' | sort -u | wc -l)
if [ "$ncores" -ge 2 ]; then
    run_bound core 2 "${small[@]}" --out "$WORK/core"
    expect_rc 0
    check_results "$WORK/core" threads auto 1
    grep -q "shared by" "$WORK/out" && fail "--bind-to core: warned about shared cores"
fi
# tpbal's own --bind core under mpirun --bind-to none
run_bound none 2 "${small[@]}" --bind core --out "$WORK/tpbind"
expect_rc 0
check_results "$WORK/tpbind" threads auto 1

# the variable OpenBLAS reads wins over the share, and an oversubscription is named
OPENBLAS_NUM_THREADS=3 run_bound none 2 "${small[@]}" --out "$WORK/env"
expect_rc 0
check_results "$WORK/env" threads OPENBLAS_NUM_THREADS 2
# (the warning folds at 120 columns: its parts are grepped apart)
grep -q "^# warning: all ranks: 3 BLAS threads .* oversubscribed" "$WORK/out" &&
    grep -q "unset OPENBLAS_NUM_THREADS or pass --threads" "$WORK/out" ||
    fail "3 threads per rank on shared cores not named as oversubscribed"
# --threads wins over the variable
OPENBLAS_NUM_THREADS=3 run_bound none 2 "${small[@]}" --threads 1 --out "$WORK/flag"
expect_rc 0
check_results "$WORK/flag" threads --threads 2
grep -q "oversubscribed" "$WORK/out" && fail "--threads 1 named as oversubscribed"
run_bound none 2 "${small[@]}" --threads 0
expect_rc 2
grep -q "^tpbal: error: --threads '0'" "$WORK/err" || fail "--threads 0 not refused in one line"

# two unbound ranks, rank 1 at half speed: one thread each, weighted LB >= 0.85 (before
# the threads were sized, OpenBLAS ran 2 threads per rank here: LB 0.49-0.97 from run to
# run). Work mode (the GEMM repeated): the time mode's spin is sized from the GEMM's own
# time, so beside a busy core a preempted GEMM spins longer (LB 0.79-0.99 against 0.89-0.97)
lb_attempt() {
    rm -rf "$WORK/lb"
    run_bound none 2 --tp 2 --shape 256x512x512 --split row --iters 100 --emulate-speed 1,0.5 \
        --emulate-mode work --out "$WORK/lb"
    expect_rc 0
    check_results "$WORK/lb" threads auto 2
    steady_gate "$WORK/lb" steady 1.15
    timing_check "$WORK/lb" lb weighted 0.85
}
# six attempts, each asserted only on a steady machine (doc/TESTING.md)
attempts "weighted LB of unbound ranks" lb_attempt 6
echo "threads: ok"
