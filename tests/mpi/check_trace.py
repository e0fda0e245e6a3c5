#!/usr/bin/env python3
"""Assert the structure of tpbal's Chrome trace files (not just that they parse).

usage: check_trace.py DIR [WORLD [KEPT]]
For every trace-NNN.json in DIR (or the run's trace.json of --trace-per run): a
traceEvents list; one named process per host (pid from 1) and one named thread per rank
("rank R, TP group G" per config; "rank R" per run, whose spans name their group); per
rank and config, spans compute/wait/comm for every kept iteration (all, or the config's
"kept" list with --trace-iters), in order and without overlap; every span's args name its
config and iteration, every comm span its collective and bytes; every flow arrow starts
inside the compute span of its group's last arrival and ends inside the wait span of a
rank of the same group and iteration. KEPT: the number of iterations each config must
keep (--trace-iters); without it every config must keep all.
"""
import glob
import json
import os
import sys

EPS = 0.002  # us: the file keeps 3 decimals
CROSS_EPS = 1000.0  # us: between two configs' spans, their clock corrections' disagreement


def kept_iters(meta, kept):
    iters = meta["iters"]
    its = meta.get("kept", list(range(iters)))
    assert meta["iters_kept"] == len(its), (meta["iters_kept"], len(its))
    assert its == sorted(set(its)) and all(0 <= i < iters for i in its), its
    if kept is None:
        assert len(its) == iters, ("iterations left out", len(its), iters)
    else:
        assert len(its) >= min(kept, iters), ("window too small", len(its), kept)
    return its


def inside(e, ts):
    return e["ts"] - EPS <= ts <= e["ts"] + e["dur"] + EPS


def check_flows(ev, spans, group_of):
    """spans: (tid, config, iter, name) -> event; group_of(tid, config) -> TP group."""
    flows = {}
    for e in ev:
        if e.get("ph") in ("s", "f"):
            flows.setdefault(e["id"], {})[e["ph"]] = e
    for fid, f in flows.items():
        assert set(f) == {"s", "f"}, ("unpaired flow", fid, f)
        s, t = f["s"], f["f"]
        owner = [k for k in spans if k[0] == s["tid"] and k[3] == "compute" and
                 inside(spans[k], s["ts"])]
        assert owner, ("flow start outside a compute span", s)
        _, cfg, it, _ = owner[0]
        w = spans.get((t["tid"], cfg, it, "wait"))
        assert w and inside(w, t["ts"]), ("flow end outside the wait span", t, w)
        assert group_of(s["tid"], cfg) == group_of(t["tid"], cfg), ("flow across groups", f)
        last = max(spans[(q, cfg, it, "compute")]["ts"] + spans[(q, cfg, it, "compute")]["dur"]
                   for q in {k[0] for k in spans if k[1] == cfg and k[2] == it}
                   if group_of(q, cfg) == group_of(s["tid"], cfg))
        c = spans[owner[0]]
        assert abs(c["ts"] + c["dur"] - last) <= EPS, ("flow not from the last arrival", f)
    return len(flows)


def check_spans(ev, procs, metas, kept, tid_of_pos):
    """Per config (metas: config id -> otherData facts), the spans of every rank."""
    spans, by_tid, chunks = {}, {}, []
    for e in ev:
        if e["ph"] != "X":
            continue
        if e["name"] in ("gemm chunk", "comm chunk"):  # --overlap chunked: checked below
            assert e["cat"] == "chunk" and e["dur"] >= 0, e
            chunks.append(e)
            continue
        assert e["name"] in ("compute", "wait", "comm"), e["name"]
        assert e["dur"] >= 0 and e["pid"] in procs and e["pid"] >= 1, e
        cfg = e["args"]["config"]
        assert cfg in metas, ("a span of an unknown config", cfg)
        if e["name"] == "comm":
            assert e["args"]["collective"] == metas[cfg]["collective"], e
            assert e["args"]["bytes"] == metas[cfg]["bytes"], e
        spans[(e["tid"], cfg, e["args"]["iter"], e["name"])] = e
        by_tid.setdefault(e["tid"], []).append(e)
    for cfg, meta in metas.items():
        its = kept_iters(meta, kept)
        positions = meta.get("ranks_kept", range(len(meta["world_ranks"])))
        for pos in positions:
            tid = tid_of_pos(meta, pos)
            for i in its:
                for ph in ("compute", "wait", "comm"):
                    assert (tid, cfg, i, ph) in spans, ("missing span", tid, cfg, i, ph)
        n = sum(1 for k in spans if k[1] == cfg)
        assert n == 3 * len(its) * len(positions), ("extra spans", cfg, n)
    for e in chunks:  # a chunk's GEMM inside its compute span, its collective done by x1
        cfg, it = e["args"]["config"], e["args"]["iter"]
        tid = e["tid"] - (1000000 if e["name"] == "comm chunk" else 0)
        c, x = spans[(tid, cfg, it, "compute")], spans[(tid, cfg, it, "comm")]
        if e["name"] == "gemm chunk":
            assert inside(c, e["ts"]) and inside(c, e["ts"] + e["dur"]), ("chunk GEMM outside", e)
        else:
            assert e["ts"] + e["dur"] <= x["ts"] + x["dur"] + EPS, ("chunk comm after x1", e, x)
    for tid, lst in by_tid.items():  # a config's spans in order; a rank's never overlap (the
        # configs of an interleaved set take turns in blocks on the run's time axis)
        for cfg in {e["args"]["config"] for e in lst}:
            own = [e for e in lst if e["args"]["config"] == cfg]
            for a, b in zip(own, own[1:]):
                assert a["ts"] + a["dur"] <= b["ts"] + EPS, ("overlap or disorder", tid, a, b)
        lst = sorted(lst, key=lambda e: e["ts"])
        for a, b in zip(lst, lst[1:]):
            # two configs' marks are each moved onto rank 0's clock with the clock samples
            # around them (sweep_config.c correct_marks: the start's and the latest resync),
            # so at a boundary between configs they agree only within those samples' errors
            # (rtt/2 each: 84 us seen under the sanitizers beside other tests)
            eps = EPS if a["args"]["config"] == b["args"]["config"] else CROSS_EPS
            assert a["ts"] + a["dur"] <= b["ts"] + eps, ("overlap", tid, a, b)
    return spans


