# gpucheck.sh - bench/gpu-check.sh --dry-run: every step has a line in summary.txt, every
# tpbal command of the check is resolved by `tpbal --dry-run --backend cuda` (no GPU
# needed) and a refused one fails the dry run (planted below: the shared-GPU step with
# bf16, which --comm mpi refuses), the plan fits in 8 minutes, and the host-side parts
# (parsing named result fields) run on a host-backend result; --help, an unknown argument, and
# an OUT that is a link or another program's folder (refused, untouched); bench/gpu-lease.sh's
# refusals (not a bundle, an OUT that is a link or holds its files). Nothing here is
# timed: it runs beside other tests; gpucheck-figures.sh judges the rehearsal's figures, alone.
. "$(dirname "$0")/lib.sh"
top=${TPBAL_SRCDIR:?}
build=$(cd "$(dirname "$TPBAL")/.." && pwd)
OUT="$WORK/gc" BUILD="$build" bash "$top/bench/gpu-check.sh" --dry-run >"$WORK/gc.out" 2>&1 ||
    { cat "$WORK/gc.out"; fail "gpu-check.sh --dry-run failed"; }
cat "$WORK/gc.out"
s="$WORK/gc/summary.txt"
plan=$(sed -n 's/^# plan: \([0-9]*\) s.*/\1/p' "$s")
[ -n "$plan" ] && [ "$plan" -le 480 ] || fail "the planned total ($plan s) is not under 8 minutes"
if grep -q "^dry-run: SKIP: .* built without CUDA" "$s"; then
    echo "gpucheck: tpbal built without CUDA (a host-only build): commands not resolved"
    exit 0
fi
for step in device build tests check-fp32 check-tf32 check-fp16 check-bf16 check-fp8 \
    timed-bf16 timed-fp8 gate-bf16 emulate-time-0.25 emulate-time-0.5 emulate-time-0.75 \
    emulate-work-0.5 shared-tp2 shared-col-ar nccl-refused comm nccl sweep; do
    grep -q "^$step: " "$s" || fail "no summary line for step $step"
done
grep -q "^check-bf16: resolved: tpbal: dry run: [0-9]* configs would be measured" "$s" ||
    fail "check-bf16 not resolved"
grep -q "^dry-host: .*configs [0-9]*, check pass" "$s" || fail "result fields not parsed"
grep -q "^dry-host: .*emulation .* achieved" "$s" || fail "emulation not summarised"
ntpbal=$(grep -c " $build/src/tpbal " "$WORK/gc/commands.txt")
[ "$ntpbal" -ge 15 ] || fail "only $ntpbal tpbal commands in the check"
[ "$(grep " $build/src/tpbal " "$WORK/gc/commands.txt" | grep -c -- '--timeout 30')" -eq "$ntpbal" ] ||
    fail "a tpbal command without --timeout 30"
grep -q "FAIL" "$s" && fail "the dry run failed a step"
# what comes back from the GPU machine: at most 8 files (summary, commands, one tarball)
[ "$(ls "$WORK/gc" | wc -l)" -le 8 ] || fail "more than 8 files in the check's folder: $(ls "$WORK/gc")"
tar -tzf "$WORK/gc/details.tar.gz" | grep -q "^run/dry-host/results.jsonl$" || fail "details not packed"
grep -q "^sweep: resolved: tpbal: dry run: .* on 1 ranks" "$s" || fail "the sweep not resolved at 1 rank"
grep -q "^nccl: resolved: tpbal: dry run: .* on 2 ranks" "$s" || fail "the NCCL steps not resolved at 2"
# a second run into the same folder
OUT="$WORK/gc" BUILD="$build" bash "$top/bench/gpu-check.sh" --dry-run >"$WORK/gc.out" 2>&1 ||
    { cat "$WORK/gc.out"; fail "a second gpu-check.sh --dry-run into the same folder failed"; }

# a refused command line fails the dry run, naming the step and tpbal's one line
mkdir -p "$WORK/tree/bench"
cp "$top/bench/gpu-check-lib.sh" "$top/bench/gpu_summary.py" "$WORK/tree/bench/"
sed 's/--comm mpi --dtype fp32 \\$/--comm mpi --dtype bf16 \\/' "$top/bench/gpu-check.sh" \
    >"$WORK/tree/bench/gpu-check.sh"
grep -q -- "--comm mpi --dtype bf16" "$WORK/tree/bench/gpu-check.sh" || fail "could not plant the refusal"
RC=0
OUT="$WORK/gp" BUILD="$build" bash "$WORK/tree/bench/gpu-check.sh" --dry-run >"$WORK/gp.out" 2>&1 || RC=$?
[ "$RC" -ne 0 ] || { cat "$WORK/gp.out"; fail "a refused command passed the dry run"; }
grep -q "^shared-tp2: FAIL: refused: tpbal: error: --comm mpi reduces fp32 and fp64 only" \
    "$WORK/gp/summary.txt" || { cat "$WORK/gp.out"; fail "the refusal was not named"; }

