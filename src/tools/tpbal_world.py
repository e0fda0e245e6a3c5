"""tpbal-plan for --block runs (doc/METRICS.md, "Blocks and world plans").

A block is predicted as the sum of its GEMMs' predicted steps, each with its own split,
shards and collective (tpbal_model.Models.predict): the measured block runs them back to
back, the next one starting as the last one's collective ends.

  validate_blocks  every measured block predicted from models fitted without its own GEMMs
                   (leave-one-out), against its measured median step
  world_plan       TP x PP x DP layouts of P ranks from the predicted block:
                     stage = (layers / pp) blocks x (1 + backward) (backward: the backward
                             pass's time over the forward's, 2 by default: a model)
                     pipeline = (microbatches + pp - 1) stages (1F1B: the bubble is
                             (pp - 1) / (microbatches + pp - 1) of it, a model)
                     DP = the gradient all-reduce of a stage's weights over the dp ranks
                             that hold the same shard (one per replica), on the measured
                             all-reduce's alpha-beta fit for that kind of link
                     step = pipeline + DP (not overlapped); tokens/s per rank =
                             dp x microbatches x M / step / P
                   ranked by tokens/s per rank; '*' where a figure extrapolates.
The activations sent between pipeline stages are not modelled.
"""
import tpbal_model as tm
import tpbal_glossary as tg
import tpbal_results as tr
import tpbal_schema as ts
from tpbal_results import BadInput, clean, finite


def add_args(p, int_list, positive):
    """The world plan's options (int_list, positive: tpbal-plan's argument types)."""
    p.add_argument("--pp", type=int_list, metavar="LIST",
                   help="--block runs: pipeline depths of the world plan (TP x PP x DP = P; "
                        "default 1)")
    p.add_argument("--dp", type=int_list, metavar="LIST",
                   help="data-parallel degrees the world plan may use (default: any that "
                        "completes TP x PP x DP = P)")
    p.add_argument("--microbatches", type=positive, metavar="B",
                   help="microbatches of M tokens per step and replica (1F1B; default 8)")
    p.add_argument("--layers", type=positive, metavar="L",
                   help="blocks in the model, split over the pipeline stages (default 32)")
    p.add_argument("--backward", type=float, default=2.0, metavar="F",
                   help="the backward pass's time over the forward's (default 2: a model)")


def wants_world(o, res=None):
    """A world plan: asked by its options, or a --block run planned for another --world
    (its options at their documented defaults: PP 1, 8 microbatches, 32 blocks)."""
    asked = bool(o.pp or o.dp or o.microbatches or o.layers)
    return asked or bool(getattr(o, "world", None) and getattr(res, "blocks", None))


def gemms_of(res, b):
    """The config records of block b, in its order."""
    by = {c["id"]: c for c in res.configs}
    out = [by.get(c) for c in b["configs"]]
    if any(c is None for c in out):
        raise BadInput("block %s names a config its results do not hold" % b.get("id"))
    return out


def _predict_gemm(mdl, x):
    """Config x predicted on the ranks and shards it ran with."""
    ranks = x.get("world_ranks") or list(range(x["world_size"]))
    shards = x.get("shards") if all(finite(v) for v in x.get("shards") or [None]) else None
    return mdl.predict(x["m"], x["n"], x["k"], x["split"], x["policy"], x["tp"], ranks,
                       x["dtype"], x.get("collective"), hosts=x.get("run_hosts"),
                       shards=shards, sp=x.get("sequence_parallel", "off"))


def validate_blocks(res, hosts, g):
    """Leave-one-out per measured block: its GEMMs predicted from models fitted without any
    of them, summed, against the block's median step."""
    rows = []
    for b in getattr(res, "blocks", []):
        mdl = tm.Models(res.configs, hosts, g, leave_out=set(b["configs"]))
        preds = [_predict_gemm(mdl, x) for x in gemms_of(res, b)]
        total = sum(p["step_us"] for p in preds) if all(preds) else None
        meas = b["step_us"]["median"]
        rows.append({"block": b["id"], "name": b.get("name", "block"), "tp": b["tp"],
                     "policy": b.get("policy", "?"), "measured_us": meas,
                     "predicted_us": total,
                     "error": total / meas - 1.0 if total else None,
                     "extrapolates": sorted({f for p in preds for f in p["extrapolates"]})
                     if total else ["no model"]})
    return rows


