#!/usr/bin/env python3
"""check_gather.py FULL PARTS KEPT - bench/gather's trace both ways: the parts trace keeps
KEPT ranks, whole TP groups among them the straggler's (its record's straggler_rank), and
every event of a kept rank (its spans, its group's arrows) is the full trace's, unchanged;
the full trace has every rank. (The records and rows are compared byte for byte by
gather.sh.)"""
import json
import os
import sys


def load(d):
    t = json.load(open(os.path.join(d, "trace-bench.json")))
    return t["otherData"], t["traceEvents"]


def key(e):
    return json.dumps(e, sort_keys=True)


def main():
    full_meta, full_ev = load(sys.argv[1])
    meta, ev = load(sys.argv[2])
    kept, tp = meta["ranks_kept"], meta["tp"]
    rec = json.loads(open(os.path.join(sys.argv[2], "results-bench.jsonl")).read())
    assert len(kept) == int(sys.argv[3]), (len(kept), sys.argv[3])
    assert all(kept[j] // tp == kept[j - j % tp] // tp and kept[j] % tp == j % tp
               for j in range(len(kept))), kept
    assert rec["straggler_rank"] in kept, (rec["straggler_rank"], kept)
    assert "ranks_kept" not in full_meta
    assert meta["steps_us"] == full_meta["steps_us"] and meta.get("kept") == full_meta.get("kept")
    ks = set(kept)
    want = sorted(key(e) for e in full_ev
                  if e.get("ph") in ("X", "s", "f") and e.get("tid") in ks)
    have = sorted(key(e) for e in ev if e.get("ph") in ("X", "s", "f"))
    assert want == have, ("kept ranks' events differ", len(want), len(have))
    print("check_gather: %d ranks kept of %d, their %d events as in the full trace"
          % (len(kept), len(full_meta["world_ranks"]), len(have)))


if __name__ == "__main__":
    main()
