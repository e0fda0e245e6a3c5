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
# Two stops run at a time: nothing is timed.
. "$(dirname "$0")/lib.sh"

n=${TPBAL_STOPS:-30}
# a sweep of about 2 s on 2 ranks (16 configs), 1 s as a singleton (8)
args=(-m 32,64,128,256 -n 128 -k 256 --iters 300 --warmup 2 --policy even -q)

# check_stopped DIR WHAT: the record the stop left is whole and marked
check_stopped() {
    local d=$1 what=$2
    [ -z "$(ls -A "$d" 2>/dev/null | grep -E '\.tpbal-|\.tmp\.')" ] ||
        { echo "FAIL $what: temporary files left: $(ls -A "$d")"; return; }
    [ ! -e "$d/.tpbal.lock" ] || { echo "FAIL $what: the lock was left"; return; }
    if [ ! -e "$d/results.jsonl" ]; then
        [ -z "$(ls -A "$d" 2>/dev/null)" ] ||
            { echo "FAIL $what: files without a record: $(ls -A "$d")"; return; }
        echo none
        return
    fi
    "$PY" - "$d" <<'PY' || echo "FAIL $what: the record is not whole"
import csv, json, os, sys
d = sys.argv[1]
recs = [json.loads(line) for line in open(os.path.join(d, "results.jsonl"))]
run = recs[0]
assert run["type"] == "run" and run["status"] in ("finished", "interrupted"), run["status"]
cfgs = [r for r in recs if r["type"] == "config"]
rows = list(csv.DictReader(open(os.path.join(d, "results.csv"))))
ranks = list(csv.DictReader(open(os.path.join(d, "ranks.csv"))))
assert len(cfgs) == len(rows) == run["configs"], (len(cfgs), len(rows), run["configs"])
assert [c["id"] for c in cfgs] == [int(r["id"]) for r in rows]
assert len(ranks) == sum(c["world_size"] for c in cfgs), len(ranks)
for c in cfgs:
    assert os.path.exists(os.path.join(d, "trace-%03d.json" % c["id"])), c["id"]
assert sorted(run["files"]) == sorted(f for f in os.listdir(d)), (run["files"], os.listdir(d))
print(run["status"])
PY
}

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

# Stops honoured at once in every mode: the signal comes inside a config, block, set or
# fleet phase far longer than mpirun's grace (100,000 iterations: a singleton ran such a
# config to its end before), the ranks agree on it within about 0.1 s of iterations
# (sweep_measure.c) and end: a singleton within TPBAL_STOP_S seconds (default 5; 0.3-1.3 s
# measured) with 128 + N, under mpirun with tpbal's own one line (the ranks ended before
# the launcher's SIGKILL); the record marked interrupted, every row printed in it, no answer
# printed, no lock. A fleet writes nothing before its end: its folder stays empty.
STOP_S=${TPBAL_STOP_S:-5}
long=(--iters 100000 --warmup 2)
# now_one NAME SIG NP ARGS...: start NAME, wait until it has begun (its record, or 3 s
# for a fleet), one second more, signal it, then check what it left (a line in $WORK/now.NAME)
now_one() {
    local name=$1 sig=$2 np=$3 d="$WORK/now-$1" pid t0 t1 rc fleet=0 want
    shift 3
    case " $* " in *" --fleet "*) fleet=1 ;; esac
    if [ "$np" = 1 ]; then
        "$TPBAL" "$@" --out "$d" >"$d.out" 2>"$d.err" &
    else
        $MPIRUN -np "$np" "$TPBAL" "$@" --out "$d" >"$d.out" 2>"$d.err" &
    fi
    pid=$!
    if [ $fleet = 1 ]; then # no file to wait for: past MPI's start-up even beside a busy core
        sleep 3            # (at 1.5 s, 1 of 10 fleets beside one was SIGKILLed before its start;
        # a 1024^3 singleton fleet, 6 s alone, once ended before the signal at 4 s: 2048x1024^2)
    else
        for _ in $(seq 200); do [ -e "$d/results.jsonl" ] && break; sleep 0.05; done
        [ -e "$d/results.jsonl" ] || { echo "FAIL $name: no record after 10 s"; return; }
    fi
    sleep 1
    t0=$(date +%s%N)
    kill -"$sig" "$pid"
    wait "$pid"
    rc=$?
    t1=$(date +%s%N)
    local ms=$(((t1 - t0) / 1000000))
    if [ $fleet = 1 ] && [ -s "$d/fleet.json" ]; then # it ended before the signal came
        echo "EARLY $name: ended before its signal (exit $rc)"
        return
    fi
    if [ "$np" = 1 ]; then
        want=$((128 + $(kill -l "$sig")))
        [ "$rc" -eq "$want" ] || { echo "FAIL $name: exit $rc, expected $want"; return; }
        [ "$ms" -le $((STOP_S * 1000)) ] ||
            { echo "FAIL $name: ended $ms ms after SIG$sig (more than $STOP_S s)"; return; }
    fi
    grep -q "tpbal: error.*interrupted by signal" "$d.err" ||
        { echo "FAIL $name: no 'interrupted' line (killed?), exit $rc after $ms ms," \
            "left: $(ls -A "$d" 2>/dev/null | tr '\n' ' ')err: $(tail -3 "$d.err")"; return; }
    if [ $fleet = 1 ]; then
        [ -z "$(ls -A "$d" 2>/dev/null)" ] || { echo "FAIL $name: left $(ls -A "$d")"; return; }
        echo "$name ok ($ms ms, exit $rc, nothing left)"
        return
    fi
    grep -q "^# use\|^# answer\|^# blocks" "$d.out" &&
        { echo "FAIL $name: an answer was printed after the stop"; return; }
    "$PY" - "$d" "$d.out" <<'PY' || { echo "FAIL $name: the printed rows are not the record's"; return; }
