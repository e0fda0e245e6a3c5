# comm.sh - collective-only sweeps (--comm-only): every message size of a range
# per collective (all-reduce for row, all-gather-v for col, even and weighted
# blocks), nccl-tests' bandwidths, an alpha-beta fit per series in the summary,
# the what-if replay on a rank that arrives late, and the refusals.
. "$(dirname "$0")/lib.sh"

tpbal 2 --comm-only --comm-sizes 4K:1M:4 --speeds 1,3 --policy even,weighted --iters 20 \
    --out "$WORK/c2"
expect_rc 0
grep -q "collective" "$WORK/out" || fail "no collective table"
grep -q "^# comm model all-gather tp 2 weighted" "$WORK/out" || fail "no fit line"
check_results "$WORK/c2" fields
check_results "$WORK/c2" comm-only 4096,16384,65536,262144,1048576
check_results "$WORK/c2" count 15

# 4 ranks, TP 2 and 4 (two groups at TP 2), fp64, a list of sizes, with the traces
tpbal 4 --comm-only --comm-sizes 64K,1M --dtype fp64 --split col --iters 10 --out "$WORK/c4"
expect_rc 0
check_results "$WORK/c4" fields
check_results "$WORK/c4" comm-only 65536,1048576
check_results "$WORK/c4" count 4
check_trace "$WORK/c4" 4

# the col split's all-reduce variant: the whole message on every rank (even only)
tpbal 2 --comm-only --comm-sizes 64K,1M --split col --col-collective allreduce --iters 5 \
    --speeds 1,2 --out "$WORK/car"
expect_rc 0
check_results "$WORK/car" fields
check_results "$WORK/car" comm-only 65536,1048576
check_results "$WORK/car" count 2

# a rank that arrives 20 ms late: it is the straggler and the replay prices it. Not a
# timing bound that noise can break: S = (20 ms + x) / (10 ms + x) >= 1.3 while the
# transfer x stays under 23 ms (it takes ~10 us here, ~3 ms beside a busy core).
tpbal 2 --comm-only --comm-sizes 4K --inject-delay 1:20000 --iters 8 --warmup 1 --out "$WORK/late"
expect_rc 0
check_results "$WORK/late" whatif-slow 1 1.3

# what --comm-only cannot do is refused with one line
for args in "--check" "--shape 8x8x8" "--emulate-speed 1,0.5" "--policy weighted" \
    "--policy adaptive" "--comm-sizes 2 --dtype fp64" "--comm-sizes 8:4"; do
    tpbal 2 --comm-only $args
    expect_rc 2
    one_error_line "--comm-only $args"
done
tpbal 2 --comm-sizes 4K
expect_rc 2
grep -q "needs --comm-only" "$WORK/err" || fail "--comm-sizes without --comm-only"
refused "--comm-gap needs --comm-only" --comm-gap 100
refused "--comm-gap" --comm-only --comm-gap -1
# --comm-gap: every rank spins before each collective; the step counts the gap, the transfer
# and the bandwidth do not (a gap 20x a 64 KiB all-reduce here), and the record says it
tpbal 2 --comm-only --comm-sizes 64K --comm-gap 5000 --iters 8 --warmup 1 --out "$WORK/gap"
expect_rc 0
grep -q "^# comm gap: every rank spins 5000 us" "$WORK/out" || fail "no comm gap line"
"$PY" - "$WORK/gap" <<'PY' || fail "--comm-gap's record"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1] + "/results.jsonl")]
assert recs[0]["comm_gap_us"] == 5000, recs[0]["comm_gap_us"]
for c in recs[1:]:
    if c.get("type") != "config":
        continue
    assert all(4999 < x < 5000 + 0.5 * c["step_us"]["median"] for x in c["compute_us"]), c
    assert c["step_us"]["median"] >= 5000 + c["xfer_us"] * 0.5, (c["step_us"], c["xfer_us"])
    print("%s: step %.0f us, gap as compute %s, xfer %.0f us" % (
        c["collective"], c["step_us"]["median"], [round(x) for x in c["compute_us"]], c["xfer_us"]))
PY
tpbal 1 --comm-only
expect_rc 2
grep -q "at least 2 ranks" "$WORK/err" || fail "one rank accepted"
echo "comm: ok"
