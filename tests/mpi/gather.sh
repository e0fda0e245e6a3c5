# gather.sh - --gather parts (run/gather.h): each TP group analysed by its first rank, rank 0
# finishing from the summaries and records and keeping the marks of some groups only.
#  1. bench/gather, 64 virtual ranks at TP 8 on 2 MPI ranks with the same synthetic marks both ways:
#     the config's record and ranks.csv rows are byte for byte those of the analysis of every
#     mark, and the kept ranks' trace events those of the full trace (check_gather.py);
#  2. tpbal --gather parts --trace-ranks all: every figure recomputed from its traces with
#     none of tpbal's code (check_parts.py);
#  3. --trace-ranks 2 and a straggler: the traces keep its group (and hold their structure);
#  4. --gather parts with what needs every mark on rank 0: one line, exit 2;
#  5. (after 1) a sweep through tpbal's record (appended) the same both ways.
# No timing is asserted (the injected delay of 3 is 10 ms a step: always the last).
. "$(dirname "$0")/lib.sh"

GATHER=$(cd "$(dirname "$TPBAL")/.." && pwd)/bench/gather
for tp in 8; do # (TP 4, 2 and 1: tests/test_gather.c)
    for how in full parts; do
        mkdir -p "$WORK/$how$tp"
        timeout 120 $MPIRUN -np 2 "$GATHER" 64 150 "$tp" "$WORK/$how$tp" 16 "$how" \
            >"$WORK/bench-$how$tp" 2>&1 || { cat "$WORK/bench-$how$tp"; fail "bench/gather $how tp $tp"; }
    done
    for f in results-bench.jsonl ranks-bench.csv; do
        cmp "$WORK/full$tp/$f" "$WORK/parts$tp/$f" || fail "$f differs both ways at tp $tp"
    done
    "$PY" "$HERE/check_gather.py" "$WORK/full$tp" "$WORK/parts$tp" 16 || fail "check_gather.py tp $tp"
done

# 5. a sweep of 4 configs through tpbal's record (bench/gather's CONFIGS: appended one at a
#    time, the summary and the one rewrite at the end) both ways: the three result files byte
#    for byte alike, sealed finished with the 4 configs and their traces, read by the tools
for how in full parts; do
    mkdir -p "$WORK/sweep-$how"
    timeout 120 $MPIRUN -np 2 "$GATHER" 64 150 8 "$WORK/sweep-$how" 16 "$how" 4 \
        >"$WORK/bench-sweep-$how" 2>&1 || { cat "$WORK/bench-sweep-$how"; fail "bench/gather sweep $how"; }
    grep -q "^gather $how: 4 configs of 64 virtual ranks" "$WORK/bench-sweep-$how" ||
        fail "no sweep figures ($how)"
done
for f in results.jsonl results.csv ranks.csv; do
    cmp "$WORK/sweep-full/$f" "$WORK/sweep-parts/$f" || fail "the sweep's $f differs both ways"
done
"$PY" - "$WORK/sweep-parts" <<'PY' || fail "the sweep's record"
import json, os, sys
d = sys.argv[1]
recs = [json.loads(l) for l in open(os.path.join(d, "results.jsonl"))]
run, cfgs = recs[0], [r for r in recs if r["type"] == "config"]
assert run["status"] == "finished" and run["configs"] == 4 == len(cfgs), run["status"]
assert recs[-1]["type"] == "summary", recs[-1]["type"]
assert sorted(run["files"]) == sorted(os.listdir(d)), (run["files"], os.listdir(d))
print("sweep: 4 configs appended, sealed finished, %d files" % len(run["files"]))
PY
self_compare "$WORK/sweep-parts"

d="$WORK/all"
tpbal 4 --gather parts --trace-ranks all --tp 2,4 --shape 64x256x256 --iters 20 --out "$d"
expect_rc 0
check_trace "$d" 4
"$PY" "$HERE/check_parts.py" "$d" || fail "check_parts.py $d"

d="$WORK/kept"
tpbal 4 --gather parts --trace-ranks 2 --tp 2 --inject-delay 3:10000 --shape 64x256x256 \
    --policy even --iters 20 --out "$d"
expect_rc 0
check_trace "$d" 4
"$PY" "$HERE/check_parts.py" "$d" 2 3 || fail "check_parts.py $d 2 3"

tpbal 2 --gather parts --block --preset tiny --out "$WORK/refused"
expect_rc 2
[ "$(grep -c "^tpbal: error: --gather parts analyses each TP group where its marks are" "$WORK/err")" = 1 ] ||
    fail "no one-line refusal: $(cat "$WORK/err")"
[ ! -e "$WORK/refused" ] || fail "a refused run left files"
echo "gather: ok"
