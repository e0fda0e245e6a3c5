# append.sh - the result files grow by appending (issue 45): one config's records at a time,
# nothing rewritten per config. results.csv and ranks.csv keep the inode the run's first
# write gave them to its end, results.jsonl until its one rewrite at the end (its run line's
# final facts); under the old rewrite per config each config renamed a new file into place.
# A run killed with SIGKILL in the middle leaves whole records (and at most a torn last line)
# that the tools read, its status "running"; --force over it removes its traces. Asserts on
# no timing: a run that ended before it was seen running is tried again, longer.
. "$(dirname "$0")/lib.sh"

rows() { [ -f "$1" ] && grep -c '' "$1" || echo 0; }         # lines, header included
ino() { stat -c %i "$1" 2>/dev/null || echo none; }
status() { head -c 4096 "$1/results.jsonl" 2>/dev/null | grep -o '"status":"[a-z]*"' | tail -1; }

# one watched run: $1 iterations; "seen" when the first and the third config's rows were
# both watched while the run was still running
watched() {
    local d=$WORK/w$1 pid t0
    rm -rf "$d"
    $MPIRUN -np 2 "$TPBAL" --tp 1,2 --split row,col --policy even --shape 256x512x512 \
        --iters "$1" --out "$d" >"$WORK/out" 2>"$WORK/err" &
    pid=$!
    local first="" jfirst="" third="" jthird=""
    for _ in $(seq 1 1200); do # up to 60 s
        kill -0 "$pid" 2>/dev/null || break
        if [ -z "$first" ] && [ "$(rows "$d/results.csv")" -ge 2 ] &&
            [ "$(status "$d")" = '"status":"running"' ]; then
            first=$(ino "$d/results.csv"):$(ino "$d/ranks.csv")
            jfirst=$(ino "$d/results.jsonl")
        fi
        if [ -n "$first" ] && [ -z "$third" ] && [ "$(rows "$d/results.csv")" -ge 4 ] &&
            [ "$(status "$d")" = '"status":"running"' ]; then
            third=$(ino "$d/results.csv"):$(ino "$d/ranks.csv")
            jthird=$(ino "$d/results.jsonl")
        fi
        sleep 0.05
    done
    wait "$pid" || fail "the watched run failed: $(tail -3 "$WORK/err")"
    [ -n "$third" ] || return 1 # over before it was seen: not judged
    echo "results.csv:ranks.csv inodes: first config $first, third $third, end" \
        "$(ino "$d/results.csv"):$(ino "$d/ranks.csv"); results.jsonl $jfirst, $jthird"
    [ "$first" = "$third" ] && [ "$third" = "$(ino "$d/results.csv"):$(ino "$d/ranks.csv")" ] ||
        fail "results.csv or ranks.csv was replaced during the run (rewritten, not appended)"
    [ "$jfirst" = "$jthird" ] || fail "results.jsonl was replaced between two configs"
    [ "$(status "$d")" = '"status":"finished"' ] || fail "not sealed finished: $(status "$d")"
    check_results "$d" fields
    return 0
}
judged=0
for iters in 60 240 960; do
    watched "$iters" && { judged=1; break; }
    echo "the run ended before its third config was watched: again, longer"
done
[ "$judged" = 1 ] || fail "no run was watched while it ran (three tries)"

# SIGKILL mid-sweep (a singleton: the process is ours, by its PID): whole records left
d=$WORK/k
"$TPBAL" --tp 1 --split row,col --policy even --shape 256x512x512,256x512x768,256x768x512 \
    --iters 400 --out "$d" >"$WORK/kout" 2>&1 &
pid=$!
for _ in $(seq 1 1200); do
    [ "$(rows "$d/results.csv")" -ge 3 ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
done
kill -9 "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
if [ "$(status "$d")" = '"status":"running"' ]; then
    "$PY" - "$d" <<'PY' || fail "the killed run's records are not whole"
import csv, json, os, sys
d = sys.argv[1]
text = open(os.path.join(d, "results.jsonl")).read()
lines = text.split("\n")
whole = lines[:-1]  # the last piece: "" after a newline, or a torn line
recs = [json.loads(l) for l in whole if l]
assert recs[0]["type"] == "run" and recs[0]["status"] == "running", recs[0]
cfgs = [r for r in recs if r["type"] == "config"]
assert len(cfgs) >= 2 and not [r for r in recs if r["type"] == "summary"], len(cfgs)
rows = list(csv.reader(open(os.path.join(d, "results.csv")).read().splitlines(True)))
full = [r for r in rows if len(r) == len(rows[0])]
assert len(full) - 1 >= len(cfgs) - 1, (len(full), len(cfgs))
for c in cfgs:  # every config recorded names a trace that is there
    assert os.path.exists(os.path.join(d, "trace-%03d.json" % c["id"])), c["id"]
print("killed run: %d whole configs, status running, %s" % (
    len(cfgs), "a torn last line" if lines[-1] else "no torn line"))
PY
    "${TPBAL_COMPARE:?}" --wide "$d" "$d" >"$WORK/kcmp" 2>&1
    rc=$?
    [ $rc -eq 0 ] || [ $rc -eq 3 ] || { cat "$WORK/kcmp"; fail "tpbal-compare of a killed run: $rc"; }
    # --force over it: its traces go with it (its run line lists only its first files)
    ntr=$(ls "$d"/trace-*.json | wc -l)
    tpbal 2 --tp 1 --split row --policy even --shape 64x64x64 --iters 4 --out "$d" --force
    expect_rc 0
    [ "$(ls "$d"/trace-*.json | wc -l)" -eq 1 ] || fail "--force left the killed run's traces ($ntr before)"
else
    echo "the run ended before the kill ($(status "$d")): the kill's case not exercised this time"
fi
echo "PASS"