def block_shapes(res):
    """The GEMMs of the run's block: (m, n, k, split, variant...), in order."""
    if not getattr(res, "blocks", None):
        raise BadInput("%s has no block (tpbal --block): --pp, --dp, --microbatches and "
                       "--layers plan a world from a measured block" % clean(res.dir))
    return [part_key(x) for x in gemms_of(res, res.blocks[0])]


def part_key(r):
    """A GEMM's place in a block: its shape, split and variant (sequence parallelism)."""
    return (r["m"], r["n"], r["k"], r["split"], *ts.variant(r))


def block_parts(res):
    """A --block run's GEMMs by part_key, each to its name in the block ("qkv_proj"); {} for
    a run without a block. The block fixes each GEMM's split: tpbal-plan recommends only
    those, as parts, so that no GEMM's line names a config the block could not run."""
    if not getattr(res, "blocks", None):
        return {}
    return {part_key(x): x.get("shape") or "%dx%dx%d" % (x["m"], x["n"], x["k"])
            for x in gemms_of(res, res.blocks[0])}


def run_block_uses(res, world):
    """The run's own block answer (its summary's "block_use" items), for the measured world."""
    summ = res.summary if isinstance(getattr(res, "summary", None), dict) else {}
    if world != len(tm.hosts_of(res.run)):
        return []
    return [a for a in tr.records(summ.get("answer")) if a.get("kind") == "block_use"]


def run_block_answer(res, world):
    """"# recommend for block NAME on P ranks, as the run measured it: ..." per question,
    with the run's interval against the runner-up and its verdict (sure, a draw, not sure)."""
    lines = []
    for a in run_block_uses(res, world):
        thr = a.get("question") == "throughput"
        fig = ("%.0f tokens/s per rank" % tr.num(a.get("tokens_per_s_rank")) if thr else
               "%s a step" % tr.us_text(tr.num(a.get("step_us"))))
        lo, hi, x = (tr.num(a.get(k)) for k in ("over_runner_up_lo", "over_runner_up_hi",
                                                "over_runner_up"))
        vs = "" if x is None else "; %.2fx TP %s's%s: %s" % (
            x, a.get("runner_up_tp"), " [%.2f, %.2f]" % (lo, hi) if lo is not None and
            hi is not None else "", tg.block_sure(a.get("verdict")))
        lines.append("# recommend for block %s on %d ranks, as the run measured it: %s TP %s "
                     "%s (%s%s)" % (clean(a.get("block")), world,
                                    "highest tokens/s per rank (throughput)" if thr else
                                    "shortest step (latency)", a.get("tp"),
                                    clean(a.get("policy")), fig, vs))
    return "\n".join(lines)


def block_at(pl, gemms, tp, policy, reps):
    """The block predicted at TP degree tp on the representative groups reps."""
    total, flags = 0.0, set()
    for (m, n, k, split, sp) in gemms:
        p = pl.predict(m, n, k, split, policy, tp, reps, sp)
        if p is None:
            return None
        total += p["step_us"]
        flags |= set(p["extrapolates"])
    return {"step_us": total, "extrapolates": flags}


