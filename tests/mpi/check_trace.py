#!/usr/bin/env python3
"""Assert the structure of tpbal's Chrome trace files (not just that they parse).

usage: check_trace.py DIR [WORLD]
For every trace-NNN.json in DIR: a traceEvents list; one named process per host and one
named thread per rank; per rank, spans compute/wait/comm for every measured iteration,
in order and without overlap; every span's args name its config and iteration.
"""
import glob
import json
import os
import sys

EPS = 0.002  # us: the file keeps 3 decimals


def check(path, world):
    doc = json.load(open(path))
    meta = doc["otherData"]
    iters = meta["iters"]
    ev = doc["traceEvents"]
    threads = {e["tid"]: e["args"]["name"] for e in ev if e.get("name") == "thread_name"}
    procs = {e["pid"]: e["args"]["name"] for e in ev if e.get("name") == "process_name"}
    assert procs, "no process names"
    if world:
        assert sorted(threads) == list(range(world)), threads
    order = meta.get("world_ranks", list(range(len(threads))))  # position -> world rank
    for tid, name in threads.items():
        assert name == "rank %d" % order[tid], (name, tid, order)
    spans = {}
    for e in ev:
        if e["ph"] != "X":
            continue
        assert e["name"] in ("compute", "wait", "comm"), e["name"]
        assert e["dur"] >= 0 and e["pid"] in procs
        assert e["args"]["config"] == meta["config"]
        spans.setdefault(e["tid"], []).append(e)
    assert sorted(spans) == sorted(threads), "every rank has spans"
    for tid, lst in spans.items():
        assert len(lst) == 3 * iters, (tid, len(lst), iters)
        for i in range(iters):
            names = [s["name"] for s in lst[3 * i:3 * i + 3]]
            assert names == ["compute", "wait", "comm"], (tid, i, names)
            assert all(s["args"]["iter"] == i for s in lst[3 * i:3 * i + 3])
        for a, b in zip(lst, lst[1:]):
            assert a["ts"] + a["dur"] <= b["ts"] + EPS, ("overlap or disorder", tid, a, b)
    return len(spans), iters


def main():
    d = sys.argv[1]
    world = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    files = sorted(glob.glob(os.path.join(d, "trace-*.json")))
    assert files, "no trace files in " + d
    for f in files:
        ranks, iters = check(f, world)
    print("%d trace files ok (%d ranks x %d iterations each)" % (len(files), ranks, iters))


if __name__ == "__main__":
    main()
