# timeline.sh - straggler timelines: an injected compute delay makes rank 1 the
# straggler and the others wait for it; a skewed clock is measured and
# corrected; a periodic delay is reported as spikes blamed on rank 1; the
# Perfetto traces have the documented structure.
. "$(dirname "$0")/lib.sh"

for np in 2 4; do
    d="$WORK/delay$np"
    tpbal "$np" --tp "$np" --inject-delay 1:2000 --shape 32x128x128 --policy even \
        --iters 30 --out "$d"
    expect_rc 0
    check_results "$d" straggler 1 0.95 1500 3000
    check_trace "$d" "$np"
done

d="$WORK/clock"
tpbal 2 --tp 2 --inject-clock-offset 1:50000 --shape 32x128x128 --iters 20 --out "$d"
expect_rc 0
check_results "$d" clock 1 50000 100
check_trace "$d" 2

# warm-up 5, so the delay every 10th iteration lands on measured iterations 4, 14, 24, 34
d="$WORK/spikes"
tpbal 4 --tp 4 --inject-delay 1:20000:10 --shape 64x256x256 --policy even --split row \
    --warmup 5 --iters 40 --out "$d"
expect_rc 0
check_results "$d" spikes 1 4 14 24 34
grep -q "straggler" "$WORK/out" || fail "table has no straggler column"
echo "timeline: ok"
