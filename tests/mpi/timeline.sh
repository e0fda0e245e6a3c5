# timeline.sh - straggler timelines: an injected compute delay makes rank 1 the
# straggler and the others wait for it; a skewed clock is measured and
# corrected; a periodic delay is reported as spikes blamed on rank 1; the
# Perfetto traces have the documented structure.
#
# Timing: the injected delays (30 ms, 60 ms) are long against the scheduler's
# time slices on a shared 2-vCPU machine, where 4 ranks and a busy process take
# turns on the cores; a failed timing assertion is printed and the attempt is
# repeated (three at most). Trace structure and clock correction are asserted on
# every attempt. False-failure rates: doc/TESTING.md.
. "$(dirname "$0")/lib.sh"

delays() {
    for np in 2 4; do
        d="$WORK/delay$np-$1"
        tpbal "$np" --tp "$np" --inject-delay 1:30000 --shape 32x128x128 --policy even \
            --iters 20 --out "$d"
        expect_rc 0
        check_trace "$d" "$np"
        timing_check "$d" straggler 1 0.9 15000 48000
    done
}
attempts "timeline delays" delays

d="$WORK/clock"
tpbal 2 --tp 2 --inject-clock-offset 1:50000 --shape 32x128x128 --iters 20 --out "$d"
expect_rc 0
check_results "$d" clock 1 50000 100
check_trace "$d" 2

# warm-up 5, so the delay every 10th iteration lands on measured iterations 4, 14, 24, 34
spikes() {
    d="$WORK/spikes$1"
    tpbal 4 --tp 4 --inject-delay 1:60000:10 --shape 64x256x256 --policy even --split row \
        --warmup 5 --iters 40 --out "$d"
    expect_rc 0
    grep -q "straggler" "$WORK/out" || fail "table has no straggler column"
    timing_check "$d" spikes 1 4 14 24 34
}
attempts "timeline spikes" spikes
echo "timeline: ok"
