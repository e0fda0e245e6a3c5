# bad-input.sh - every kind of bad input under 2 ranks: exit code 2 on every
# rank, one line on stderr from rank 0 naming the problem, no hang, and result
# files already in --out left intact (even with --force, which only replaces
# them once the new run has measured a config).
. "$(dirname "$0")/lib.sh"

out="$WORK/keep"
mkdir -p "$out"
echo '{"kept":true}' >"$out/results.jsonl"

bad() { # bad "EXPECTED TEXT" ARGS...
    local want=$1
    shift
    tpbal 2 "$@" --out "$out" --force
    expect_rc 2
    one_error_line "$*"
    grep -q "^tpbal: error: .*$want" "$WORK/err" || fail "stderr lacks '$want' for $*"
    grep -qx '{"kept":true}' "$out/results.jsonl" || fail "results.jsonl was touched by $*"
    [ "$(ls -A "$out")" = "results.jsonl" ] || fail "files appeared in --out: $(ls -A "$out")"
}

bad "unknown option '--frobnicate'" --frobnicate
bad "--iters 'abc': expected an integer" --iters abc
bad "-m '0': expected an integer from 1 to 2147483647" -m 0
bad "--tp 3 does not divide the 2 ranks" --tp 3
bad "--split 'rows': expected row and/or col" --split rows
bad "--policy 'evne': expected even, weighted, adaptive and/or cost" --policy evne
bad "--dtype 'fp23': expected one of" --dtype fp23
bad "--dtype bf16: the host backend supports fp32 and fp64" --backend host --dtype bf16
bad "--emulate-speed has 1 values but there are 2 ranks" --emulate-speed 1
bad "--emulate-speed '0': every value must be > 0" --emulate-speed 1,0
bad "--preset 'no-such-model'" --preset no-such-model
# an option the mode ignores is refused, not dropped: a model's GEMMs each have their split
bad "--split has no effect here: every GEMM of the --model has its own split" --model llama3-8b \
    --split row
bad "--rebalance-every sets --policy adaptive's rounds, and this run measures no adaptive config" \
    --rebalance-every 3
bad "--emulate-mode says how --emulate-speed slows a rank, and none is slowed" --emulate-mode work
bad "--col-collective sets the col split's collective, and this run has no col split" \
    --col-collective allreduce --split row
bad "--speeds and --calibration-file weigh the shards of --policy weighted or cost" --speeds 1,2 \
    --policy even
bad "--bind gpu: the host backend has no GPU" --bind gpu --backend host
printf 'not,a,calibration,file\n' >"$WORK/cal.csv"
bad "not a tpbal calibration file" --calibration-file "$WORK/cal.csv"

# an unwritable --out (a path below a regular file)
tpbal 2 --iters 2 --shape 32x32x32 --out "$out/results.jsonl/sub"
expect_rc 2
grep -q "^tpbal: error: --out" "$WORK/err" || fail "unwritable --out not reported"

# a shape that does not fit in memory, after one that does: found before anything
# is measured or written; the error names the shape, the rank and the bytes
fresh="$WORK/fresh"
tpbal 2 --tp 1 --split row --policy even --iters 2 \
    --shape 32x32x32,300000x300000x300000 --out "$fresh"
expect_rc 2
grep -q "shape 300000x300000x300000 (fp32, tp 1, row) needs [0-9]* bytes on rank [0-9] but [0-9]* are free" \
    "$WORK/err" || fail "out-of-memory message"
one_error_line "$*"
[ -z "$(ls -A "$fresh")" ] || fail "files appeared in --out: $(ls -A "$fresh")"
# --fleet --dry-run says what a fleet measures (not a sweep's configs); a --fleet-bytes past
# memory is refused in one line before anything is measured
tpbal 2 --fleet --dry-run --fleet-bytes 1M --out "$WORK/fdry" --wide # whole, for grep
expect_rc 0
[ ! -e "$WORK/fdry" ] || fail "--fleet --dry-run created --out"
grep -q "^tpbal: dry run: --fleet on 2 ranks on 1 host: 5 rounds of every rank's .* GEMM.* 1 MiB all-reduce" \
    "$WORK/out" || fail "--fleet --dry-run: $(cat "$WORK/out")"
