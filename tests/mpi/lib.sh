# tests/mpi/lib.sh - helpers for the integration tests (sourced). The wrapper
# sets MPIRUN; make check sets TPBAL and PYTHON3.
set -u
: "${TPBAL:?TPBAL must point at the tpbal binary}"
PY=${PYTHON3:-python3}
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tpbal-test.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
export OPENBLAS_NUM_THREADS=1

fail() {
    echo "FAIL: $*"
    for f in "$WORK"/out "$WORK"/err; do
        [ -f "$f" ] && { echo "---- $(basename "$f")"; tail -30 "$f"; }
    done
    exit 1
}

# tpbal NP ARGS...: run tpbal on NP ranks, stdout to $WORK/out, stderr to $WORK/err;
# sets RC. A hang is a failure (timeout).
tpbal() {
    local np=$1
    shift
    echo "+ mpirun -np $np tpbal $*"
    timeout 240 $MPIRUN -np "$np" "$TPBAL" "$@" >"$WORK/out" 2>"$WORK/err"
    RC=$?
    [ $RC -ne 124 ] || fail "tpbal hung (killed after 240 s): $*"
}

expect_rc() {
    [ "$RC" -eq "$1" ] || fail "exit code $RC, expected $1"
}

# check_results DIR WHAT ARGS...: the result files are what WHAT says, and the run
# compared with itself holds (tpbal-compare exits 0 whatever the run holds: emulated
# slow ranks, noise, one config or a comm-only sweep).
check_results() {
    "$PY" "$HERE/check_results.py" "$@" || fail "check_results.py $*"
    self_compare "$1"
}

self_compare() {
    if [ -n "${TPBAL_COMPARE:-}" ] && [ -f "$1/results.jsonl" ]; then
        "$TPBAL_COMPARE" "$1" "$1" >"$WORK/self-cmp" 2>&1 ||
            fail "tpbal-compare $1 $1 (itself) exited $?: $(tail -3 "$WORK/self-cmp")"
    fi
}

check_trace() {
    "$PY" "$HERE/check_trace.py" "$@" || fail "check_trace.py $*"
}

# One line from tpbal on stderr, from rank 0 alone (mpirun adds its own notice
# about the non-zero exit; that one is the launcher's, not ours).
# Timing assertions (see DEVELOPERS: a timing test states its false-failure rate).
# timing_check ARGS...: check_results.py ARGS, but a failure ends the attempt with
# exit code 75 (retry) instead of failing the test, or 76 (inconclusive) where the run's
# own noise line says it could not be judged (run_busy).
timing_check() {
    "$PY" "$HERE/check_results.py" "$@" || timing_failed "$1"
    self_compare "$1"
}

# run_busy DIR: true where the run in DIR says in its noise line that other processes took
# more than a quarter of a machine's CPU time beside it (summary cpu_others.share > 0.25, the
# C's TPB_NOISY_LOAD): its timings cannot be judged; the line is printed as the reason
run_busy() {
    "$PY" - "$1" <<'PYEOF'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1] + "/results.jsonl") if l.strip()]
summ = [r for r in recs if r.get("type") == "summary"]
o = (summ[-1].get("cpu_others") or {}) if summ else {}
share = o.get("share")
if isinstance(share, (int, float)) and share > 0.25:
    print("not judged: the run's noise line says other processes took %.0f %% of %s's CPU time "
          "beside it" % (100 * share, o.get("host")))
    sys.exit(0)
sys.exit(1)
PYEOF
}

# timing_failed DIR: end an attempt whose timing assertion on the run in DIR failed: 76
# (inconclusive) where the run itself says the machine was busy, else 75 (retry)
timing_failed() {
    run_busy "$1" && exit 76
    exit 75
}

