# faults.sh - hostile input and faults (issue "Faults and hostile input"): huge
# numbers are refused in their own type before any cast, a rerun never loses an
# earlier run's results, a stalled rank is named by the watchdog, a signal stops
# the run between configs with its results kept, and a sweep that measures
# nothing fails. Every case: one line on stderr, the right exit code, no hang.
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

# ---- the watchdog: a rank stalled inside compute in the second config ----
w="$WORK/watch"
start=$(date +%s)
tpbal 2 --tp 2 --shape 32x64x64 --split row,col --policy even --iters 10 --warmup 0 \
    --inject-delay 1:600000000:15 --timeout 3 --out "$w"
took=$(($(date +%s) - start))
expect_rc 4
grep -q "^tpbal: error on rank 0: rank 0 (.*) waited 3 s in the .* of its TP group; rank 1 (.*) did not arrive" \
    "$WORK/err" || fail "watchdog message"
[ "$took" -lt 30 ] || fail "the job took $took s to end after a 3 s timeout"
grep -q '"status":"timeout"' "$w/results.jsonl" || fail "run status is not timeout"
grep -q '"collectives":"blocking"' "$w/results.jsonl" || fail "the way collectives ran is not recorded"
check_results "$w" count 1
check_results "$w" fields
# the same with the non-blocking calls, whose watchdog asks the late rank over MPI
w="$WORK/watchnb"
tpbal 2 --tp 2 --shape 32x64x64 --split row,col --policy even --iters 10 --warmup 0 \
    --inject-delay 1:600000000:15 --timeout 3 --collectives nonblocking --out "$w"
expect_rc 4
grep -q "^tpbal: error on rank 0: rank 0 (.*) waited 3 s in the .* of its TP group; rank 1 (.*) did not arrive" \
    "$WORK/err" || fail "watchdog message (nonblocking)"
grep -q '"collectives":"nonblocking"' "$w/results.jsonl" || fail "nonblocking not recorded"
check_results "$w" count 1

# ---- the watchdog: a rank stopped from outside (SIGSTOP) ----
w="$WORK/stopped"
# 400000 iterations of ~70 us: ~30 s, so the stop at 3 s falls inside the timed loop (at
# 32x64x64 the loop took 2.8 s once the collectives were the blocking calls, and the stop
# fell into the run's end, where no collective is watched)
( timeout 60 $MPIRUN -np 2 "$TPBAL" --tp 2 --shape 64x256x256 --split row --policy even \
    --iters 400000 --warmup 0 --timeout 3 >"$WORK/out" 2>"$WORK/err"; echo $? >"$WORK/rc" ) &
sleep 3 # both ranks are in their timed loop by now
victim=$(pgrep -n -f "^$TPBAL --tp 2 --shape 64x256x256 --split row --policy even --iters 400000")
[ -n "$victim" ] || fail "no rank to stop"
kill -STOP "$victim"
wait
[ "$(cat "$WORK/rc")" -eq 4 ] || fail "exit code $(cat "$WORK/rc") after SIGSTOP, expected 4"
grep -q "did not arrive (--timeout 3 s)" "$WORK/err" || fail "no rank named after SIGSTOP"
kill -CONT "$victim" 2>/dev/null || true

# ---- a disturbed config on the host backend: rank 1 delayed 20 ms in every second iteration
# (two modes of step taking turns): the record says disturbed with both modes, the table prints
# no step for it, and the answer warns; the same config without the delay is steady
tpbal 2 --tp 2 --shape 32x64x64 --split row --policy even --iters 20 --warmup 2 \
    --inject-delay 1:20000:2 --out "$WORK/dist"
expect_rc 0
grep -q "^# warning: config 0 .* is disturbed, steps bimodal" "$WORK/out" ||
    fail "a two-mode host config was not called disturbed"
"$PY" - "$WORK/dist/results.jsonl" <<'EOF' || fail "disturbed: the record"
import json, sys
r = next(json.loads(l) for l in open(sys.argv[1]) if '"type":"config"' in l)
d = r["disturbed"]
print("host, delayed every second iteration:", d)
assert d["verdict"] == "disturbed" and d["modes_us"][1] - d["modes_us"][0] > 15000
EOF

# ---- signals: SIGTERM and SIGUSR1 (Slurm's --signal) to mpirun stop between configs ----
for sig in TERM USR1; do
    s="$WORK/sig$sig"
    # our own mpirun, by its PID (never another job's): launched directly in the background.
    # mpirun passes SIGTERM on 1 s after it got it and sends SIGKILL 1 s later
    # (odls_base_sigkill_timeout delays both): tpbal stops within ~0.1 s of iterations,
    # dropping the config being measured; the configs are short (~40 ms, ~0.2 s under the sanitizers or beside a busy core;
    # --speeds: no calibration) and many (128, several seconds), so that the run is still
    # going when the signal arrives and ends well within the second after it
    ms=$(seq -s, 64 8 312)
    $MPIRUN -np 2 "$TPBAL" --tp 2 -n 256 -k 256 -m "$ms" --speeds 1,1 --iters 100 \
        --out "$s" >"$WORK/out" 2>"$WORK/err" &
    mp=$!
    for _ in $(seq 100); do grep -qs '"type":"config"' "$s/results.jsonl" && break; sleep 0.1; done
    grep -qs '"type":"config"' "$s/results.jsonl" || fail "no config measured before the signal"
    kill -"$sig" "$mp"
    t0=$(date +%s)
    rc=0
    wait "$mp" || rc=$?
    [ $(($(date +%s) - t0)) -le 10 ] || fail "SIG$sig: took more than 10 s to stop"
    [ "$rc" -ne 0 ] || fail "SIG$sig: exit code 0"
    grep -q "^tpbal: error: interrupted by signal" "$WORK/err" || fail "SIG$sig: no line"
    grep -q '"status":"interrupted"' "$s/results.jsonl" || fail "SIG$sig: status not interrupted"
    check_results "$s" fields
    n=$(grep -c '"type":"config"' "$s/results.jsonl")
    [ "$(ls "$s" | grep -c '^trace-')" -eq "$n" ] || fail "SIG$sig: traces and records differ"
    [ -z "$(ls -A "$s" | grep '\.tmp\.')" ] || fail "SIG$sig: temporary files left"
done

# ---- --timeline off prints no inf or nan ----
tpbal 2 --tp 2 --shape 32x64x64 --timeline off --iters 3
expect_rc 0
if grep -Ei '(^|[^a-z])(-?inf|nan)([^a-z]|$)' "$WORK/out"; then fail "inf or nan in the table"; fi
echo "faults: ok"
