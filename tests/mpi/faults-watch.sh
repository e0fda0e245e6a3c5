# faults-watch.sh - faults whose handling is timed (issue "Faults and hostile input"): a
# stalled rank named by the watchdog within its --timeout, a rank stopped from outside, a
# config disturbed by a delay every second iteration, and a signal that stops the run between
# configs with its results kept, within seconds. Run alone (faults.sh holds the rest).
. "$(dirname "$0")/lib.sh"

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
echo "faults-watch: ok"
