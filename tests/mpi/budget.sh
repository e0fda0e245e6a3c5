# budget.sh - --budget (issue 42): a set of policies measured side by side takes more looks
# while its speed-up or its persistent straggler is open, and the records say so consistently (check_budget.py: looks,
# iterations, rounds, the summary's counts, each verdict's level); --budget with --block; the
# CUDA path on the stand-in (marks read between looks, more recorded after them); a bad value
# refused in one line; without --budget no budget key is written.
# Whether a set is open after its first look depends on this machine's noise: the checks of
# consistency hold in every attempt; "a set took a second look" is asked of at least one of
# 3 attempts (4 on the stand-in; rank 1 at 0.95: the speed-up sits at the 5 % tolerance's
# edge, and 8 iterations a look leave it open). Measured here (AMD, 2 vCPUs): the host case
# took a second look in 16 of 16 runs, and in 8 of 8 beside a busy core (12 iterations a look:
# 23 of 30); the stand-in case in 9 of 10. A false failure needs every attempt to miss:
# about (1/17)^3 and (1/10)^4, under 1 in 4,000 together.
. "$(dirname "$0")/lib.sh"

refused "expected seconds from 0 to 1e+07" --budget 2x
refused "expected seconds from 0 to 1e+07" --budget -5

tpbal 2 --tp 2 --split row --shape 128x256x256 --iters 12 --warmup 2 --speeds 1,1 --out "$WORK/none"
expect_rc 0
! grep -q "budget" "$WORK/none/results.jsonl" || fail "budget keys without --budget"

host_case() {
    rm -rf "$WORK/b"
    tpbal 2 --tp 2 --split row,col --shape 256x512x512 --iters 8 --warmup 2 --budget 1m \
        --emulate-speed 1,0.95 --out "$WORK/b"
    expect_rc 0
    grep -q "^# budget: .* spent on more looks of" "$WORK/out" || fail "no budget line"
    "$PY" "$HERE/check_budget.py" "$WORK/b" 8 extended
    rc=$?
    [ $rc -eq 0 ] || { [ $rc -eq 75 ] && exit 75; fail "check_budget.py"; }
    grep -q "look.* of --budget, at " "$WORK/out" || fail "no verdict with its looks"
    # after the looks, no advice to do what --budget already did
    ! grep "as long as it could" "$WORK/out" | grep -q "measure longer" ||
        fail "advice to measure longer after the budget's looks"
}
attempts "host: a second look" host_case 3

# the persistent straggler keeps a set open: 12 iterations in 3 rounds give each config 3
# blocks, 6 in the set, fewer than the 7 the test needs at look 1's share of 1 % (0.5 %) even
# where rank 1 is the slowest in all of them, so the set takes a second look whatever its
# speed-up says (no timing in this: the count of blocks decides); every straggler test of the
# answer is held to 1 % spent over the looks (check_budget.py recomputes the share)
# (the heartbeat every 5 ms: a later look is counted within it, never "iteration 221 of 50";
# a look is 28 iterations of 1 ms or more, so beats fall in each, whatever their phase: at
# 50 ms the first look's beat could be the last before the second look ended)
TPBAL_TEST_BEAT_S=0.005 tpbal 2 --tp 2 --split row --shape 256x512x512 --iters 12 --warmup 2 \
    --budget 30 --emulate-speed 1,0.5 --wide --out "$WORK/s"
expect_rc 0
grep -q "^tpbal: config 0 (1 of 2, look 2 of its --budget set): iteration [0-9]* of [0-9]*," \
    "$WORK/err" || fail "no heartbeat in the second look: $(grep -m3 iteration "$WORK/err")"
awk '/: iteration [0-9]+ of [0-9]+,/ { split($0, a, /iteration /); split(a[2], b, / of |,/)
     if (b[1] + 0 > b[2] + 0) bad = 1 } END { exit bad }' "$WORK/err" ||
    fail "a heartbeat past its planned iterations: $(grep -m3 iteration "$WORK/err")"
grep -q "^tpbal: budget: the persistent straggler (tp 2, row, set 0) open after look 1: rank [01] the slowest in [0-9]* of [0-9]* windows, 7 needed (chance alone names one at most once in 200 runs); too few to name one; measuring the set again$" "$WORK/err" ||
    fail "the straggler did not keep the set open: $(grep budget "$WORK/err")"