def dp_allreduce(pl, gemms, tp, pp, dp, layers):
    """The DP gradient all-reduce of one stage's weights (its layers' N K / tp elements) over
    dp ranks tp x pp apart (one per replica), on the all-reduce fit of that kind of link, or
    the other kind's (flagged "link"). None without an all-reduce fit."""
    if dp == 1:
        return {"us": 0.0, "bytes": 0, "extrapolates": set()}
    per = tm.ELEMENT_BYTES.get(pl.dtype, 4)
    nbytes = sum(n * k for (_, n, k, _, _) in gemms) / tp * per * -(-layers // pp)
    group = [r * tp * pp for r in range(dp)]
    kind = tm.kind_of([pl.hosts[w] for w in group])
    other = "intra-node" if kind == "inter-node" else "inter-node"
    flags = set()
    key = ("all-reduce", kind)
    if key not in pl.models.comm.fit:
        key, flags = ("all-reduce", other), {"link"}
        if key not in pl.models.comm.fit:
            return None
    if pl.models.comm.extrapolates(key, dp, nbytes):
        flags.add("comm")
    return {"us": pl.models.comm.time(key, dp, nbytes), "bytes": nbytes, "extrapolates": flags}


def layouts(world, tps, pps, dps):
    for tp in tps:
        for pp in pps:
            if world % (tp * pp):
                continue
            dp = world // (tp * pp)
            if not dps or dp in dps:
                yield tp, pp, dp


def world_plan(pl, layout_of, gemms, world, tps, o):
    """Every TP x PP x DP layout of the world, predicted and ranked by tokens/s per rank
    (layout_of(tp): the representative groups of the packed placement)."""
    pps = o.pp or [1]
    micro, layers, bwd = o.microbatches or 8, o.layers or 32, o.backward
    if not 0.0 <= bwd <= 100.0:  # NaN and inf too: inf made every layout "0 tokens/s"
        raise BadInput("--backward %s: expected a factor from 0 to 100" % o.backward)
    rows, blocks = [], {}
    lays = list(layouts(world, tps, pps, o.dp))
    if not lays:  # an empty table said nothing
        raise BadInput("no TP x PP x DP layout of %d ranks: TP %s x PP %s must divide them%s"
                       % (world, ",".join(map(str, tps)), ",".join(map(str, pps)),
                          " with DP %s" % ",".join(map(str, o.dp)) if o.dp else ""))
    for tp, pp, dp in lays:
        if tp not in blocks:
            reps = layout_of(tp)
            cands = [block_at(pl, gemms, tp, pol, reps) for pol in
                     (("even", "weighted") if tp > 1 else ("even",))]
            cands = [(c, pol) for c, pol in zip(cands, ("even", "weighted")) if c]
            best = min(cands, key=lambda cp: cp[0]["step_us"]) if cands else None
            if best and best[1] == "weighted" and cands[0][1] == "even" and \
                    best[0]["step_us"] * 1.05 > cands[0][0]["step_us"]:
                best = cands[0]  # weighted only where it is predicted to buy 5 %
            blocks[tp] = best
        b = blocks[tp]
        dpc = dp_allreduce(pl, gemms, tp, pp, dp, layers) if b else None
        row = {"tp": tp, "pp": pp, "dp": dp, "policy": b[1] if b else None,
               "block_us": b[0]["step_us"] if b else None, "prediction": None}
        if b and dpc:
            stage = -(-layers // pp) * b[0]["step_us"] * (1.0 + bwd)
            pipe = (micro + pp - 1) * stage
            step = pipe + dpc["us"]
            flags = sorted(b[0]["extrapolates"] | dpc["extrapolates"] |
                           ({"ranks"} if world > pl.measured else set()))
            row["prediction"] = {"stage_us": stage, "pipeline_us": pipe,
                                 "bubble": (pp - 1) / (micro + pp - 1), "dp_us": dpc["us"],
                                 "dp_bytes": dpc["bytes"], "step_us": step,
                                 "tokens_per_s_rank": dp * micro * gemms[0][0] / (step * 1e-6)
                                 / world, "extrapolates": flags}
        rows.append(row)
    rows.sort(key=lambda r: -(r["prediction"] or {}).get("tokens_per_s_rank", -1.0))
    per = o.ranks_per_node or max(sum(1 for h in pl.hosts if h == pl.hosts[0]), 1)
    return {"world": world, "per_node": per, "microbatches": micro, "layers": layers,
            "backward": bwd,
            "tokens": gemms[0][0], "rows": rows}


def text(res, val, plan, per_node):
    lines = []
    if val:
        lines.append("# blocks, leave-one-out (each block's GEMMs predicted from models fitted "
                     "without any of them, summed)")
        lines.append("#  block  tp policy   name              measured   predicted   error")
        for v in val:
            lines.append("  %6d %3d %-8s %-14s %11s %11s%s %7s" % (
                v["block"], v["tp"], v["policy"], clean(v["name"], 14),
                tr.us_text(v["measured_us"]), tr.us_text(v["predicted_us"]),
                "*" if v["extrapolates"] else " ",
                "%+.1f%%" % (100 * v["error"]) if v["error"] is not None else "-"))
    if not plan:
        return "\n".join(lines)
    name = res.blocks[0].get("name", "block") if getattr(res, "blocks", None) else "block"
    lines.append("# world plan for block %s on %d ranks%s: %d blocks, %d microbatches of %d "
                 "tokens; stage = (blocks / pp) x block x (1 + %g backward, a model); "
                 "pipeline = (microbatches + pp - 1) stages, 1F1B (the bubble, (pp - 1) / "
                 "(microbatches + pp - 1), is a model, not a measurement); then the DP "
                 "gradient all-reduce; pipeline activations not modelled; * extrapolated "
                 "(ranks, FLOPs, group size or bytes beyond the measured; link: the other "
                 "kind of link's fit)" % (
                     clean(name), plan["world"],
                     " (%d per node)" % per_node if per_node else "", plan["layers"],
                     plan["microbatches"], plan["tokens"], plan["backward"]))
    lines.append("#  tp  pp   dp policy       block      stage  bubble    DP all-reduce"
                 "       step  tokens/s/rank (a training step: every block, forward and "
                 "backward)")
    across = 0
    for r in plan["rows"]:
        p = r["prediction"]
        if not p:
            across += r["tp"] > plan["per_node"]
            lines.append("  %3d %3d %4d %-8s %10s  no model%s" % (
                r["tp"], r["pp"], r["dp"], r["policy"] or "-", tr.us_text(r["block_us"]),
                " (across nodes)" if r["tp"] > plan["per_node"] else ""))
            continue
        lines.append("  %3d %3d %4d %-8s %10s %10s %6.1f%% %16s %10s %13.0f%s" % (
            r["tp"], r["pp"], r["dp"], r["policy"], tr.us_text(r["block_us"]),
            tr.us_text(p["stage_us"]), 100 * p["bubble"],
            "%s (%s)" % (tr.us_text(p["dp_us"]), tr.size_label(p["dp_bytes"]))
            if p["dp_bytes"] else "-", tr.us_text(p["step_us"]), p["tokens_per_s_rank"],
            "*" if p["extrapolates"] else ""))
    if across:  # said once, below the table, not on every row (the rows fit 120 columns)
        lines.append("# no model (across nodes): TP groups larger than a node of %d ranks cross "
                     "nodes, and the run measured no collective across nodes; measure one "
                     "there (e.g. a --comm-only run) and pool it" % plan["per_node"])
    best = [r for r in plan["rows"] if r["prediction"]]
    if best:
        b = best[0]
        lines.append("# recommend for block %s on %d ranks: TP %d x PP %d x DP %d (%s), %.0f "
                     "tokens/s per rank%s" % (
                         clean(name), plan["world"], b["tp"], b["pp"], b["dp"], b["policy"],
                         b["prediction"]["tokens_per_s_rank"],
                         " *" if b["prediction"]["extrapolates"] else ""))
        lines.append(world_sureness(best, val))
    return "\n".join(lines)


def world_sureness(best, val):
    """How sure the world plan's pick is against its runner-up: sure only when its margin
    exceeds the blocks' largest leave-one-out |error| on both ((1 + err)^2), the only check
    the block model has; "not enough data" without a validated block or a runner-up."""
    errs = [abs(v["error"]) for v in val or [] if v["error"] is not None]
    if len(best) < 2:
        return "#     not enough data: no other layout to compare with"
    a, b = best[0], best[1]
    x = a["prediction"]["tokens_per_s_rank"] / b["prediction"]["tokens_per_s_rank"]
    head = "#     %.2fx the next, TP %d x PP %d x DP %d" % (x, b["tp"], b["pp"], b["dp"])
    if not errs:
        return head + ": not enough data (no block validated leave-one-out to size the " \
                      "models' error)"
    err = max(errs)
    if x > (1.0 + err) ** 2:
        return head + ": sure by the models (beyond the blocks' largest leave-one-out " \
                      "error, %.1f %%, on both)" % (100 * err)
    return head + ": not sure, within the blocks' largest leave-one-out error (%.1f %%) on " \
                  "either: either will do, or measure both" % (100 * err)


def block_rows(res, rows):
    """--plan-out of a --block run: for every GEMM of the block (its own split) and every
    planned TP degree above 1, the even and the weighted row: the block's shards per layer."""
    gemms = block_shapes(res)
    keys = set(gemms)
    out = [r for r in rows if r["prediction"] and r["tp"] > 1 and part_key(r) in keys and
           r["placement"] == "packed"]
    return [{"latency": r} for r in out]