import json, re, sys
d, out = sys.argv[1], sys.argv[2]
recs = [json.loads(line) for line in open(d + "/results.jsonl")]
cfgs = [r["id"] for r in recs if r["type"] == "config"]
blocks = [r for r in recs if r["type"] == "block"]
rows = [int(l.split()[0]) for l in open(out) if re.match(r"^ +\d+ +\d+ ", l)]
printed_blocks = [l for l in open(out) if l.startswith("# block ")]
assert recs[0]["status"] == "interrupted", recs[0]["status"]
assert rows == cfgs, (rows, cfgs)
assert len(printed_blocks) == len(blocks), (printed_blocks, blocks)
PY
    local got
    got=$(check_stopped "$d" "$name")
    [ "$got" = interrupted ] || { echo "FAIL $name: $got"; return; }
    echo "$name ok ($ms ms, exit $rc, $(grep -c '"type": *"config"' "$d/results.jsonl") configs kept)"
}
now_one singleton-config TERM 1 --tp 1 --shape 256x512x512 "${long[@]}" >"$WORK/now.1"
now_one singleton-block HUP 1 --tp 1 --block --split col --shape 128x256x256,128x512x256 \
    "${long[@]}" >"$WORK/now.2"
# fleet_one NAME SIG NP: a fleet stopped in its middle; one that ended before its signal (a
# faster machine, or a signal in its teardown: a CI run's 2-rank fleet, 9 s here, left no line,
# most likely so) again at 2x, 4x the rows
fleet_one() {
    local m line
    for m in 2048 4096 8192; do
        rm -rf "$WORK/now-$1"
        line=$(now_one "$1" "$2" "$3" --fleet --shape "${m}x1024x1024")
        case $line in
        EARLY*) echo "$line at ${m} rows: again at twice the rows" ;;
        *) echo "$line (${m}x1024x1024)" && return ;;
        esac
    done
    echo "FAIL $1: every fleet ended before its signal"
}
fleet_one singleton-fleet INT 1 >"$WORK/now.3" # 6 s alone here at 2048 rows
now_one mpirun-set TERM 2 --tp 2 --split row --policy even,weighted --shape 256x512x512 \
    "${long[@]}" >"$WORK/now.4"
now_one mpirun-block INT 2 --tp 1,2 --block --split col --shape 128x256x256,128x512x256 \
    "${long[@]}" >"$WORK/now.5"
now_one mpirun-comm-only TERM 2 --tp 2 --comm-only --comm-sizes 1M "${long[@]}" >"$WORK/now.6"
fleet_one mpirun-fleet TERM 2 >"$WORK/now.7"
for i in 1 2 3 4 5 6 7; do
    cat "$WORK/now.$i"
    grep -q FAIL "$WORK/now.$i" && fail "$(cat "$WORK/now.$i")"
done
echo "stops: honoured at once in every mode (a config, a block, a set, comm-only, a fleet)"