! grep -q "configs would be measured" "$WORK/out" || fail "--fleet --dry-run described a sweep"
tpbal 2 --fleet --shape 200000x200000x200000 --fleet-bytes 16G
expect_rc 2
grep -q "^tpbal: error: --fleet needs about .* GiB on rank 0 .* are free: use a smaller --fleet-bytes" \
    "$WORK/err" || fail "a --fleet-bytes past memory: $(cat "$WORK/err")"
one_error_line "--fleet past memory"

# one kind of run a folder, --force or not: a sweep refused where a fleet.json is, a fleet
# where a sweep's results are (tpbal-report read one and ignored the other)
mkdir -p "$WORK/fleetdir" && echo '{}' >"$WORK/fleetdir/fleet.json"
tpbal 2 --tp 2 --shape 64x64x64 --iters 2 --out "$WORK/fleetdir" --force
expect_rc 2
grep -q "holds a --fleet run's fleet.json: a sweep goes into a directory of its own" "$WORK/err" ||
    fail "a sweep into a fleet's folder: $(cat "$WORK/err")"
[ "$(ls -A "$WORK/fleetdir")" = fleet.json ] || fail "the fleet's folder changed: $(ls -A "$WORK/fleetdir")"
tpbal 2 --tp 2 --shape 64x64x64 --iters 2 --out "$WORK/sweepdir"
expect_rc 0
tpbal 2 --fleet --out "$WORK/sweepdir" --force
expect_rc 2
grep -q "holds a sweep's results: a --fleet goes into a directory of its own" "$WORK/err" ||
    fail "a fleet into a sweep's folder: $(cat "$WORK/err")"

# --out creating folders above its own says so (a mistyped path is not made silently)
tpbal 2 --tp 2 --shape 64x64x64 --iters 2 --out "$WORK/not/yet/there"
expect_rc 0
grep -q "^tpbal: note: --out .*not/yet/there: created it and 2 folders above it, from .*/not$" \
    "$WORK/err" || fail "--out's parents made silently: $(cat "$WORK/err")"

# a --shards-from plan larger than a run of 2 ranks can use is refused before it is parsed
# (it was parsed on every rank: 1.8 GB and 5.8 s for 64 MiB), in one line
head -c 2000000 /dev/zero | tr '\0' ' ' >"$WORK/huge-plan.json"
tpbal 2 --tp 2 --shape 64x64x64 --iters 2 --shards-from "$WORK/huge-plan.json"
expect_rc 2
grep -q "^tpbal: error: --shards-from .*huge-plan.json has 2000000 bytes, more than the 1114112" \
    "$WORK/err" || fail "a plan larger than the run can use: $(cat "$WORK/err")"
one_error_line "--shards-from huge"

# --dry-run: the configs a command line would measure, nothing written, no device; its
# refusals are a run's (one line, exit 2) (--wide: the lines whole, for grep)
tpbal 2 --dry-run --tp 1,2 --split row --shape 64x64x64 --speeds 1,3 --out "$WORK/dry" --wide
expect_rc 0
[ ! -e "$WORK/dry" ] || fail "--dry-run created --out"
grep -q "^config   2: tp 2 row weighted packed, 64x64x64 fp32, shards 16,48" "$WORK/out" ||
    fail "--dry-run did not list the weighted shards"
grep -q "^tpbal: dry run: 3 configs would be measured and 0 skipped on 2 ranks, backend host" \
    "$WORK/out" || fail "--dry-run closing line"
# its time estimate: every config's and the sweep's, at a rate it names
[ "$(grep -c '^config .*, about [0-9.e+-]* \(s\|min\|h\)$' "$WORK/out")" = 3 ] ||
    fail "--dry-run did not estimate every config's time"
