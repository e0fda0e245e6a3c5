# bench/gpu-check-lib.sh - the step machinery of bench/gpu-check.sh (sourced; its test,
# tests/mpi/gpucheck.sh, plants failing and timing-out steps through it): every step under
# a budget and the check's deadline, its verdict said in summary.txt and counted in FAILED
# in this shell (never inside a command substitution, where it would be lost), and at exit
# the details packed into one tarball beside summary.txt and commands.txt.
# Uses OUTDIR, DEADLINE, DRY and T (the tpbal a dry run resolves); sets RUN, SUM, FAILED, RC.

check_start() {
    # the folder is the check's own: new, empty, or marked by an earlier check (.tpbal-gpu-check);
    # only what a check makes is ever removed from it (OUT=$HOME must not lose ~/run)
    if [[ -L "$OUTDIR" ]]; then
        echo "gpu-check: $OUTDIR is a symbolic link: give a folder" >&2
        exit 2
    fi
    if [[ -e "$OUTDIR" && ! -f "$OUTDIR/.tpbal-gpu-check" && -n "$(ls -A "$OUTDIR" 2>/dev/null)" ]]; then
        echo "gpu-check: $OUTDIR holds files of something else: give a new or empty folder" >&2
        exit 2
    fi
    mkdir -p "$OUTDIR" || exit 2
    [[ -f "$OUTDIR/.tpbal-gpu-check" ]] || (set -C && : >"$OUTDIR/.tpbal-gpu-check") || exit 2
    RUN="$OUTDIR/run" # every step's files; packed at exit
    SUM="$OUTDIR/summary.txt"
    # a second run into the same folder starts clean; its files are made new (noclobber:
    # O_EXCL, so a link planted in their place fails the check instead of being written
    # through), and the tarball is renamed into place (check_exit)
    rm -rf "$RUN" "$OUTDIR/details.tar.gz" "$SUM" "$OUTDIR/commands.txt"
    mkdir "$RUN" || exit 2
    (set -C && : >"$SUM" && : >"$OUTDIR/commands.txt") || {
        echo "gpu-check: cannot create $SUM or commands.txt as new files" >&2
        exit 2
    }
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
    local tmp
    if [[ -d "$RUN" ]] && tmp=$(mktemp "$OUTDIR/.details.XXXXXX"); then
        if tar -C "$OUTDIR" -czf - run >"$tmp" 2>/dev/null &&
            chmod "$(printf '%o' $((0666 & ~0$(umask))))" "$tmp" && # mktemp's 0600: the umask's
            mv -f "$tmp" "$OUTDIR/details.tar.gz"; then
            rm -rf "$RUN"
        else
            rm -f "$tmp"
        fi
    fi
    [[ $rc -eq 0 && $FAILED -ne 0 ]] && rc=1
    exit $rc
}
