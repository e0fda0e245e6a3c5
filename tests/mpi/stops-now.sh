# stops-now.sh - stops honoured at once in every mode, within a bound: a timing test, run
# alone (stops.sh holds the stops at random moments, which time nothing).
. "$(dirname "$0")/stops-lib.sh"

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