# the whole run's (run/estimate.h): --speeds given, no calibration
grep -q "^tpbal: dry run: about [0-9.e+]* \(s\|min\|h\) in all: GEMMs .* at [0-9.e+]* GFLOP/s a rank (measured: a 768x768x768 fp32 GEMM on every rank, OpenBLAS core [A-Za-z0-9]*), collectives .*, calibration 0 s (0 calibrations, each to its budget), set-up and start" \
    "$WORK/out" || fail "--dry-run did not estimate the whole run: $(tail -1 "$WORK/out")"
# with a calibration, the range its settling spans
tpbal 2 --dry-run --tp 2 --split row --shape 64x64x64 --wide
grep -q "^tpbal: dry run: about .* in all (.* if every calibration settles at once): .*, calibration .* (1 calibration, each to its budget)" \
    "$WORK/out" || fail "--dry-run did not estimate a calibration: $(tail -1 "$WORK/out")"
# an --out the file system refuses (root may "write" /proc by access(2), not create in it):
# refused by the dry run as by the run, and nothing made
tpbal 2 --dry-run --shape 64x64x64 --out /proc/tpbal-nonexistent/x
expect_rc 2
one_error_line "--dry-run --out /proc/..."
grep -q "^tpbal: error: --out '/proc/tpbal-nonexistent/x': cannot be created: /proc refuses new files" \
    "$WORK/err" || fail "--dry-run accepted an --out that cannot be created: $(cat "$WORK/err")"
# 3 ranks without --tp: the TP degrees chosen are said, with why
tpbal 3 --dry-run --shape 64x64x64 --wide
expect_rc 0
grep -q "^tpbal: note: no --tp: TP 1, the powers of 2 that divide the 3 ranks (--tp 3 for one group of all)" \
    "$WORK/err" || fail "-np 3 without --tp: the choice not said: $(head -2 "$WORK/err")"
# ... but it checks --out as the run would: a file in the way, a folder holding results
echo x >"$WORK/afile"
tpbal 2 --dry-run --shape 64x64x64 --out "$WORK/afile/sub/dir"
expect_rc 2
one_error_line "dry run, --out under a file"
grep -q "^tpbal: error: --out '$WORK/afile/sub/dir': $WORK/afile is not a directory" "$WORK/err" ||
    fail "--dry-run --out under a file: $(head -1 "$WORK/err")"
tpbal 2 --dry-run --shape 64x64x64 --out "$out"
expect_rc 2
grep -q "holds the results of an earlier run" "$WORK/err" || fail "--dry-run over results accepted"
grep -qx '{"kept":true}' "$out/results.jsonl" || fail "results.jsonl was touched by a dry run"
# skipped entries (a TP degree that does not divide, more chunks than rows) have no shape of
# their own: listed with the reason (a dry run with one crashed before)
tpbal 2 --dry-run --wide --tp 2,3 --shape 4x64x64 --policy even --split row --overlap none,chunked \
    --chunks 2,8
expect_rc 0
grep -q "^config   1: tp 2 row even packed, 4x64x64 fp32, overlap 2 chunks, shards 32,32" \
    "$WORK/out" || fail "--dry-run did not list the chunked config"
grep -q "^skipped: tp 3 packed: --tp 3 does not divide the 2 ranks" "$WORK/out" ||
    fail "--dry-run did not list the skipped TP degree"
grep -q "^tpbal: dry run: 2 configs would be measured and 2 skipped" "$WORK/out" ||
    fail "--dry-run closing line with skips"
tpbal 2 --dry-run --dtype bf16
expect_rc 2
grep -q "^tpbal: error: --dtype bf16: the host backend supports fp32 and fp64" "$WORK/err" ||
    fail "--dry-run did not refuse bf16 on the host"
one_error_line "$*"
echo "bad-input: ok"
