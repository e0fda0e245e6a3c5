#!/usr/bin/env python3
"""Assert the structure of tpbal's Chrome trace files (not just that they parse).

usage: check_trace.py DIR [WORLD [KEPT]]
For every trace-NNN.json in DIR: a traceEvents list; one named process per host and one
named thread per rank; per rank, spans compute/wait/comm for every kept iteration (all,
or otherData's "kept" list with --trace-iters), in order and without overlap; every
span's args name its config and iteration. KEPT: the number of iterations each trace must
keep (--trace-iters); without it every trace must keep all.
"""
import glob
import json
import os
import sys

EPS = 0.002  # us: the file keeps 3 decimals


def check(path, world, kept):
    doc = json.load(open(path))
    meta = doc["otherData"]
    iters = meta["iters"]
    its = meta.get("kept", list(range(iters)))
    assert meta["iters_kept"] == len(its), (meta["iters_kept"], len(its))
    assert its == sorted(set(its)) and all(0 <= i < iters for i in its), its
    if kept is None:
        assert len(its) == iters, ("iterations left out", len(its), iters)
    else:
        assert len(its) >= min(kept, iters), ("window too small", len(its), kept)
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
        assert len(lst) == 3 * len(its), (tid, len(lst), len(its))
        for j, i in enumerate(its):
            names = [s["name"] for s in lst[3 * j:3 * j + 3]]
            assert names == ["compute", "wait", "comm"], (tid, i, names)
            assert all(s["args"]["iter"] == i for s in lst[3 * j:3 * j + 3])
        for a, b in zip(lst, lst[1:]):
            assert a["ts"] + a["dur"] <= b["ts"] + EPS, ("overlap or disorder", tid, a, b)
    return len(spans), len(its)


def main():
    d = sys.argv[1]
    world = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    kept = int(sys.argv[3]) if len(sys.argv) > 3 else None
    files = sorted(glob.glob(os.path.join(d, "trace-*.json")))
    assert files, "no trace files in " + d
    for f in files:
        ranks, iters = check(f, world, kept)
    print("%d trace files ok (%d ranks x %d iterations each)" % (len(files), ranks, iters))


if __name__ == "__main__":
    main()
