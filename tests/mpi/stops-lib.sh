# stops-lib.sh - sourced by stops.sh and stops-now.sh: the check of what a stopped run left.
. "$(dirname "$0")/lib.sh"

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