# the step machinery itself: a failing and a timing-out step planted among passing ones fail
# the check (exit 1) and are named; the details are packed; a GPU holder that leaves within
# 3 s (the step before's ranks, their contexts torn down) is waited for, one that stays fails
# the timed step after those 3 s (a stand-in nvidia-smi: a holder for its first SMI_HOLD looks)
cat >"$WORK/smi" <<'EOF'
#!/bin/sh
n=$(($(cat "$SMI_COUNT" 2>/dev/null || echo 0) + 1))
echo "$n" >"$SMI_COUNT"
[ "$n" -gt "$SMI_HOLD" ] || echo "4343, leftover, 10 MiB"
EOF
chmod +x "$WORK/smi"
cat >"$WORK/planted-steps.sh" <<EOF
OUTDIR="$WORK/ps" DEADLINE=60 DRY=0 T=none TOP="$top"
source "$top/bench/gpu-check-lib.sh"
check_start
step passing 5 true
verdict passing
step failing 5 false
verdict failing
step slow 1 sleep 30
verdict slow "(planted)"
step escaped 5 bash -c 'setsid sleep 307 </dev/null >/dev/null 2>&1 & exit 0'
verdict escaped
step after 5 true
verdict after
export SMI_COUNT="$WORK/smi.n" SMI_HOLD=3
NVIDIA_SMI="$WORK/smi" gpu_free leaving && say "leaving: free after \$(cat "$WORK/smi.n") looks"
rm -f "$WORK/smi.n"
SMI_HOLD=1000 NVIDIA_SMI="$WORK/smi" gpu_free held || say "held: \$(cat "$WORK/smi.n") looks"
exit \$FAILED
EOF
RC=0
timeout 60 bash "$WORK/planted-steps.sh" >"$WORK/ps.out" 2>&1 || RC=$?
cat "$WORK/ps.out"
[ "$RC" -eq 1 ] || fail "planted failures: exit $RC, expected 1"
# a process a step started in a session of its own (as tests/mpi/lib.sh's mpirun escaped the
# H200 check's tests step and held the GPU for three minutes) does not outlive the step
if pgrep -f "^sleep 307$" >/dev/null; then
    pkill -f "^sleep 307$"
    fail "a step's process in a session of its own outlived the step"
fi
for want in "^passing: pass" "^failing: FAIL: rc 1" "^slow: TIMEOUT after 1 s" \
    "^slow: FAIL: rc 124 (planted)" "^escaped: pass" "^after: pass" "^leaving: free after 4 looks" \
    "^held: FAIL: another process holds the GPU before this timed step: 4343, leftover, 10 MiB" \
    "^held: 7 looks"; do
    grep -q "$want" "$WORK/ps/summary.txt" || fail "summary.txt lacks '$want'"
done
[ "$(ls "$WORK/ps" | tr '\n' ' ')" = "commands.txt details.tar.gz summary.txt " ] ||
    fail "the check's folder: $(ls "$WORK/ps")"
tar -tzf "$WORK/ps/details.tar.gz" | grep -q "^run/failing.txt$" || fail "a step's output not packed"

# its command line: --help explains and exits 0; anything else is refused with exit 2
bash "$top/bench/gpu-check.sh" --help >"$WORK/h.out" 2>&1 || fail "--help: exit $?"
grep -q "^usage: bench/gpu-check.sh \[--dry-run | --standin\]" "$WORK/h.out" || fail "--help: no usage"
RC=0
OUT="$WORK/never" bash "$top/bench/gpu-check.sh" --gpus 2 >"$WORK/bad.out" 2>&1 || RC=$?
[ "$RC" -eq 2 ] && grep -q "unknown argument '--gpus'" "$WORK/bad.out" ||
    fail "an unknown argument: exit $RC, $(head -1 "$WORK/bad.out")"
[ ! -e "$WORK/never" ] || fail "an unknown argument made the output folder"
# OUT: a link or a folder of something else is refused and left as it was
mkdir -p "$WORK/mine/run" && echo keep >"$WORK/mine/run/data" && ln -s "$WORK/mine" "$WORK/link"
for o in "$WORK/link" "$WORK/mine"; do
    RC=0
    OUT="$o" BUILD="$build" bash "$top/bench/gpu-check.sh" --dry-run >"$WORK/o.out" 2>&1 || RC=$?
    [ "$RC" -eq 2 ] && grep -Eq "symbolic link|files of something else" "$WORK/o.out" ||
        fail "OUT=$o: exit $RC, $(head -1 "$WORK/o.out")"
done
[ "$(cat "$WORK/mine/run/data")" = keep ] && [ "$(ls -A "$WORK/mine")" = run ] ||
    fail "a refused OUT was changed"
# bench/gpu-lease.sh (a lent machine's one script; bundle.sh runs its rehearsal): --help; a
# folder that is not a bundle, an OUT that is a link or holds a lease's files: exit 2, nothing
# written (a folder with a bundle's marker stands in for one: the lease stops before using it)
L="$top/bench/gpu-lease.sh"
bash "$L" --help | grep -q "^bench/gpu-lease.sh \[--standin\] \[BUNDLE\]" || fail "gpu-lease --help"
lease_refused() { # WHY OUT ARGS...
    local why=$1 o=$2
    shift 2
    RC=0
    OUT="$o" bash "$L" "$@" >"$WORK/l.out" 2>&1 || RC=$?
    [ "$RC" -eq 2 ] && grep -q "$why" "$WORK/l.out" ||
        fail "gpu-lease $*: exit $RC, $(head -1 "$WORK/l.out")"
}
mkdir -p "$WORK/fb/bench" && : >"$WORK/fb/.tpbal-bundle" && : >"$WORK/fb/bench/gpu-check.sh"
chmod +x "$WORK/fb/bench/gpu-check.sh"
lease_refused "is not a bundle" "$WORK/l1" "$WORK/mine"
lease_refused "symbolic link" "$WORK/link" --standin "$WORK/fb"
mkdir -p "$WORK/l2" && echo keep >"$WORK/l2/lease.txt"
lease_refused "already holds lease.txt" "$WORK/l2" --standin "$WORK/fb"
[ ! -e "$WORK/l1" ] && [ "$(cat "$WORK/l2/lease.txt")" = keep ] &&
    [ "$(ls -A "$WORK/l2")" = lease.txt ] && [ "$(ls -A "$WORK/mine")" = run ] ||
    fail "a refused lease wrote something"
echo "gpucheck: ok"