def names(ev, world, kept_ranks=None):
    """Thread (rank) and process (host) names: pids from 1, one thread per rank (per kept
    rank: --gather parts keeps some)."""
    threads = {e["tid"]: e["args"]["name"] for e in ev if e.get("name") == "thread_name"}
    procs = {e["pid"]: e["args"]["name"] for e in ev if e.get("name") == "process_name"}
    assert procs and min(procs) >= 1, procs
    if kept_ranks is not None:
        assert sorted(threads) == kept_ranks, (threads, kept_ranks)
    elif world:
        assert sorted(threads) == list(range(world)), threads
    return threads, procs


def check_config_file(path, world, kept):
    doc = json.load(open(path))
    meta = doc["otherData"]
    ev = doc["traceEvents"]
    threads, procs = names(ev, world, meta.get("ranks_kept"))
    order = meta.get("world_ranks", list(range(len(threads))))  # position -> world rank
    for tid, name in threads.items():
        assert name == "rank %d, TP group %d" % (order[tid], tid // meta["tp"]), (name, tid)
    spans = check_spans(ev, procs, {meta["config"]: meta}, kept, lambda m, pos: pos)
    nflow = check_flows(ev, spans, lambda tid, cfg: tid // meta["tp"])
    return len(threads), len(kept_iters(meta, kept)), nflow


def check_run_file(path, world, kept):
    doc = json.load(open(path))
    other = doc["otherData"]
    assert other["trace_per"] == "run", other
    metas = {m["config"]: m for m in other["configs"]}
    ev = doc["traceEvents"]
    threads, procs = names(ev, world)
    for tid, name in threads.items():
        assert name == "rank %d" % tid, (name, tid)
    for e in ev:  # tid = world rank; the group is in the args, from the position
        if e.get("ph") == "X":
            m = metas[e["args"]["config"]]
            pos = m["world_ranks"].index(e["tid"])
            assert e["args"]["group"] == pos // m["tp"], e
    spans = check_spans(ev, procs, metas, kept, lambda m, pos: m["world_ranks"][pos])

    def group_of(tid, cfg):
        m = metas[cfg]
        return m["world_ranks"].index(tid) // m["tp"]
    nflow = check_flows(ev, spans, group_of)
    return len(threads), len(metas), nflow


def main():
    d = sys.argv[1]
    world = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    kept = int(sys.argv[3]) if len(sys.argv) > 3 else None
    run = os.path.join(d, "trace.json")
    if os.path.exists(run):
        ranks, ncfg, nflow = check_run_file(run, world, kept)
        print("the run's trace ok (%d ranks, %d configs, %d arrows)" % (ranks, ncfg, nflow))
        return
    files = sorted(glob.glob(os.path.join(d, "trace-*.json")))
    assert files, "no trace files in " + d
    arrows = 0
    for f in files:
        ranks, iters, nflow = check_config_file(f, world, kept)
        arrows += nflow
    print("%d trace files ok (%d ranks x %d iterations each, %d arrows)" % (
        len(files), ranks, iters, arrows))


if __name__ == "__main__":
    main()
