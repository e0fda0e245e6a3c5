# bench/gpu-check-lib.sh - the step machinery of bench/gpu-check.sh (sourced; its test,
# tests/mpi/gpucheck.sh, plants failing and timing-out steps through it): every step under
# a budget and the check's deadline, its verdict said in summary.txt and counted in FAILED
# in this shell (never inside a command substitution, where it would be lost), and at exit
# the details packed into one tarball beside summary.txt and commands.txt.
# Uses OUTDIR, DEADLINE, DRY and T (the tpbal a dry run resolves); sets RUN, SUM, FAILED, RC.

check_start() {
    mkdir -p "$OUTDIR" || exit 2
    RUN="$OUTDIR/run" # every step's files; packed at exit
    SUM="$OUTDIR/summary.txt"
    rm -rf "$RUN" "$OUTDIR/details.tar.gz" # a second run into the same folder starts clean
    mkdir -p "$RUN"
    : >"$SUM"
    : >"$OUTDIR/commands.txt"
    FAILED=0
    LOGGER=
    trap check_exit EXIT
}

say() { echo "$*" | tee -a "$SUM"; }

# fail_step NAME WHY: the step failed (said, and counted)
fail_step() {
    FAILED=1
    say "$1: FAIL${2:+: $2}"
}

# step NAME BUDGET CMD...: run a command under min(BUDGET, time left), killed 5 s after its
# TERM if it does not stop; sets RC. In a dry run a tpbal command is resolved with --dry-run
# (a refusal fails the check); others are only listed.
step() {
    local name=$1 budget=$2
    shift 2
    echo "+ [$name] $*" >>"$OUTDIR/commands.txt"
    if [[ $DRY == 1 ]]; then
        RC=0
        if [[ " $* " == *" $T "* ]]; then
            "$@" --dry-run >"$RUN/$name.txt" 2>&1 || RC=$?
            [[ $RC -eq 0 ]] || fail_step "$name" "refused: $(grep -m1 '^tpbal: error' "$RUN/$name.txt")"
        fi
        return
    fi
    local left=$((DEADLINE - SECONDS))
    if [[ $left -le 0 ]]; then
        say "$name: SKIP: the check's deadline ($DEADLINE s) has passed"
        RC=124
        return
    fi
    [[ $budget -gt $left ]] && budget=$left
    local t0=$SECONDS
    timeout -k 5 "$budget" "$@" >"$RUN/$name.txt" 2>&1
    RC=$?
    [[ $RC -eq 124 || $RC -eq 137 ]] && say "$name: TIMEOUT after $budget s"
    echo "# [$name] rc $RC in $((SECONDS - t0)) s" >>"$OUTDIR/commands.txt"
}

# verdict NAME [DETAIL]: pass or FAIL of the last step by its RC, said with DETAIL
verdict() {
    if [[ $RC -eq 0 ]]; then
        say "$1: pass${2:+ $2}"
    else
        fail_step "$1" "rc $RC${2:+ $2}"
    fi
}

# summary NAME DIR [BARE]: verdict and the named fields of a result directory (dry: what
# tpbal --dry-run resolved)
summary() {
    local name=$1 dir=$2 bare=${3:-} fields
    if [[ $DRY == 1 ]]; then
        [[ $RC -eq 0 ]] && say "$name: resolved: $(grep -m1 '^tpbal: dry run' "$RUN/$name.txt")"
        return
    fi
    fields=$(python3 "$TOP/bench/gpu_summary.py" "$dir" $bare 2>&1 | tail -1)
    verdict "$name" "($fields)"
}

# at exit: the logger stopped, the details packed (summary.txt and commands.txt stay apart),
# and the check's exit status: 1 if a step failed
check_exit() {
    local rc=$?
    [[ -n "$LOGGER" ]] && kill "$LOGGER" 2>/dev/null
    if [[ -d "$RUN" ]]; then
        tar -C "$OUTDIR" -czf "$OUTDIR/details.tar.gz" run 2>/dev/null && rm -rf "$RUN"
    fi
    [[ $rc -eq 0 && $FAILED -ne 0 ]] && rc=1
    exit $rc
}
