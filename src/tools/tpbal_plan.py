#!/usr/bin/env python3
"""tpbal-plan: from measurement to a plan. Fits models to a result directory, checks them
by leave-one-out against what was measured, predicts configs that were not run, recommends
a layout for a world size, and writes shard plans a framework can apply.

  tpbal-plan DIR                       validation, predictions for the measured world
  tpbal-plan DIR --world 64 --ranks-per-node 8 --tp 1,2,4,8
  tpbal-plan DIR --plan-out plan.json  the shards of the recommended config of each shape

Models (tpbal_model.py; doc/METRICS.md, "tpbal-plan"): per rank, a GEMM's time against its
FLOPs, t = c0 + F / R, fitted to every shard it computed and its calibration; per collective
and kind of group (inside one node, across nodes), the ring algorithms' cost in the group
size, T = a (t-1) L + a (t-1)/t V / B. A config's step is its slowest group's slowest rank's
compute on the shard it would get, plus the group's transfer.

Validation: every GEMM config predicted from models fitted without it (its shards, its
calibration and its transfer left out); the error per config and the median, p90 and
largest |error|. Figures marked with '*' extrapolate beyond what was measured (FLOPs, group
size or message bytes outside the measured range, ranks beyond the measured world).

The recommendation for P ranks: per shape, the TP degree t (a divisor of P) whose step is
shortest (latency), and the one whose layer rate over the world, (P/t) / T(t), is highest
(throughput), each with the rest P/t left to data or pipeline parallelism (TP x rest = P).
"""
import datetime
import os
import sys

import tpbal_results as tr
import tpbal_model as tm
from tpbal_results import BadInput, clean

EPILOG = "exit status: 0 written, 2 bad input (unreadable or not a tpbal result, no config " \
         "to model, a bad option)."
PLAN_SCHEMA = "tpbal-plan/1"


def int_list(s):
    try:
        v = [int(x) for x in s.split(",")]
    except ValueError:
        raise BadInput("'%s': expected a comma-separated list of integers" % clean(s))
    if not v or any(x < 1 or x > 1 << 20 for x in v):
        raise BadInput("'%s': every value must be from 1 to 1048576" % clean(s))
    return v


def positive(s):
    v = int_list(s)
    if len(v) != 1:
        raise BadInput("'%s': expected one integer" % clean(s))
    return v[0]


def shapes(s):
    out = []
    for part in s.split(","):
        try:
            m, n, k = (int(x) for x in part.lower().split("x"))
        except ValueError:
            raise BadInput("'%s': expected MxNxK[,...]" % clean(part))
        if min(m, n, k) < 1:
            raise BadInput("'%s': dimensions must be positive" % clean(part))
        out.append((m, n, k))
    return out


def parse_args(argv):
    p = tr.ArgumentParser("tpbal-plan", __doc__, epilog=EPILOG)
    p.add_argument("dirs", nargs="+", metavar="DIR",
                   help="a tpbal result directory (--out of tpbal); several runs of one sweep "
                        "are pooled: every measurement fits the models, and each config's "
                        "reference is the median of its runs' median steps")
    p.add_argument("--world", type=positive, metavar="P",
                   help="ranks to plan for (default: the measured world)")
    p.add_argument("--ranks-per-node", type=positive, metavar="N",
                   help="ranks per node beyond the measured ones (default: as measured)")
    p.add_argument("--tp", type=int_list, metavar="LIST",
                   help="TP degrees (default: the powers of two dividing P)")
    p.add_argument("--shape", type=shapes, metavar="MxNxK,...",
                   help="shapes (default: the measured ones)")
    p.add_argument("--placement", choices=("packed", "spread", "both"), default="packed",
                   help="groups of consecutive ranks, one rank per node, or both")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--plan-out", metavar="FILE",
                   help="write the shard plan (schema %s) of the recommended config of each "
                        "shape" % PLAN_SCHEMA)
    return p.parse_args(argv)


