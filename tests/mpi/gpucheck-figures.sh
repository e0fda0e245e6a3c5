# gpucheck-figures.sh - bench/gpu-check.sh --standin judges the figures of its timed steps,
# alone (the stand-in's timings are its time model's only on a quiet machine): gpucheck.sh
# checks the rest of the check, beside other tests.
. "$(dirname "$0")/lib.sh"
top=${TPBAL_SRCDIR:?}
build=$(cd "$(dirname "$TPBAL")/.." && pwd)
# the rehearsal on the stand-in judges figures, not exit codes (the H200 check printed "pass"
# beside a failing ratio): four timed steps pass as they are, and fail, each naming why, with
# one bad figure of each kind planted (tpbal/bare outside [0.97, 1.10], a disturbed config,
# an emulation that misses its factor, another process on the GPU before a timed step), and
# with GPU_CHECK_LOADED=1 (bundle.sh's) the missed goals printed, not judged
if [ -x "$build/tests/standin/run" ] && "$TPBAL" --version | grep -q "^backend cuda: built"; then
    only="timed-bf16 timed-fp8 gate-bf16 emulate-time-0.5"
    RC=0
    OUT="$WORK/rc" BUILD="$build" GPU_CHECK_ONLY="$only" bash "$top/bench/gpu-check.sh" --standin \
        >"$WORK/rc.out" 2>&1 || RC=$?
    [ "$RC" -eq 0 ] || { cat "$WORK/rc.out"; fail "the rehearsal's timed steps: exit $RC"; }
    for st in timed-bf16 timed-fp8 gate-bf16 emulate-time-0.5 emulate-time-0.5-factor; do
        grep -q "^$st: pass (" "$WORK/rc/summary.txt" || fail "rehearsal: $st did not pass"
    done
    # how far a GPU's marks may lie from their events (its anchors' brackets), said per step
    grep -q "^timed-bf16: pass (.*, marks within [0-9.e+-]* us" "$WORK/rc/summary.txt" ||
        fail "rehearsal: timed-bf16 does not say how far its marks may lie from their events"
    RC=0
    OUT="$WORK/rp" BUILD="$build" GPU_CHECK_ONLY="$only" \
        GPU_CHECK_PLANT="ratio:timed-fp8,disturbed:timed-bf16,emulation:emulate-time-0.5,holder:gate-bf16" \
        bash "$top/bench/gpu-check.sh" --standin >"$WORK/rp.out" 2>&1 || RC=$?
    grep -v '^#' "$WORK/rp/summary.txt" | cut -c1-160
    [ "$RC" -eq 1 ] || fail "the planted rehearsal: exit $RC, expected 1"
    s="$WORK/rp/summary.txt"
    grep -q "^timed-fp8: FAIL: figures: tpbal/bare 1\.9" "$s" || fail "planted ratio not caught"
    grep -q "^timed-bf16: FAIL: figures: config 0 disturbed (bimodal" "$s" || fail "planted disturbance"
    grep -q "^gate-bf16: FAIL: another process holds the GPU" "$s" || fail "planted holder"
    grep -q "^emulate-time-0.5-factor: FAIL: .*misses the 0.50 asked" "$s" || fail "planted emulation miss"
    if grep -E "^[a-z0-9.-]+: (pass|FAIL).*(FAIL|pass)" "$s" | grep -Eq ": pass .*FAIL|: FAIL.* pass"; then
        fail "a summary line says pass and FAIL at once"
    fi
    # loaded (GPU_CHECK_LOADED=1, bundle.sh's rehearsal beside other tests): the same missed
    # goals printed, not judged, and the check passes; the mode is the rehearsal's only
    RC=0
    OUT="$WORK/rl" BUILD="$build" GPU_CHECK_ONLY="timed-bf16 emulate-time-0.5" GPU_CHECK_LOADED=1 \
        GPU_CHECK_PLANT="ratio:timed-bf16,emulation:emulate-time-0.5" \
        bash "$top/bench/gpu-check.sh" --standin >"$WORK/rl.out" 2>&1 || RC=$?
    s="$WORK/rl/summary.txt"
    grep -v '^#' "$s" | cut -c1-200
    [ "$RC" -eq 0 ] || fail "the loaded rehearsal with missed goals: exit $RC, expected 0"
    grep -q "^# loaded (GPU_CHECK_LOADED=1)" "$s" || fail "the loaded rehearsal did not say so"
    grep -q "^timed-bf16: pass (.*; not judged, loaded: tpbal/bare 1\.9" "$s" || fail "loaded: the ratio"
    grep -q "^emulate-time-0.5-factor: pass (.*; not judged, loaded: .*misses the 0.50 asked" "$s" ||
        fail "loaded: the emulation's miss"
    grep -q "FAIL" "$s" && fail "a loaded rehearsal's line says FAIL"
    for v in "GPU_CHECK_LOADED=1 --dry-run" "GPU_CHECK_LOADED=2 --standin"; do
        RC=0
        env "${v% *}" OUT="$WORK/never3" BUILD="$build" bash "$top/bench/gpu-check.sh" "${v#* }" \
            >"$WORK/pl.out" 2>&1 || RC=$?
        [ "$RC" -eq 2 ] && grep -q "GPU_CHECK_LOADED" "$WORK/pl.out" && [ ! -e "$WORK/never3" ] ||
            fail "$v: exit $RC, $(head -1 "$WORK/pl.out")"
    done
    RC=0
    GPU_CHECK_PLANT=holder:timed-bf16 OUT="$WORK/never2" bash "$top/bench/gpu-check.sh" --dry-run \
        >"$WORK/pg.out" 2>&1 || RC=$?
    [ "$RC" -eq 2 ] && grep -q "for the rehearsal (--standin) only" "$WORK/pg.out" ||
        fail "a plant outside the rehearsal: exit $RC"
else
    echo "SKIP: the rehearsal needs a CUDA build (the stand-in)"
    exit 77
fi
echo "gpucheck-figures: ok"