# steady_gate DIR CHECK ARGS...: check_results.py DIR CHECK ARGS (steady TOL, or
# steady-rerun DIR2 TOL); a machine whose ranks changed speed during the run (or between
# the runs) ends the attempt with exit code 76 (inconclusive, see attempts)
steady_gate() {
    local rc=0
    "$PY" "$HERE/check_results.py" "$@" || rc=$?
    [ $rc -ne 76 ] || exit 76
    [ $rc -eq 0 ] || fail "check_results.py $*"
}

# CPU time the whole machine spent (user, nice, system, irq, softirq, steal), and the CPU
# time of a shell's waited-for children (cutime + cstime of /proc/PID/stat), in seconds
machine_cpu() { awk '/^cpu /{printf "%.2f\n", ($2 + $3 + $4 + $7 + $8 + $9) / 100}' /proc/stat; }
children_cpu() { awk '{printf "%.2f\n", ($16 + $17) / 100}' "/proc/$1/stat"; }

# cpu_mark, then cpu_others: the share of the machine's CPU time since the mark that this
# shell's children (the runs) did not use - another process beside the test. cpu_mark is
# called in the shell whose children are the runs (an attempt's subshell).
cpu_mark() {
    CPU_ME=$(sh -c 'echo $PPID')
    CPU_M0=$(machine_cpu) CPU_C0=$(children_cpu "$CPU_ME") CPU_T0=$(date +%s.%N)
}
cpu_others() {
    awk -v b="$CPU_M0" -v a="$(machine_cpu)" -v c0="$CPU_C0" -v c1="$(children_cpu "$CPU_ME")" \
        -v t0="$CPU_T0" -v t1="$(date +%s.%N)" -v n="$(nproc)" \
        'BEGIN{printf "%.2f\n", ((a - b) - (c1 - c0)) / ((t1 - t0) * n)}'
}

# attempts NAME FUNC [N [Q]]: run FUNC (in a subshell) up to N times (default 3) while it exits
# 75 (a timing assertion failed) or 76 (inconclusive: the machine was not steady, nothing
# asserted); every such attempt is printed, never retried silently. Any other failure
# (wrong results, a crash, a hang) fails at once. When every attempt was inconclusive the
# test says so in a NOT ASSERTED line and goes on; one failed assertion and no pass fails.
# Q > 0: after Q inconclusive attempts and no failed one, stop there (not asserted): the
# further attempts are for a machine that failed one, not for one that cannot tell.
attempts() {
    local name=$1 fn=$2 n=${3:-3} quiet=${4:-0} a rc failed=0
    for a in $(seq 1 "$n"); do
        if [ "$quiet" -gt 0 ] && [ $failed -eq 0 ] && [ $((a - 1)) -ge "$quiet" ]; then
            echo "$name: NOT ASSERTED: the machine was not steady in any of $((a - 1)) attempts"
            return 0
        fi
        rc=0
        ("$fn" "$a") || rc=$?
        case $rc in
        0)
            echo "$name: ok (attempt $a of $n)"
            return 0
            ;;
        75)
            echo "$name: attempt $a of $n failed on timing (printed above)"
            failed=$((failed + 1))
            ;;
        76) echo "$name: attempt $a of $n inconclusive: the machine was not steady (printed above)" ;;
        *) exit "$rc" ;;
        esac
    done
    [ $failed -gt 0 ] || {
        echo "$name: NOT ASSERTED: the machine was not steady in any of $n attempts"
        return 0
    }
    fail "$name: the timing assertions failed in $failed of $n attempts (the others inconclusive)"
}

one_error_line() {
    [ "$(grep -c '^tpbal' "$WORK/err")" -eq 1 ] || fail "expected one tpbal line on stderr ($1)"
}

# refused "EXPECTED TEXT" ARGS...: tpbal on 2 ranks exits 2 with one line naming the problem
refused() {
    local want=$1
    shift
    tpbal 2 "$@"
    expect_rc 2
    one_error_line "$*"
    grep -q -- "$want" "$WORK/err" || fail "stderr lacks '$want' for $*"
}
