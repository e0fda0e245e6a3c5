# sweep.sh - 1, 2 and 4 ranks (oversubscribed) sweep both splits and both
# policies with --check; every config must verify and the result files must
# carry the documented fields; a TP degree whose first entry is skipped runs on its own groups.
. "$(dirname "$0")/lib.sh"

for np in 1 2 4; do
    out="$WORK/np$np"
    tpbal "$np" --shape 96x200x136,64x136x200 --split row,col --policy even,weighted \
        --check --iters 5 --warmup 2 --out "$out"
    expect_rc 0
    check_results "$out" all-pass
    check_results "$out" fields
    grep -q "pass" "$WORK/out" || fail "no pass in the table"
    # the first progress line comes before the first config, with the whole run's estimate
    head -1 "$WORK/err" | grep -q "^tpbal: [0-9]* configs on $np ranks\?: about [0-9]* \(s\|min\|h\) (\(.* if calibrations settle at once; \)\?GEMMs at [0-9.e+]* GFLOP/s, measured)$" ||
        fail "np $np: the first line on stderr is not the run's estimate: $(head -1 "$WORK/err")"
done
# tp 1,2,4 x 2 shapes x 2 splits, with weighted skipped at tp 1: 2*2*(1+2+2)
check_results "$WORK/np4" count 20

# the other collective of the col split, fp64, uneven weighted shards
tpbal 2 --shape 64x200x96 --split col --col-collective allreduce --dtype fp64 \
    --speeds 1,3 --check --iters 3 --out "$WORK/ar"
expect_rc 0
check_results "$WORK/ar" all-pass
check_results "$WORK/ar" source speeds
grep -q "^tpbal: 3 configs on 2 ranks: about [0-9]* s (GEMMs at [0-9.e+]* GFLOP/s, measured)$" "$WORK/err" ||
    fail "no estimate without calibration: $(head -1 "$WORK/err")"
tpbal 2 --shape 64x64x64 --split row --policy even --iters 3 -q
expect_rc 0
! grep -q "configs\? on 2 ranks" "$WORK/err" || fail "-q printed the estimate"

# a singleton run without mpirun
echo "+ tpbal (singleton)"
timeout 120 "$TPBAL" --shape 32x48x64 --check --iters 2 >"$WORK/out" 2>"$WORK/err" ||
    fail "singleton run failed"
grep -q " pass" "$WORK/out" || fail "singleton: no passing row"

# a TP degree whose first entry is skipped (64x1x1 cannot be split in two) runs its configs
# on its own TP groups: they ran on the previous degree's (each rank alone), --check failed
# and a rank's all-gather read past its shard when the shards were uneven (ASan, ids.sh)
tpbal 2 --tp 1,2 --shape 64x1x1,64x256x256 --split row,col --policy even,weighted --check \
    --iters 3 --warmup 1 --out "$WORK/skipfirst"
expect_rc 0
check_results "$WORK/skipfirst" all-pass
echo "sweep: ok"
