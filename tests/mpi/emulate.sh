# emulate.sh - 2 ranks, rank 1 emulated at an eighth of the speed: the even split
# is paced by the slow rank, the weighted split, which learns the speeds by
# calibration only, balances it and is faster.
#
# Timing on a shared 2-vCPU machine: the contrast is large (8x) so that the bounds
# of check_results.py hold through a 2x disturbance of one rank, and a failed
# attempt is printed and tried again (three attempts at most). Correctness
# (--check), the speed source and the calibration's record are asserted on every
# attempt. A timing assertion that fails where the run's own noise line says others took
# over a quarter of the CPUs makes the attempt inconclusive, not failed (lib.sh run_busy).
# False-failure rates: scripts/flake-rate measures them; the figures are in doc/TESTING.md.
. "$(dirname "$0")/lib.sh"

attempt() {
    d="$WORK/emu$1"
    tpbal 2 --emulate-speed 1,0.125 --tp 2 --shape 192x768x768 --policy even,weighted \
        --split row,col --iters 30 --check --out "$d"
    expect_rc 0
    cat "$WORK/out"
    check_results "$d" all-pass
    check_results "$d" source calibration
    check_results "$d" calibrated
    timing_check "$d" emulate 0.125
    grep -q "^# use for 192x768x768: .* weighted at tp 2" "$WORK/out" || timing_failed "$d"
    timing_check "$d" answer weighted 1
}
attempts emulate attempt
