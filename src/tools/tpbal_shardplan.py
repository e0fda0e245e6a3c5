"""tpbal-plan's shard plans (--plan-out, schema tpbal-plan/1): per planned config and TP
group, its ranks, hosts, devices, shards and offsets along the split dimension, and the
speeds; and the check tpbal applies when it reads one (tpb_shardplan_check), so that
nothing it would refuse is written."""
import datetime
import os

import tpbal_model as tm
import tpbal_results as tr
import tpbal_schema as ts

PLAN_SCHEMA = "tpbal-plan/1"
DTYPE_ALIGN = {"fp8": 16}  # fp8 GEMMs need widths in multiples of 16 (src/base/dtype.c)


def speeds_of(pl, ranks, r):
    """The modelled speeds (GFLOP/s at the even shard) of a group."""
    dim = tm.split_dim(r["n"], r["k"], r["split"])
    return [v / 1e3 for v in pl.models.speeds(dim, [pl.borrow[w] for w in ranks], r["m"],
                                                   r["n"], r["k"], r["split"])]


def shard_plan(res, pl, recs, placement_ranks):
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
        groups, memo = [], {}
        order = placement_ranks(pl.hosts, r["placement"])
        for g in range(len(order) // tp):
            grp = order[g * tp:(g + 1) * tp]
            key = tuple(pl.borrow[w] for w in grp)
            if key not in memo:
                shards = pl.models.shards(dim, list(key), r["policy"], r["m"], r["n"], r["k"],
                                          r["split"]) if tp > 1 else [dim]
                memo[key] = (shards, [sum(shards[:i]) for i in range(len(shards))],
                             speeds_of(pl, grp, r))
            shards, offs, speeds = memo[key]
            groups.append({"group": g, "world_ranks": grp,
                           "hosts": [pl.hosts[w] for w in grp],
                           "devices": [devices[w] if w < len(devices) else "" for w in grp],
                           "shards": shards, "offsets": offs, "speeds_gflops": speeds})
        configs.append({"m": r["m"], "n": r["n"], "k": r["k"], "split": r["split"],
                        **ts.variant_dict(r),
                        "split_dim": "k" if r["split"] == "row" else "n",
                        "policy": r["policy"], "tp": tp, "placement": r["placement"],
                        "granularity": pl.g, "dtype": pl.dtype,
                        "predicted_step_us": p["step_us"] if p else None, "groups": groups})
    return {"schema": PLAN_SCHEMA, "tool": "tpbal-plan", "source": os.path.abspath(res.dir),
            "written": datetime.datetime.now(datetime.timezone.utc).isoformat(),
            "speeds": {"from": src, "measured_on": res.run.get("command_line"),
                       "worst_spread": max(spread) if spread else None,
                       "model": "t = c0 + F / R per rank (doc/METRICS.md, tpbal-plan)"},
            "world_size": len(pl.hosts), "configs": configs}


def refusal(c):
    """Why tpbal would refuse config c of a plan (tpb_shardplan_check, run with the plan's
    granularity and dtype), "" if it would take it: a group whose shards do not add up to
    the split dimension, a shard under the granularity or off it (the last may also take
    the dimension mod g), off the dtype's GEMM width, an even entry that is not the even
    split."""
    dim = c["n"] if c["split"] == "col" else c["k"]
    g, align = c["granularity"], DTYPE_ALIGN.get(c["dtype"], 1)
    for grp in c["groups"]:
        sh = grp["shards"]
        if sum(sh) != dim or len(sh) != c["tp"]:
            return "group %d: %d shards adding up to %d" % (grp["group"], len(sh), sum(sh))
        units = sh[:-1] + [sh[-1] - dim % g]
        if any(u < g or u % g or s % align for u, s in zip(units, sh)):
            return "group %d: a shard off the granularity %d or the %s width %d" % (
                grp["group"], g, c["dtype"], align)
        if c["policy"] == "even" and sh != tm.even_shards(dim, c["tp"], g):
            return "group %d: not the even split" % grp["group"]
    return ""
