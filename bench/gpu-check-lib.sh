# bench/gpu-check-lib.sh - the step machinery of bench/gpu-check.sh (sourced; its test,
# tests/mpi/gpucheck.sh, plants failing and timing-out steps through it): every step under
# a budget and the check's deadline, in a session of its own and marked in its environment so
# that everything it started is killed at its end (a hung mpirun in a process group of its
# own outlived its step on the H200 and disturbed every timed step after it), its verdict -
# its exit status and its figures (gpu_summary.py) - said in summary.txt and counted in FAILED
# in this shell (never inside a command substitution, where it would be lost), and at exit
# the details packed into one tarball beside summary.txt and commands.txt.
# Uses OUTDIR, DEADLINE, DRY and T (the tpbal a dry run resolves), NVIDIA_SMI (default
# nvidia-smi), GPU_CHECK_PLANT (the rehearsal's planted bad figures: plant_env), LOADED (1:
# a rehearsal on a shared machine, timing figures not judged, budgets x4); sets RUN, SUM,
# FAILED, RC.

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

# kill_step MARK: every process whose environment holds TPB_CHECK_STEP=MARK (a step's, and
# all it started, whatever process group or session they moved to), killed
kill_step() {
    local p
    for p in /proc/[0-9]*; do
        grep -qxzs "TPB_CHECK_STEP=$1" "$p/environ" && kill -KILL "${p#/proc/}" 2>/dev/null
    done
    return 0
}

# plant_env NAME: the environment the rehearsal's planted bad figures give step NAME
# (GPU_CHECK_PLANT="kind:step,...", --standin only): ratio:X the bare loop of X on devices at
# half speed (tpbal/bare 2), disturbed:X every other GEMM of X twice as long, emulation:X
# no padding in X's emulation (the partition alone misses); holder:X is said by gpu_free
plant_env() {
    local p plants=${GPU_CHECK_PLANT:-}
    for p in ${plants//,/ }; do
        case $p in
        "ratio:${1#bare-}") [[ $1 == bare-* ]] && echo TPBAL_STANDIN_SPEEDS=0.5,0.5 ;;
        "disturbed:$1") echo TPBAL_STANDIN_ALTERNATE=2 ;;
        "emulation:$1") echo TPBAL_TEST_FAULT=no-padding ;;
        esac
    done
}

# gpu_free NAME: 0 if no other process holds the GPU before timed step NAME, else the step
# fails (another process's kernels would share the GPU with it: two modes of step). A holder
# must still be there after 3 s of looks every half second: the ranks of the step before, just
# ended or killed, may keep their contexts while the driver tears them down; the leftover
# ranks of the first H200 run held the GPU for minutes.
gpu_free() {
    local held plants=${GPU_CHECK_PLANT:-} look
    [[ $DRY == 1 ]] && return 0
    if [[ " ${plants//,/ } " == *" holder:$1 "* ]]; then
        held="4242, python3, 1024 MiB (planted)"
    else
        for look in 1 2 3 4 5 6 7; do
            held=$(${NVIDIA_SMI:-nvidia-smi} --query-compute-apps=pid,process_name,used_memory \
                --format=csv,noheader 2>/dev/null | tr '\n' ';')
            [[ -z "$held" || $look == 7 ]] && break
            sleep 0.5
        done
    fi
    [[ -z "$held" ]] && return 0
    fail_step "$1" "another process holds the GPU before this timed step: ${held%;}"
    RC=1
    return 1
}

# step NAME BUDGET CMD...: run a command under min(BUDGET, time left), killed 5 s after its
# TERM if it does not stop, in a session of its own; whatever it started is killed at its end
# (kill_step); sets RC. In a dry run a tpbal command is resolved with --dry-run (a refusal
# fails the check); others are only listed.
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
    [[ ${LOADED:-0} == 1 ]] && budget=$((budget * 4))
    [[ $budget -gt $left ]] && budget=$left
    local t0=$SECONDS mark="$name.$$.$RANDOM" plant
    plant=$(plant_env "$name")
    [[ -n "$plant" ]] && echo "# [$name] planted: $plant" >>"$OUTDIR/commands.txt"
    # shellcheck disable=SC2086
    TPB_CHECK_STEP=$mark timeout -k 5 "$budget" setsid --wait env $plant "$@" \
        >"$RUN/$name.txt" 2>&1 </dev/null
    RC=$?
    kill_step "$mark"
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

# judged NAME ARGS...: the step's verdict from its exit status (RC) and gpu_summary.py ARGS's
# figures and their verdict, in one line whose words agree: "NAME: pass (figures)", "NAME:
# FAIL: rc N (figures)" or "NAME: FAIL: figures: why (figures)"; LOADED=1: figures that were
# read but miss their goals pass as "NAME: pass (figures; not judged, loaded: why)"
judged() {
    local name=$1 out figs why src=0
    shift
    out=$(python3 "$TOP/bench/gpu_summary.py" "$@" 2>&1) || src=$?
    figs=$(echo "$out" | grep -v '^verdict ' | tail -1)
    why=$(echo "$out" | sed -n 's/^verdict FAIL: //p' | tail -1)
    if [[ $RC -ne 0 ]]; then
        fail_step "$name" "rc $RC${why:+; figures: $why} ($figs)"
    elif [[ ${LOADED:-0} == 1 && $src -eq 3 ]]; then # read; only timing goals missed
        say "$name: pass ($figs; not judged, loaded: $why)"
    elif [[ -n "$why" ]] || ! echo "$out" | grep -q '^verdict pass$'; then
        fail_step "$name" "figures: ${why:-unreadable} ($figs)"
    else
        say "$name: pass ($figs)"
    fi
}

# summary NAME DIR [GPU_SUMMARY ARGS...]: the verdict of a result directory's step (dry: what
# tpbal --dry-run resolved)
summary() {
    local name=$1 dir=$2
    shift 2
    if [[ $DRY == 1 ]]; then
        [[ $RC -eq 0 ]] && say "$name: resolved: $(grep -m1 '^tpbal: dry run' "$RUN/$name.txt")"
        return
    fi
    judged "$name" "$dir" "$@"
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
