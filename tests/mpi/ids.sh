# ids.sh - a config's id is the same in the dry run and in the run (issue 56: a --block run's
# ids differed, the dry run listing the plans' order and the run its measurement order):
# for a sweep with policies side by side, one alone (adaptive) and skipped entries (64x1x1
# cannot be split: its TP 2 entries come before measured configs), a sweep with sequence
# parallelism, a --block run and a comm-only sweep, every id the dry run prints names the
# config the run records under it, and the dry run lists as many. Nothing here times anything.
. "$(dirname "$0")/lib.sh"
printf 'qkv 64 192 128 col\no 64 128 128 row\nup 64 256 128 col\n' >"$WORK/blk.shapes"

same_ids() { # ARGS...: the dry run's ids against the run's records
    tpbal 2 --dry-run "$@"
    expect_rc 0
    cp "$WORK/out" "$WORK/dry"
    rm -rf "$WORK/r"
    tpbal 2 --iters 6 --warmup 1 -q "$@" --out "$WORK/r"
    expect_rc 0
    "$PY" - "$WORK/dry" "$WORK/r/results.jsonl" <<'PYEOF' || fail "the ids differ: $*"
import json, re, sys
dry = {}
for line in open(sys.argv[1]):
    m = re.match(r"config +(\d+): tp (\d+) (\S+) (\S+) \S+, (?:(\d+)x(\d+)x(\d+))?", line)
    if m:
        dry[int(m.group(1))] = (int(m.group(2)), m.group(3), m.group(4),
                                tuple(int(x) for x in m.group(5, 6, 7)) if m.group(5) else None)
run = {}
for line in open(sys.argv[2]):
    c = json.loads(line)
    if c.get("type") != "config":
        continue
    comm = c.get("comm_only") == "yes"
    run[c["id"]] = (c["tp"], c["collective"] if comm else c["split"], c["policy"],
                    None if comm else (c["m"], c["n"], c["k"]))
assert dry and sorted(dry) == list(range(len(dry))), sorted(dry)
assert sorted(run) == sorted(dry), (sorted(run), sorted(dry))
for i in sorted(dry):
    d, r = dry[i], run[i]
    if d[3] is None:  # a collective: its name as the dry run spells it
        assert d[0] == r[0] and d[2] == r[2], (i, d, r)
    else:
        assert d == r, (i, d, r)
print("ids: %d configs, the same in the dry run and the run" % len(dry))
PYEOF
}

same_ids --tp 1,2 --shape 64x1x1,64x256x256,32x128x128 --split row,col --policy even,weighted,adaptive
same_ids --tp 1,2 --shape 64x256x256 --sequence-parallel off,on --policy even,weighted
same_ids --preset "$WORK/blk.shapes" --block --tp 1,2
same_ids --comm-only --comm-sizes 4K,64K --tp 2
echo "ids.sh: ok"