def world_layout(res, world, per_node):
    """Host per rank of the planned world: the measured ranks' hosts, then nodes of
    per_node ranks; and the measured rank whose models each rank borrows."""
    hosts = tm.hosts_of(res.run)
    measured = len(hosts)
    per = per_node or max(1, max(hosts.count(h) for h in set(hosts)))
    if world <= measured and not per_node:
        out = list(hosts[:world])  # the measured ranks where they ran
    else:  # a planned world: nodes of `per` consecutive ranks
        out = ["node-%d" % (w // per) for w in range(world)]
    return out, [w % measured for w in range(world)], per


def placement_ranks(world, tp, hosts, placement):
    """World ranks in position order: packed keeps consecutive ranks together, spread deals
    them over the nodes round-robin."""
    if placement == "packed":
        return list(range(world))
    nodes = []
    for w, h in enumerate(hosts):
        if h not in [n[0] for n in nodes]:
            nodes.append((h, []))
        [n for n in nodes if n[0] == h][0][1].append(w)
    order, i = [], 0
    while len(order) < world:
        for _, ranks in nodes:
            if i < len(ranks):
                order.append(ranks[i])
        i += 1
    return order


class Planner:
    def __init__(self, res, hosts, borrow):
        self.res, self.hosts, self.borrow = res, hosts, borrow
        self.g = tm.granularity_of(res.run)
        self.dtype = res.run.get("dtype") or "fp32"
        self.models = tm.Models(res.configs, tm.hosts_of(res.run), self.g)

    def predict(self, m, n, k, split, policy, tp, ranks, sp="off"):
        """ranks beyond the measured world borrow a measured rank's compute model"""
        p = self.models.predict(m, n, k, split, policy, tp, ranks, self.dtype, hosts=self.hosts,
                                borrow=self.borrow, sp=sp)
        if p is None:
            return None
        if any(w >= len(tm.hosts_of(self.res.run)) for w in ranks):
            p["extrapolates"] = sorted(set(p["extrapolates"]) | {"ranks"})
        return p


def predictions(pl, world, tps, shape_list, placements):
    """Every (shape, TP degree, placement, split, sequence parallelism, policy): sequence
    parallelism on where the run measured it (its collectives need their own fits)."""
    sps = ["off"] + (["on"] if any(c.get("sequence_parallel") == "on"
                                   for c in pl.res.configs) else [])
    rows = []
    for (m, n, k) in shape_list:
        for tp in tps:
            if world % tp:
                continue
            for place in placements:
                ranks = placement_ranks(world, tp, pl.hosts, place)
                for split in ("row", "col"):
                    for sp in sps if tp > 1 else ["off"]:
                        for policy in (("even", "weighted") if tp > 1 else ("even",)):
                            p = pl.predict(m, n, k, split, policy, tp, ranks, sp)
                            rows.append({"m": m, "n": n, "k": k, "tp": tp, "placement": place,
                                         "split": split, "sequence_parallel": sp,
                                         "policy": policy, "ranks": ranks, "prediction": p})
    return rows


def recommend(rows, world):
    """Per shape: the latency-best and the throughput-best TP degree (TP x rest = P)."""
    out = []
    for shape in sorted({(r["m"], r["n"], r["k"]) for r in rows}):
        best = {}
        for r in rows:
            p = r["prediction"]
            if (r["m"], r["n"], r["k"]) != shape or p is None:
                continue
            if r["tp"] not in best or p["step_us"] < best[r["tp"]]["prediction"]["step_us"]:
                best[r["tp"]] = r
        if not best:
            continue
        lat = min(best.values(), key=lambda r: r["prediction"]["step_us"])
        thr = max(best.values(), key=lambda r: (world / r["tp"]) / r["prediction"]["step_us"])
        out.append({"m": shape[0], "n": shape[1], "k": shape[2], "latency": lat,
                    "throughput": thr, "world": world})
    return out


def star(p):
    return "*" if p and p["extrapolates"] else " "


def split_label(r):
    """"row", "col", or with sequence parallelism "row+sp", "col+sp" (as tpbal prints it)."""
    return r["split"] + ("+sp" if r.get("sequence_parallel") == "on" else "")


def text(res, val, summ, rows, recs, world):
    lines = ["tpbal-plan: %s, %d configs measured on %d ranks%s; planning for %d ranks" % (
        clean(res.dir), len(res.configs), len(tm.hosts_of(res.run)),
        " in %d runs" % res.runs if getattr(res, "runs", 1) > 1 else "", world)]
    lines.append("# validation, leave-one-out (each config predicted from models fitted "
                 "without it)")
    lines.append("#  id  tp split policy   shape            measured   predicted   error")
    for v in val:
        lines.append("  %3d %3d %-5s %-8s %-14s %10s %10s%s %7s" % (
            v["config"], v["tp"], split_label(v), v["policy"], v["shape"],
            tr.us_text(v["measured_us"]), tr.us_text(v["predicted_us"]),
            "*" if v["extrapolates"] else " ",
            "%+.1f%%" % (100 * v["error"]) if v["error"] is not None else "-"))
    inj = res.run.get("inject_delay_rank")
    if isinstance(inj, int) and not isinstance(inj, bool) and inj >= 0:
        lines.append("# warning: this run injected a delay on rank %d (--inject-delay): no model "
                     "knows it, so the errors above say how much it cost, not how good the "
                     "models are" % inj)
    if summ:
        lines.append("# median |error| %.1f %%, p90 %.1f %%, largest %.1f %% over %d configs%s" % (
            100 * summ["median"], 100 * summ["p90"], 100 * summ["max"], summ["configs"],
            ", %d without a model" % summ["unpredicted"] if summ["unpredicted"] else ""))
    lines.append("# predictions (* extrapolates: FLOPs, group size or bytes beyond the measured, "
                 "or ranks beyond the measured world; no model: no transfer of that kind of "
                 "group, inside a node or across nodes, was measured)")
    lines.append("#  tp placement split policy   shape               step    compute       "
                 "comm       idle")
    for r in rows:
        p = r["prediction"]
        lines.append("  %3d %-9s %-5s %-8s %-14s %10s%s %10s %10s %10s" % (
            r["tp"], r["placement"], split_label(r), r["policy"],
            "%dx%dx%d" % (r["m"], r["n"], r["k"]),
            tr.us_text(p["step_us"]) if p else "no model", star(p),
            tr.us_text(p["comp_us"]) if p else "-", tr.us_text(p["comm_us"]) if p else "-",
            tr.us_text(p["idle_us"]) if p else "-"))
    for rc in recs:
        a, b = rc["latency"], rc["throughput"]
        lines.append("# recommend for %dx%dx%d on %d ranks: shortest step TP %d (%s %s %s, %s%s; "
                     "the other %d-way for DP/PP); highest layer rate TP %d (%s %s, %s a step x "
                     "%d groups)" % (
                         rc["m"], rc["n"], rc["k"], world, a["tp"], split_label(a), a["policy"],
                         a["placement"], tr.us_text(a["prediction"]["step_us"]),
                         star(a["prediction"]).strip(), world // a["tp"], b["tp"], split_label(b),
                         b["policy"], tr.us_text(b["prediction"]["step_us"]), world // b["tp"]))
    return "\n".join(lines)


def speeds_of(pl, ranks, r):
    """The modelled speeds (GFLOP/s at the even shard) of a group."""
    dim = tm.split_dim(r["n"], r["k"], r["split"])
    return [v / 1e3 for v in pl.models.speeds(dim, [pl.borrow[w] for w in ranks], r["m"],
                                                   r["n"], r["k"], r["split"])]


def shard_plan(res, pl, recs):
    """The plan document: per recommended config, per TP group, ranks, hosts, devices,
    shards and offsets along the split dimension, and the speeds."""
    ranks_info = tr.records(res.run.get("ranks"))
    devices = [str(r.get("device_uuid") or r.get("device") or "") for r in ranks_info]
    src = sorted({c.get("speed_source") for c in res.configs if c.get("speed_source")})
    spread = [s for c in res.configs for s in (c.get("speed_spread") or []) if tr.finite(s)]
    configs = []
    for rc in recs:
        r = rc["latency"]
        p, tp = r["prediction"], r["tp"]
        dim = tm.split_dim(r["n"], r["k"], r["split"])
        groups = []
        for g in range(len(r["ranks"]) // tp):
            grp = r["ranks"][g * tp:(g + 1) * tp]
            shards = pl.models.shards(dim, [pl.borrow[w] for w in grp], r["policy"], r["m"],
                                      r["n"], r["k"], r["split"]) if tp > 1 else [dim]
            offs = [sum(shards[:i]) for i in range(len(shards))]
            groups.append({"group": g, "world_ranks": grp,
                           "hosts": [pl.hosts[w] for w in grp],
                           "devices": [devices[w] if w < len(devices) else "" for w in grp],
                           "shards": shards, "offsets": offs,
                           "speeds_gflops": speeds_of(pl, grp, r)})
        configs.append({"m": r["m"], "n": r["n"], "k": r["k"], "split": r["split"],
                        "sequence_parallel": r.get("sequence_parallel", "off"),
                        "split_dim": "k" if r["split"] == "row" else "n",
                        "policy": r["policy"], "tp": tp, "placement": r["placement"],
                        "granularity": pl.g, "dtype": pl.dtype,
                        "predicted_step_us": p["step_us"], "groups": groups})
    return {"schema": PLAN_SCHEMA, "tool": "tpbal-plan", "source": os.path.abspath(res.dir),
            "written": datetime.datetime.now(datetime.timezone.utc).isoformat(),
            "speeds": {"from": src, "measured_on": res.run.get("command_line"),
                       "worst_spread": max(spread) if spread else None,
                       "model": "t = c0 + F / R per rank (doc/METRICS.md, tpbal-plan)"},
            "world_size": len(pl.hosts), "configs": configs}


def main(argv):
    o = parse_args(argv)
    runs = [tm.modelled(tr.load(d)) for d in o.dirs]
    if len({r.run.get("world_size") for r in runs}) > 1:
        raise BadInput("the runs have different world sizes: pool runs of one sweep")
    res = runs[0] if len(runs) == 1 else tm.Pooled(runs)
    if not [c for c in res.configs if c.get("comm_only") != "yes"]:
        raise BadInput("%s has no GEMM config: nothing to model" % clean(res.jsonl))
    tm.check_configs(res.configs, len(tm.hosts_of(res.run)))
    world = o.world or len(tm.hosts_of(res.run))
    hosts, borrow, _ = world_layout(res, world, o.ranks_per_node)
    pl = Planner(res, hosts, borrow)
    tps = o.tp or [t for t in (1 << i for i in range(21)) if t <= world and world % t == 0]
    shape_list = o.shape or sorted({(c["m"], c["n"], c["k"]) for c in res.configs
                                    if c.get("comm_only") != "yes"})
    places = ("packed", "spread") if o.placement == "both" else (o.placement,)
    val = tm.validate(res)
    summ = tm.error_summary(val)
    rows = predictions(pl, world, tps, shape_list, places)
    recs = recommend(rows, world)
    if o.plan_out:
        if not recs:
            raise BadInput("no config could be predicted: no shard plan to write")
        tr.write_atomic(o.plan_out, tr.json_dumps(shard_plan(res, pl, recs), indent=1),
                        inputs=[res.jsonl])
    if o.format == "json":
        print(tr.json_dumps({"schema": PLAN_SCHEMA, "validation": {"configs": val,
                                                                    "summary": summ},
                             "predictions": rows, "recommend": recs}))
    else:
        print(text(res, val, summ, rows, recs, world))
    return 0


if __name__ == "__main__":
    sys.exit(tr.run_main("tpbal-plan", main, sys.argv[1:]))