"$PY" "$HERE/check_budget.py" "$WORK/s" 12 extended || fail "check_budget.py (the straggler's look)"
grep -q "^# budget: .* (\([01]\) for the persistent straggler alone, 0 for a block's TP ranking alone)" "$WORK/out" || fail "no budget line"

# --block at two TP degrees: a block's GEMMs are one unit of its set and take its looks; a
# degree's block is measured again while its own step is known less closely than ranking the
# degrees within 5 % needs (+-2.5 %): rank 0 sleeping 3 ms in every second iteration makes
# the tp 1 block's steps two-valued, its interval far wider at look 1 whatever the machine's
# noise (no timing in this); each use line's interval at the level of the later block's
# looks (check_budget.py), the blocks and their use lines whole (check_block.py)
printf 'qkv 128 256 256 col\no 128 256 256 row\n' >"$WORK/tiny.shapes"
tpbal 2 --preset "$WORK/tiny.shapes" --block --tp 1,2 --iters 12 --warmup 2 --check --budget 20 \
    --inject-delay 0:3000:2 --wide --out "$WORK/blk"
expect_rc 0
grep -q "^tpbal: budget: the block at tp 1 (set 0) after look 1: its step known to +-[0-9.]* % at 97.50 %, wider than the +-2.5 % that ranking its TP degrees within 5 % needs; measuring the set again$" "$WORK/err" ||
    fail "the tp 1 block was not measured again for its precision: $(grep budget "$WORK/err" | head -3)"
"$PY" "$HERE/check_budget.py" "$WORK/blk" 12 extended || fail "check_budget.py (--block)"
"$PY" "$HERE/check_block.py" "$WORK/blk" qkv,o || fail "check_block.py (--block --budget)"
# the answer's '#' lines unfolded (a long one goes on in "#     " lines)
sed -e ':a' -e 'N' -e '$!ba' -e 's/\n#     / /g' "$WORK/out" >"$WORK/unfolded"
grep -q "^# use for block tiny, highest tokens/s per rank (throughput): .* at [0-9.]* % (--budget: [1-8] looks\{0,1\} of tp 2, measured after tp 1)" "$WORK/unfolded" ||
    fail "the use line does not say its level: $(grep -A1 "^# use for block" "$WORK/out")"

# the CUDA backend on the stand-in: marks read after a look, more recorded after them
build=$(cd "$(dirname "$TPBAL")/.." && pwd)
if "$TPBAL" --version | grep -q "^backend cuda: built" && [ -x "$build/tests/standin/run" ]; then
    export OMPI_MCA_btl_vader_single_copy_mechanism=none
    gpu_case() {
        rm -rf "$WORK/g"
        MPIRUN="$build/tests/standin/run $MPIRUN" TPBAL_STANDIN_GFLOPS=20 \
            tpbal 2 --backend cuda --tp 2 --split row --shape 256x512x512 --iters 12 \
            --warmup 2 --budget 30 --emulate-speed 1,0.9 --out "$WORK/g"
        expect_rc 0
        ! grep -q "^tpbal-standin:" "$WORK/err" || fail "the stand-in reported a misuse"
        "$PY" "$HERE/check_budget.py" "$WORK/g" 12 extended
        rc=$?
        [ $rc -eq 0 ] || { [ $rc -eq 75 ] && exit 75; fail "check_budget.py (cuda)"; }
    }
    attempts "stand-in: a second look" gpu_case 4
    # the block's precision on the stand-in: a set of one unit in rounds, looks after looks
    MPIRUN="$build/tests/standin/run $MPIRUN" TPBAL_STANDIN_GFLOPS=20 \
        tpbal 2 --backend cuda --preset "$WORK/tiny.shapes" --block --tp 1,2 --iters 12 \
        --warmup 2 --check --budget 20 --inject-delay 0:3000:2 --out "$WORK/gb"
    expect_rc 0
    ! grep -q "^tpbal-standin:" "$WORK/err" || fail "the stand-in reported a misuse (--block)"
    grep -q "^tpbal: budget: the block at tp 1 (set 0) after look 1: " "$WORK/err" ||
        fail "stand-in: the tp 1 block was not measured again"
    "$PY" "$HERE/check_budget.py" "$WORK/gb" 12 extended || fail "check_budget.py (cuda, --block)"
    "$PY" "$HERE/check_block.py" "$WORK/gb" qkv,o || fail "check_block.py (cuda, --block)"
else
    echo "budget: no CUDA build: the stand-in case is not run"
fi
echo "budget: ok"
