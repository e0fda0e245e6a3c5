# stops.sh - a run stopped from outside at a random moment is always marked: 30 stops (15
# through mpirun with SIGTERM or SIGINT, which it forwards about a second later and follows
# with SIGKILL a second after that; 15 of a singleton with SIGTERM, SIGINT or SIGHUP) of a
# sweep of many short
# configs, each leaving either nothing (stopped before the run's record is begun, as it
# starts) or a record whose status is "finished" or "interrupted", with as
# many configs in results.jsonl as rows in results.csv and traces, no temporary and no lock.
# The moments come from a seeded generator (TPBAL_STOPS_SEED, default 7; stop I from seed
# x 1000 + I) so that a failure can be rerun; TPBAL_STOPS sets how many stops (default 30;
# 50 before the suite had to fit in 20 minutes again).
# Two stops run at a time: nothing is timed (a slower machine moves where a stop lands, and
# every place is checked the same), so it runs beside other tests; stops-now.sh holds the
# stops that must be honoured within a bound, alone.
. "$(dirname "$0")/stops-lib.sh"

n=${TPBAL_STOPS:-30}
# a sweep of about 2 s on 2 ranks (16 configs), 1 s as a singleton (8)
args=(-m 32,64,128,256 -n 128 -k 256 --iters 300 --warmup 2 --policy even -q)

# stop_one I: start run I, stop it at its moment, check what it left (a line in $WORK/got.I:
# the state, or FAIL and why)
stop_one() {
    local i=$1 d="$WORK/s$1" sig how t pid guard
    RANDOM=$((${TPBAL_STOPS_SEED:-7} * 1000 + i))
    if [ "$i" -le $((n / 2)) ]; then
        sig=$([ $((RANDOM % 2)) -eq 0 ] && echo TERM || echo INT)
        how="mpirun SIG$sig"
        $MPIRUN -np 2 "$TPBAL" "${args[@]}" --tp 1,2 --out "$d" >"$d.out" 2>&1 &
        t=$((RANDOM % 70)) # 0-0.7 s: forwarded a second later, mid-sweep
    else
        sig=$(echo "TERM INT HUP" | cut -d' ' -f$((RANDOM % 3 + 1)))
        how="singleton SIG$sig"
        "$TPBAL" "${args[@]}" --tp 1 --out "$d" >"$d.out" 2>&1 &
        t=$((RANDOM % 70 + 10)) # 0.1-0.8 s
    fi
    pid=$!
    sleep "$((t / 100)).$(printf '%02d' $((t % 100)))"
    kill -"$sig" "$pid" 2>/dev/null
    (sleep 60 && kill -9 "$pid" && echo hung >"$d.hung") 2>/dev/null &
    guard=$!
    wait "$pid" 2>/dev/null
    kill "$guard" 2>/dev/null
    wait "$guard" 2>/dev/null
    if [ -e "$d.hung" ]; then
        echo "FAIL stop $i ($how): not stopped within 60 s" >"$WORK/got.$i"
    else
        (check_stopped "$d" "stop $i ($how)") >"$WORK/got.$i" 2>&1
    fi
}

# two stops at a time (the checks do not time anything)
for i in $(seq 1 2 "$n"); do
    stop_one "$i" &
    [ "$i" -lt "$n" ] && stop_one $((i + 1)) &
    wait
done
declare -A seen
for i in $(seq "$n"); do
    got=$(tail -1 "$WORK/got.$i")
    case "$got" in none | finished | interrupted) ;; *) fail "$(cat "$WORK/got.$i")" ;; esac
    seen[$got]=$((${seen[$got]:-0} + 1))
done
echo "stops: $n, left: interrupted ${seen[interrupted]:-0}, finished ${seen[finished]:-0}," \
    "nothing yet ${seen[none]:-0}"
# which state a stop leaves follows the moment; that some stops interrupt a sweep (about 2 in
# 5 here) shows the signals reach the ranks
[ "${seen[interrupted]:-0}" -ge $((n / 10)) ] || fail "too few stops interrupted a run"

# inside a config longer than mpirun's grace: only the record written when the signal comes
# (the signal thread) can mark the run before the SIGKILL; six such stops, 2 at a time
long_one() {
    local i=$1 d="$WORK/l$1" sig pid
    sig=$([ $((i % 2)) -eq 0 ] && echo TERM || echo INT)
    $MPIRUN -np 2 "$TPBAL" --tp 2 --split row --policy even -m 32,256 -n 256 -k 256 \
        --iters 12000 --warmup 2 -q --out "$d" >"$d.out" 2>&1 &
    pid=$!
    for _ in $(seq 300); do [ -e "$d/results.jsonl" ] && break; sleep 0.05; done
    sleep 0.3 # inside the long config: forwarded a second later, killed a second after
    kill -"$sig" "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    (check_stopped "$d" "long config $i (mpirun SIG$sig)") >"$WORK/long.$i" 2>&1
}
for i in 1 3 5; do
    long_one "$i" &
    long_one $((i + 1)) &
    wait
done
for i in 1 2 3 4 5 6; do
    [ "$(tail -1 "$WORK/long.$i")" = interrupted ] ||
        fail "a stop inside a long config: $(cat "$WORK/long.$i")"
done
echo "stops: 6 inside a config longer than mpirun's grace, each marked interrupted"

# SIGPIPE: a singleton piped into head stops as if signalled, its record marked
"$TPBAL" "${args[@]}" --tp 1 --out "$WORK/pipe" 2>"$WORK/err" | head -2 >/dev/null
rc=${PIPESTATUS[0]}
[ "$rc" -eq 141 ] || fail "piped into head: exit $rc, expected 141 (128 + SIGPIPE)"
got=$(check_stopped "$WORK/pipe" "broken pipe")
[ "$got" = interrupted ] || fail "broken pipe: not marked: $got"
echo "stops: a broken pipe is a stop (141), the record marked interrupted"
echo "stops: ok"
