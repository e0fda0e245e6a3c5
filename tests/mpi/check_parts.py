#!/usr/bin/env python3
"""check_parts.py DIR [KEPT_RANKS STRAGGLER] - a --gather parts run against its traces.

Without KEPT_RANKS (the run kept every rank: --trace-ranks all): every config's figures that
rank 0 finished from the groups' summaries and records are recomputed here from the marks
in its trace (compute [c0, c1], comm ending at x1; A the group's last arrival), with none of
tpbal's code: every iteration's step (max x1 - min c0 over a group, the largest group), its
median, p95, min and max, the spikes (> 1.5 x the median), every rank's median compute, wait
and comm and how often it arrived last, and the straggler (most often last; ties: the larger
mean lateness). The trace keeps 3 decimals: figures agree within 0.01 us.

With KEPT_RANKS: every trace keeps that many ranks (whole groups, "ranks_kept"), and in every
config with tp > 1 and a clear straggler the straggler's group is among them; STRAGGLER is
that rank.
"""
import csv
import glob
import json
import math
import os
import sys

TOL = 0.01


def quantile(v, q):
    s = sorted(v)
    pos = q * (len(s) - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (pos - lo) * (s[hi] - s[lo])


def marks_of(trace):
    """{(position, iter): [c0, c1, x1]} from the spans."""
    m = {}
    for e in trace["traceEvents"]:
        if e.get("ph") != "X" or e.get("cat") != "tpbal":
            continue
        k = (e["tid"], e["args"]["iter"])
        if e["name"] == "compute":
            m.setdefault(k, [None] * 3)[0:2] = [e["ts"], e["ts"] + e["dur"]]
        elif e["name"] == "comm":
            m.setdefault(k, [None] * 3)[2] = e["ts"] + e["dur"]
    return m


def recompute(meta, m):
    tp, iters, world = meta["tp"], meta["iters"], len(meta["world_ranks"])
    steps, ranks = [], {r: {"comp": [], "wait": [], "comm": [], "last": 0, "late": 0.0}
                        for r in range(world)}
    for i in range(iters):
        step = -math.inf
        for g in range(world // tp):
            grp = [m[(r, i)] for r in range(g * tp, (g + 1) * tp)]
            a = max(x[1] for x in grp)
            step = max(step, max(x[2] for x in grp) - min(x[0] for x in grp))
            order = sorted(range(tp), key=lambda q: grp[q][1])
            for q in range(tp):
                r, x = g * tp + q, grp[q]
                ranks[r]["comp"].append(x[1] - x[0])
                ranks[r]["wait"].append(a - x[1])
                ranks[r]["comm"].append(x[2] - a)
            if tp > 1:
                last = g * tp + order[-1]
                ranks[last]["last"] += 1
                ranks[last]["late"] += grp[order[-1]][1] - grp[order[-2]][1]
        steps.append(step)
    return steps, ranks


def close(a, b, what):
    assert abs(a - b) <= TOL, (what, a, b)


def check_full(d, rec, rows):
    n = 0
    for path in sorted(glob.glob(os.path.join(d, "trace-*.json"))):
        t = json.load(open(path))
        meta = t["otherData"]
        c = rec[meta["config"]]
        steps, ranks = recompute(meta, marks_of(t))
        for i, s in enumerate(steps):
            close(s, meta["steps_us"][i], ("step", path, i))
        med = quantile(steps, 0.5)
        close(med, c["step_us"]["median"], ("median", path))
        close(quantile(steps, 0.95), c["step_us"]["p95"], ("p95", path))
        close(min(steps), c["step_us"]["min"], ("min", path))
        close(max(steps), c["step_us"]["max"], ("max", path))
        assert c["nspikes"] == sum(s > 1.5 * med for s in steps), ("spikes", path)
        for r, x in ranks.items():
            row = rows[(c["id"], r)]
            close(quantile(x["comp"], 0.5), float(row["compute_med_us"]), ("compute", path, r))
            close(quantile(x["wait"], 0.5), float(row["wait_med_us"]), ("wait", path, r))
            close(quantile(x["comm"], 0.5), float(row["comm_med_us"]), ("comm", path, r))
            assert int(row["last_count"]) == x["last"], ("last", path, r)
        if c["tp"] > 1:
            best = max(ranks, key=lambda r: (ranks[r]["last"], ranks[r]["late"] / max(1, ranks[r]["last"]), -r))
            assert ranks[best]["last"] == ranks[c["straggler_rank"]]["last"], ("straggler", path)
        n += 1
    assert n, "no traces"
    print("check_parts: %d configs recomputed from their traces" % n)


def check_kept(d, rec, kept, straggler):
    n = 0
    for path in sorted(glob.glob(os.path.join(d, "trace-*.json"))):
        meta = json.load(open(path))["otherData"]
        c, tp = rec[meta["config"]], meta["tp"]
        have = meta["ranks_kept"]
        assert len(have) == min(kept, c["world_size"]) or len(have) == tp, ("kept", path, have)
        assert all(have[k] // tp == have[k - k % tp] // tp for k in range(len(have))), have
        if tp > 1 and c["straggler_rank"] == straggler:
            assert straggler in have, ("straggler's group not kept", path, have)
            n += 1
    assert n, "no config named the straggler %d" % straggler
    print("check_parts: the straggler's group kept in %d configs" % n)


def main():
    d = sys.argv[1]
    lines = [json.loads(x) for x in open(os.path.join(d, "results.jsonl"))]
    rec = {x["id"]: x for x in lines if x.get("type") == "config"}
    rows = {(int(r["id"]), int(r["rank"])): r for r in csv.DictReader(open(os.path.join(d, "ranks.csv")))}
    if len(sys.argv) > 2:
        check_kept(d, rec, int(sys.argv[2]), int(sys.argv[3]))
    else:
        check_full(d, rec, rows)


if __name__ == "__main__":
    main()
