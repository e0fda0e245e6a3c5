# faults.sh - hostile input and faults (issue "Faults and hostile input"): huge
# numbers are refused in their own type before any cast, a rerun never loses an
# earlier run's results, a run past the file-size limit keeps the earlier one, and a sweep
# that measures nothing fails. Every case: one line on stderr, the right exit code, no hang.
# Nothing here is timed: it runs beside other tests; faults-watch.sh (the watchdog, a
# disturbed config, signals between configs) runs alone.
. "$(dirname "$0")/lib.sh"

# ---- sizes and integer ranges (no crash, no wrap-around, no silent change) ----
refused "--shape '2147483648x2147483648x4294967296': expected MxNxK with integers from 1 to 2147483647" \
    --tp 2 --split row --policy weighted --shape 2147483648x2147483648x4294967296
refused "--shape '3037000500x1x3037000500'" --shape 3037000500x1x3037000500
refused "-m '9223372036854775807': expected an integer from 1 to 2147483647" -m 9223372036854775807
refused "--tp '4294967296': expected an integer from 1 to 1048576" --tp 4294967296 --shape 64x64x64
refused "--tp '4294967298'" --tp 4294967298
refused "--tp '2147483648'" --tp 2147483648
refused "--inject-delay '1:10:4294967296'" --inject-delay 1:10:4294967296
refused "--inject-delay '4294967296:10'" --inject-delay 4294967296:10
refused "--emulate-speed: factor 1.5 of rank 1 is outside" --emulate-speed 1,1.5
refused "--emulate-speed: factor 1e-09 of rank 1 is outside" --emulate-speed 1,1e-9
# the largest dimensions parse, and are refused by the memory check before any allocation
refused "needs [0-9]* bytes on rank [0-9] but [0-9]* are free" \
    --tp 2 --split row --policy weighted --shape 2147483647x2147483647x2147483647

# ---- a sweep that measures nothing fails (3 ranks: neither 2 nor 4 divides) ----
tpbal 3 --tp 2,4 --shape 32x32x32
expect_rc 2
one_error_line "nothing measured"
grep -q "no config was measured" "$WORK/err" || fail "nothing-measured message"

# ---- reruns keep results ----
d="$WORK/re"
tpbal 2 --tp 2 --shape 32x64x64 --iters 3 --out "$d"
expect_rc 0
check_results "$d" count 4
sum_before=$(cd "$d" && cat results.jsonl results.csv ranks.csv trace-*.json | md5sum)
refused "holds the results of an earlier run" --tp 2 --shape 32x64x64 --iters 3 --out "$d"
refused "needs [0-9]* bytes on rank" --shape 100000x100000x100000 --out "$d" --force
refused "--calibration-file /proc/no/such/dir/cal.csv: cannot write" --tp 2 --shape 32x64x64 \
    --policy weighted --calibration-file /proc/no/such/dir/cal.csv --out "$d" --force
sum_after=$(cd "$d" && cat results.jsonl results.csv ranks.csv trace-*.json | md5sum)
[ "$sum_before" = "$sum_after" ] || fail "a rejected rerun changed the earlier results"
[ "$(ls -A "$d" | grep -c '^trace-')" -eq 4 ] || fail "traces changed: $(ls -A "$d")"
# --force with a valid run: the earlier run's files are replaced, no stale traces remain
tpbal 2 --tp 2 --shape 32x64x64 --split row --policy even --iters 3 --out "$d" --force
expect_rc 0
check_results "$d" count 1
check_results "$d" fields
[ "$(ls -A "$d" | tr '\n' ' ')" = "ranks.csv results.csv results.jsonl trace-000.json " ] ||
    fail "stale files after --force: $(ls -A "$d")"
# --force deletes only what the earlier run wrote (its record names its files): a user's
# own trace-mynotes.json and notes beside them stay
echo '{"mine": true}' >"$d/trace-mynotes.json"
echo "keep" >"$d/notes.txt"
tpbal 2 --tp 2 --shape 32x64x64 --split col --policy even --iters 3 --out "$d" --force
expect_rc 0
[ "$(ls -A "$d" | tr '\n' ' ')" = "notes.txt ranks.csv results.csv results.jsonl trace-000.json trace-mynotes.json " ] ||
    fail "--force removed or left the wrong files: $(ls -A "$d")"
grep -q '"split":"col"' "$d/results.jsonl" || fail "--force did not replace the run"
# --force on a folder that does not exist yet, and on an empty one: a plain run
tpbal 2 --tp 2 --shape 32x64x64 --split row --policy even --iters 3 --out "$WORK/fresh" --force
expect_rc 0
check_results "$WORK/fresh" count 1
mkdir "$WORK/empty"
tpbal 2 --tp 2 --shape 32x64x64 --split row --policy even --iters 3 --out "$WORK/empty" --force
expect_rc 0
check_results "$WORK/empty" count 1
# --force that runs past the file-size limit (EFBIG; SIGXFSZ ignored): the earlier run stays
sum=$(cd "$d" && cat results.jsonl results.csv ranks.csv trace-000.json | md5sum)
# (the limit set in each rank, not in mpirun, whose own files it would stop; TCP between the
# ranks, as the shared-memory transport's segments are larger than the limit)
timeout 120 $MPIRUN -np 2 --mca btl self,tcp bash -c 'ulimit -f 48; exec "$0" "$@"' "$TPBAL" \
    --tp 2 --shape 32x64x64 --split row,col --policy even --iters 2000 --out "$d" --force \
    >"$WORK/out" 2>"$WORK/err" && RC=0 || RC=$?
[ "$RC" -ne 124 ] || fail "a run past the file-size limit hung"
[ "$RC" -ne 0 ] || fail "a run past the file-size limit passed"
grep -q "File too large" "$WORK/err" || fail "no reason for the file-size limit: $(cat "$WORK/err")"
[ "$(cd "$d" && cat results.jsonl results.csv ranks.csv trace-000.json | md5sum)" = "$sum" ] ||
    fail "--force lost the earlier run when the new one could not write"
[ -z "$(ls -A "$d" | grep -v '^notes.txt$\|^ranks.csv$\|^results\.\|^trace-')" ] ||
    fail "files left by the failed run: $(ls -A "$d")"

# ---- --timeline off prints no inf or nan ----
tpbal 2 --tp 2 --shape 32x64x64 --timeline off --iters 3
expect_rc 0
if grep -Ei '(^|[^a-z])(-?inf|nan)([^a-z]|$)' "$WORK/out"; then fail "inf or nan in the table"; fi
echo "faults: ok"
