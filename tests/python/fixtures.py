"""Synthetic tpbal result directories for the tools' unit tests (no MPI, no tpbal run)."""
import json
import os


def samples(step, n=41, spread=0.01):
    """n step samples whose median is step, within +-spread of it, in an order that is no
    trend (what a quiet run records)."""
    return [step * (1.0 + spread * (((i * 7) % 5) - 2) / 2.0) for i in range(n)]


def config(cid=0, tp=2, split="row", policy="even", m=64, n=256, k=256, step=100.0, **kw):
    c = {"type": "config", "id": cid, "backend": "host", "world_size": 2, "tp": tp,
         "split": split, "policy": policy, "placement": "packed", "group_nodes": 1,
         "world_ranks": [0, 1], "col_collective": "allgather", "shape": "",
         "comm_only": "no", "collective": "all-reduce" if split == "row" else "all-gather",
         "comm_bytes": m * n * 4, "m": m, "n": n, "k": k, "dtype": "fp32", "iters": 10,
         "warmup": 2, "shards": [k // 2, k // 2], "speed_source": "none",
         "speeds": [None, None], "step_us": {"median": step, "p95": step * 1.02,
                                             "min": step * 0.98, "max": step * 1.1},
         "compute_us": [50.0, 60.0], "wait_us": [10.0, 0.0], "comm_us": [20.0, 20.0],
         "xfer_us": 20.0, "lb": 0.83, "u": 0.9, "e": 0.7, "e_het": None, "t1_us": 140.0,
         "r": 3.0, "tflops": 0.05, "algbw_gbs": 3.0, "busbw_gbs": 3.0,
         "predicted_speedup": None, "speedup": None, "straggler_rank": 1, "slowdown": 1.1,
         "whatif_step_us": step / 1.1, "check": "off", "emulate_asked": [1, 1],
         "step_samples": "all", "step_samples_us": samples(step) if step else []}
    c.update(kw)
    return c


def run_record(schema=1, **kw):
    r = {"type": "run", "schema": schema, "tool": "tpbal", "backend": "host", "world_size": 2,
         "command_line": "tpbal", "status": "finished", "configs": 1, "skipped": 0}
    r.update(kw)
    return r


def write_dir(d, configs, run=None, summary=None, ranks=None, traces=None):
    os.makedirs(d, exist_ok=True)
    recs = [run or run_record()] + configs + ([summary] if summary else [])
    with open(os.path.join(d, "results.jsonl"), "w") as fh:
        for r in recs:
            fh.write((r if isinstance(r, str) else json.dumps(r)) + "\n")
    if ranks is not None:
        with open(os.path.join(d, "ranks.csv"), "w") as fh:
            fh.write(ranks)
    for cid, t in (traces or {}).items():
        with open(os.path.join(d, "trace-%03d.json" % cid), "w") as fh:
            fh.write(t if isinstance(t, str) else json.dumps(t))
    return d


def trace(tp=2, steps=None, slowest=0):
    """A trace of one group of 2 ranks and 2 iterations; per rank and iteration: compute
    start, compute end (arrival), comm start (the last arrival), comm end."""
    ev = [{"name": "process_name", "ph": "M", "pid": 1, "tid": 0, "args": {"name": "node-a"}}]
    per_rank = {0: [(0, 10, 12, 30), (100, 105, 115, 130)],
                1: [(0, 12, 12, 30), (100, 115, 115, 131)]}
    for r, its in per_rank.items():
        ev.append({"name": "thread_name", "ph": "M", "pid": 1, "tid": r,
                   "args": {"name": "rank %d" % r}})
        for i, (c0, c1, a, x1) in enumerate(its):
            for name, ts, dur in (("compute", c0, c1 - c0), ("wait", c1, a - c1),
                                  ("comm", a, x1 - a)):
                ev.append({"name": name, "ph": "X", "pid": 1, "tid": r, "ts": ts, "dur": dur,
                           "args": {"iter": i}})
    other = {"tool": "tpbal", "config": 0, "tp": tp, "iters": 2, "iters_kept": 2,
             "slowest_iter": slowest, "steps_us": steps or [30.0, 31.0]}
    return {"otherData": other, "traceEvents": ev}
