# emulate.sh - 2 ranks, rank 1 emulated at half speed: the even split is paced
# by the slow rank (LB <= 0.7), the weighted split, which learns the speeds by
# calibration only, balances it (LB >= 0.85) and is faster.
. "$(dirname "$0")/lib.sh"

tpbal 2 --emulate-speed 1,0.5 --tp 2 --shape 192x768x768 --policy even,weighted \
    --split row,col --iters 15 --check --out "$WORK/emu"
expect_rc 0
cat "$WORK/out"
check_results "$WORK/emu" emulate
check_results "$WORK/emu" all-pass
check_results "$WORK/emu" source calibration
echo "emulate: ok"
