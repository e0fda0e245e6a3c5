# seqpar.sh - --sequence-parallel: the row layer's reduce-scatter of Y along M and the column
# layer's all-gather of X along M pass --check on both splits, even and weighted, on 2 and 4
# ranks (M not a multiple of the TP degree on the host: MPI takes uneven rows), chunked
# (--overlap chunked) and adaptive; their collective, bytes and bus-bandwidth factor
# (check_results.py seqpar); a comm-only reduce-scatter sweep; rows that cannot be scattered
# skipped with the reason; a planted fault in the chunked path (TPBAL_TEST_FAULT=chunk-offset)
# caught by --check. No timing is asserted.
. "$(dirname "$0")/lib.sh"

tpbal 2 --tp 1,2 --shape 60x96x80 --sequence-parallel off,on --check --iters 3 --warmup 1 \
    --speeds 1,2 --out "$WORK/sp2"
expect_rc 0
check_results "$WORK/sp2" seqpar 1,2
grep -q "^ *[0-9]* *2 row+sp weighted" "$WORK/out" || fail "no row+sp row in the table"
"$PY" - "$WORK/sp2/results.jsonl" <<'PYEOF' || fail "no col+sp series in T(N)"
import json, sys
s = [json.loads(l) for l in open(sys.argv[1]) if '"summary"' in l][-1]
assert any(d["split"] == "col" and d["sequence_parallel"] == "on" for d in s["decomposition"])
PYEOF
grep -q "^# T(N) = .* per TP degree: with --wide" "$WORK/out" || fail "no pointer to T(N)"

tpbal 4 --tp 2,4 --shape 62x128x64 --sequence-parallel off,on --check --iters 3 --warmup 1 \
    --out "$WORK/sp4"
expect_rc 0
check_results "$WORK/sp4" seqpar 2,4

# chunked: every chunk's rows scattered and gathered (2 and 4 chunks), --check right after
# the measured loop
tpbal 2 --tp 2 --shape 64x96x80 --sequence-parallel on --overlap none,chunked --chunks 2,4 \
    --check --iters 3 --warmup 1 --speeds 1,1 --out "$WORK/spc"
expect_rc 0
check_results "$WORK/spc" all-pass

# the adaptive policy re-plans the shards along K or N; M stays split evenly
tpbal 2 --tp 2 --shape 64x128x128 --sequence-parallel on --policy adaptive --check --iters 6 \
    --warmup 1 --rebalance-every 2 --emulate-speed 1,0.5
expect_rc 0
grep -q "pass" "$WORK/out" || fail "adaptive sequence-parallel configs not checked"

# comm-only: the reduce-scatter over message sizes (even blocks), nccl-tests' factor
tpbal 2 --comm-only --comm-sizes 64K,1M --split row --sequence-parallel on --iters 5 \
    --out "$WORK/rs"
expect_rc 0
check_results "$WORK/rs" comm-only 65536,1048576
grep -q "reduce-scatter" "$WORK/out" || fail "no reduce-scatter row"

# rows that cannot be scattered: fewer rows than ranks is skipped with the reason
tpbal 4 --tp 4 --shape 2x64x64,8x64x64 --sequence-parallel on --iters 2 --warmup 1 --policy even
expect_rc 0
grep -q "^# skipped: --sequence-parallel on: M = 2 has fewer rows than the 4 ranks" \
    "$WORK/out" || fail "no skip line for rows that cannot be scattered"
# NCCL takes equal blocks only: the CUDA backend's dry run (no GPU needed) says so, and
# refuses the sweep (as the run would) since its only config is skipped
if "$TPBAL" --version | grep -q "backend cuda: built"; then
    tpbal 2 --backend cuda --dry-run --tp 2 --shape 63x256x256 --sequence-parallel on \
        --split row --policy even
    expect_rc 2
    grep -q "no config would be measured" "$WORK/err" || fail "the dry run did not refuse"
    grep -q "^skipped: tp 2 packed: --sequence-parallel on: M = 63 does not divide by tp 2, and the cuda "\
"backend's reduce-scatter needs equal blocks under --comm ccl" "$WORK/out" ||
        fail "no NCCL refusal of uneven rows"
fi

# a planted fault in the chunked path: chunk 1's collective one row up; --check catches it
TPBAL_TEST_FAULT=chunk-offset tpbal 2 --tp 2 --shape 64x96x80 --overlap chunked --chunks 2 \
    --check --iters 2 --warmup 1 --policy even --split row,col
expect_rc 3
grep -c " fail " "$WORK/out" | grep -q "^2$" || fail "the planted chunk fault passed --check"
TPBAL_TEST_FAULT=chunk-offset tpbal 2 --tp 2 --shape 64x96x80 --sequence-parallel on \
    --overlap chunked --chunks 2 --check --iters 2 --warmup 1 --policy even
expect_rc 3
echo "seqpar: the planted chunk fault fails --check (serial, and with sequence parallelism)"
# an off-by-one shard offset (group rank 1's W shard filled one row or column early): --check
# samples Y and draws its reference from the generator's global indices (not from what the
# device holds), so every TP 2 config fails, in both splits, serial and chunked, with and
# without sequence parallelism; TP 1 has no second shard and passes
TPBAL_TEST_FAULT=shard-offset tpbal 2 --tp 1,2 --shape 64x96x80 --split row,col \
    --sequence-parallel off,on --overlap none,chunked --chunks 2 --check --iters 2 --warmup 1 \
    --policy even --out "$WORK/so"
expect_rc 3
"$PY" - "$WORK/so/results.jsonl" <<'EOF' || fail "the planted shard offset: not every TP 2 config failed"
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1]) if '"type":"config"' in l]
got = [(r["tp"], r["split"], r["check"]) for r in rs]
print("shard-offset:", got)
assert len(got) == 10 and all(c == ("fail" if tp == 2 else "pass") for tp, _, c in got)
EOF

refused "--sequence-parallel 'yes': expected off and/or on" --sequence-parallel yes
