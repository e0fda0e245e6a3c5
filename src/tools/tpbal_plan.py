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
(throughput), each with the rest P/t left to data or pipeline parallelism (TP x rest = P),
and how sure it is against the next TP degree: the run's own interval where the run measured
and compared both, else sure only when the margin exceeds the models' p90 error on both. A
--block run's GEMMs are listed as the block's parts, each at the split the block gave it; at
the measured world the plan ends with the run's own block answer.
"""
import array
import collections
import itertools
import math
import os
import sys

import tpbal_results as tr
import tpbal_schema as ts
import tpbal_repeat as trp  # after tpbal_results: a built tool sets its path there
import tpbal_text as tt
import tpbal_model as tm
import tpbal_shardplan as tsp
import tpbal_world as tw
from tpbal_recommend import (TOLERANCE, measured_steps, measured_verdicts,  # noqa: F401
                             recommend, row_key, run_uses, sureness_text)
from tpbal_results import BadInput, clean

EPILOG = "exit status: 0 written, 2 bad input (unreadable or not a tpbal result, no config " \
         "to model, a bad option)."
PLAN_SCHEMA = tsp.PLAN_SCHEMA
DTYPE_ALIGN = tsp.DTYPE_ALIGN


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
        if min(m, n, k) < 1 or max(m, n, k) > 2 ** 31 - 1:  # tpbal's own bound
            raise BadInput("'%s': dimensions must be from 1 to 2147483647" % clean(part, 60))
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
    p.add_argument("--wide", action="store_true",
                   help="keep long lines whole when piped (by default every line of the text "
                        "fits 120 columns, a terminal's width in a terminal)")
    p.add_argument("--plan-out", metavar="FILE",
                   help="write the shard plan (schema %s) of the recommended config of each "
                        "shape (of a --block run: the even and weighted shards of every GEMM "
                        "of the block at every planned TP degree)" % PLAN_SCHEMA)
    tw.add_args(p, int_list, positive)
    return p.parse_args(argv)


class PlannedHosts:
    """The hosts of a planned world, nodes of `per` consecutive ranks ("node-N"), named
    when asked for: a world of 2^20 ranks needs no list of names."""

    def __init__(self, world, per):
        self.world, self.per = world, per

    def __len__(self):
        return self.world

    def __getitem__(self, w):
        if not 0 <= w < self.world:
            raise IndexError(w)
        return "node-%d" % (w // self.per)

    def node_ids(self):
        nodes = -(-self.world // self.per)
        return list(itertools.chain.from_iterable(
            itertools.repeat(j, self.per) for j in range(nodes)))[:self.world]

    def spread(self):
        """Node by node, round-robin: the i-th rank of every node, for i = 0, 1, ..."""
        return list(itertools.chain.from_iterable(range(i, self.world, self.per)
                                                  for i in range(self.per)))


def world_layout(res, world, per_node):
    """Host per rank of the planned world: the measured ranks' hosts, then nodes of
    per_node ranks; and the measured rank whose models each rank borrows."""
    hosts = tm.hosts_of(res.run)
    measured = len(hosts)
    per = per_node or max(collections.Counter(hosts).values())
    if world <= measured and not per_node:
        out = list(hosts[:world])  # the measured ranks where they ran
    else:  # a planned world: nodes of `per` consecutive ranks
        out = PlannedHosts(world, per)
    return out, [w % measured for w in range(world)], per


def node_ids(hosts):
    """A number per rank naming its node (equal numbers, equal hosts)."""
    if isinstance(hosts, PlannedHosts):
        return hosts.node_ids()
    index = {}
    return [index.setdefault(h, len(index)) for h in hosts]


def placement_ranks(hosts, placement):
    """World ranks in position order: packed keeps consecutive ranks together, spread deals
    them over the nodes round-robin (in the order the nodes first appear)."""
    if placement == "packed":
        return list(range(len(hosts)))
    if isinstance(hosts, PlannedHosts):
        return hosts.spread()
    ranks = {}
    for w, h in enumerate(hosts):
        ranks.setdefault(h, []).append(w)
    order, i, lists = [], 0, list(ranks.values())
    while lists:
        order += [r[i] for r in lists]
        i += 1
        lists = [r for r in lists if i < len(r)]
    return order


class Layout:
    """A placement's positions: the world rank at each, the measured rank whose models it
    borrows and its node (as a number)."""

    def __init__(self, hosts, borrow, placement):
        nodes = node_ids(hosts)
        self.order = placement_ranks(hosts, placement)
        self.models = list(map(borrow.__getitem__, self.order))
        at = list(map(nodes.__getitem__, self.order))
        # per position: its model, and whether its node differs from the position before
        code = [2 * m + (a != b) for m, a, b in zip(self.models, at, [None] + at)]
        self.raw = array.array("Q", code).tobytes()

    def distinct_groups(self, tp):
        """The TP groups (tp consecutive positions each) that predict differently, one
        representative each: two groups are alike when their positions borrow the same
        measured ranks' models and their nodes change at the same positions (a prediction
        reads the models and whether a group spans nodes), so a world of 2^20 ranks has as
        few distinct groups as its measured ranks and node size allow.
        Returns the representatives' ranks, concatenated, and the number of groups."""
        ngroups = len(self.order) // tp
        if tp == 1:
            keys = self.models
        else:  # a group's key: its first model and the codes of the positions after it,
            # sliced in C (a world of 2^20 ranks takes ~0.1 s a degree)
            w = 8 * tp
            keys = list(zip(self.models[::tp][:ngroups],
                            map(self.raw.__getitem__, map(slice, range(8, len(self.raw), w),
                                                          range(w, w * ngroups + 1, w)))))
        first = dict(zip(reversed(keys), range(ngroups - 1, -1, -1)))
        reps = []
        for g in sorted(first.values()):
            reps += self.order[g * tp:(g + 1) * tp]
        return reps, ngroups


class Planner:
    def __init__(self, res, hosts, borrow):
        self.res, self.hosts, self.borrow = res, hosts, borrow
        self.dtype = res.run.get("dtype") or "fp32"
        # shards on the run's granularity and the dtype's GEMM widths (tpb_dtype_align)
        self.g = math.lcm(tm.granularity_of(res.run), DTYPE_ALIGN.get(self.dtype, 1))
        self.measured = len(tm.hosts_of(res.run))
        self.models = tm.Models(res.configs, tm.hosts_of(res.run), self.g)

    def predict(self, m, n, k, split, policy, tp, ranks, sp="off"):
        """ranks beyond the measured world borrow a measured rank's compute model"""
        p = self.models.predict(m, n, k, split, policy, tp, ranks, self.dtype, hosts=self.hosts,
                                borrow=self.borrow, sp=sp)
        if p is None:
            return None
        if len(self.hosts) > self.measured:  # some groups are made of planned ranks
            p["extrapolates"] = sorted(set(p["extrapolates"]) | {"ranks"})
        return p


def predictions(pl, world, tps, shape_list, placements):
    """Every (shape, TP degree, placement, split, sequence parallelism, policy): sequence
    parallelism on where the run measured it (its collectives need their own fits). A
    prediction is the worst of the placement's distinct groups; TP degrees that cannot split
    the layer are listed with their reason and not predicted."""
    sps = ["off"] + (["on"] if any(c.get("sequence_parallel") == "on"
                                   for c in pl.res.configs) else [])
    rows, groups = [], {}
    layouts = {p: Layout(pl.hosts, pl.borrow, p) for p in placements}
    prog = tr.Progress("predicting", len(shape_list), "shapes")
    for done, (m, n, k) in enumerate(shape_list):
        prog.step(done)
        for tp in tps:
            if world % tp:
                continue
            for place in placements:
                for split in ("row", "col"):
                    why = infeasible(m, n, k, split, tp, pl.g, pl.dtype)
                    if not why and (tp, place) not in groups:
                        groups[(tp, place)] = layouts[place].distinct_groups(tp)
                    reps, ngroups = groups.get((tp, place), ([], world // tp))
                    for sp in sps if tp > 1 else ["off"]:
                        for policy in (("even", "weighted") if tp > 1 else ("even",)):
                            p = None if why else pl.predict(m, n, k, split, policy, tp, reps, sp)
                            rows.append({"m": m, "n": n, "k": k, "tp": tp, "placement": place,
                                         "split": split, "sequence_parallel": sp,
                                         "policy": policy, "groups": ngroups,
                                         "distinct_groups": len(reps) // tp,
                                         "prediction": p, "skipped": why})
    return rows


def infeasible(m, n, k, split, tp, g, dtype="fp32"):
    """Why a TP degree cannot split the layer as tpbal would ("" if it can): a shard of at
    least g (the granularity) for every rank of the group, as tpbal's partitions need; and
    N and K in multiples of the dtype's GEMM width, as tpbal asks of a shape (fp8: 16)."""
    dim, align = tm.split_dim(n, k, split), DTYPE_ALIGN.get(dtype, 1)
    if n % align or k % align:
        return "N and K must be multiples of %d with %s" % (align, dtype)
    if dim // g < tp:
        return "tp %d: %s = %d cannot be split into %d shards of at least %d" % (
            tp, "K" if split == "row" else "N", dim, tp, g)
    return ""


def basis_text(r):
    """"11.6 ms measured" or "12.0 ms predicted": a pick's step and where it comes from."""
    return "%s %s" % (tr.us_text(r["step_us"]), r["basis"])


def star(p):
    return "*" if p and p["extrapolates"] else " "


def split_label(r):
    """"row", "col", or with sequence parallelism "row+sp", "col+sp" (as tpbal prints it)."""
    return ts.split_label(r)


def text(res, val, summ, rows, recs, world):
    summ_run = res.summary if isinstance(getattr(res, "summary", None), dict) else {}
    passes = summ_run.get("passes")  # a --repeat run's: its passes pooled
    lines = ["tpbal-plan: %s, %d configs measured on %d ranks%s; planning for %d ranks" % (
        clean(os.path.dirname(res.dir) if passes else res.dir), len(res.configs),
        len(tm.hosts_of(res.run)),
        " over %d --repeat passes" % passes
        if passes else " in %d runs" % res.runs if getattr(res, "runs", 1) > 1 else "",
        world)]
    method = val[0]["method"] if val else "leave-one-out"
    lines.append("# validation, %s (each config predicted from models fitted without it%s)"
                 % (method, "" if method == "leave-one-out" else
                    ", and without the others of its fold: %d configs, past %d one fit a "
                    "config would take minutes" % (len(val), tm.LOO_MAX)))
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
            tr.us_text(p["step_us"]) if p else "infeasible" if r.get("skipped") else "no model",
            star(p),
            tr.us_text(p["comp_us"]) if p else "-", tr.us_text(p["comm_us"]) if p else "-",
            tr.us_text(p["idle_us"]) if p else "-"))
    for a in tr.records(summ_run.get("answer")):  # what the run itself measured, as it said
        for p in tr.records(a.get("policies")) if a.get("kind") == "tp" else []:
            sp, lo, hi = (tr.num(p.get(k)) for k in ("speedup", "speedup_lo", "speedup_hi"))
            if sp is None:
                continue
            lines.append("# measured by the run: %sx%sx%s tp %s %s %s %.2fx over even%s: %s" % (
                a.get("m"), a.get("n"), a.get("k"), a.get("tp"), clean(p.get("split")),
                clean(p.get("policy")), sp,
                " [%.2f, %.2f]" % (lo, hi) if lo is not None and hi is not None else "",
                clean(p.get("verdict") or "-")))
    for rc in recs:  # a --block run's GEMMs are its parts: the block's answer is what to run
        a, b = rc["latency"], rc["throughput"]
        lines.append("# %s %dx%dx%d%s on %d ranks: shortest step (latency) TP %d (%s %s "
                     "%s, %s%s; the other %d-way for DP/PP); highest layer rate (throughput) "
                     "TP %d (%s %s, %s a step x %d group%s)" % (
                         "part" if rc.get("part") else "recommend for", rc["m"], rc["n"],
                         rc["k"], " %s alone" % clean(rc["part"]) if rc.get("part") else "",
                         world, a["tp"], split_label(a), a["policy"],
                         a["placement"], basis_text(a), star(a["prediction"]).strip()
                         if a["basis"] == "predicted" else "", world // a["tp"], b["tp"],
                         split_label(b), b["policy"], basis_text(b), world // b["tp"],
                         "" if world // b["tp"] == 1 else "s"))
        for q, what in (("latency", "shortest step"), ("throughput", "highest layer rate")):
            if rc.get(q + "_sure"):
                lines.append(sureness_text(what, rc[q + "_sure"]))
    return "\n".join(lines)


def load_runs(dirs):
    """The runs of dirs, a --repeat run's passes each a run; and with one --repeat run alone,
    its answer over the passes (repeat.json) in a summary's shape, the run's own answer."""
    runs, rep = [], None
    for d in dirs:
        if tr.is_repeat(d):
            rep, passes = trp.repeat_doc(d)
            runs += [tm.modelled(tr.load(os.path.join(d, p))) for p in passes]
        else:
            runs.append(tm.modelled(tr.load(d)))
    if len({r.run.get("world_size") for r in runs}) > 1:
        raise BadInput("the runs have different world sizes: pool runs of one sweep")
    res = runs[0] if len(runs) == 1 else tm.Pooled(runs)
    if rep and len(dirs) == 1:
        res.summary = trp.repeat_summary(rep)
    return res


def recommend_at(res, o, rows, world, parts, summ):
    """The recommendations, and where the planned world is the measured one and --tp is not
    given, among the TP degrees the run measured (its answer's): a TP degree it did not
    measure that the models predict better is said apart, as what to measure next."""
    rows = [r for r in rows if not parts or tw.part_key(r) in parts]
    run_tps = {c["tp"] for c in res.configs if c.get("comm_only") != "yes"}
    at_run = world == len(tm.hosts_of(res.run)) and not o.tp

    def rec(rs):
        out = recommend(rs, world, measured_verdicts(res, world), measured_steps(res, world),
                        run_uses(res, world), summ["p90"] if summ else None)
        for rc in out:
            rc["part"] = parts.get(tw.part_key(rc["latency"])) if parts else None
        return out
    recs = rec([r for r in rows if r["tp"] in run_tps] if at_run else rows)
    unmeasured = []
    for rc in rec(rows) if at_run else []:
        for q in ("latency", "throughput"):
            if rc[q]["tp"] not in run_tps:
                unmeasured.append(dict(rc[q], question=q))
    return recs, unmeasured


def unmeasured_text(unmeasured, world):
    """"# not measured: ..." per pick the models make at a TP degree the run did not run."""
    return ["# not measured: %dx%dx%d at TP %d (%s %s) is predicted the best for the %s, %s a step%s; "
            "the answer above is among the TP degrees the run measured: measure it (tpbal "
            "--tp %d) before using it" % (
                u["m"], u["n"], u["k"], u["tp"], split_label(u), u["policy"],
                "shortest step" if u["question"] == "latency"
                else "highest layer rate", tr.us_text(u["step_us"]),
                " x %d groups" % (world // u["tp"]) if u["question"] == "throughput" else "",
                u["tp"]) for u in unmeasured]


def main(argv):
    o = parse_args(argv)
    res = load_runs(o.dirs)
    if not [c for c in res.configs if c.get("comm_only") != "yes"]:
        raise BadInput("%s has no GEMM config: nothing to model" % clean(res.jsonl))
    tm.check_configs(res.configs, len(tm.hosts_of(res.run)))
    world = o.world or len(tm.hosts_of(res.run))
    hosts, borrow, per = world_layout(res, world, o.ranks_per_node)
    pl = Planner(res, hosts, borrow)
    bad = [t for t in (o.tp or []) if world % t]
    if bad:  # an empty table said nothing
        raise BadInput("--tp %d does not divide the world of %d ranks: give TP degrees that do "
                       "(or --world)" % (bad[0], world))
    tps = o.tp or [t for t in (1 << i for i in range(21)) if t <= world and world % t == 0]
    shape_list = o.shape or sorted({(c["m"], c["n"], c["k"]) for c in res.configs
                                    if c.get("comm_only") != "yes"})
    places = ("packed", "spread") if o.placement == "both" else (o.placement,)
    val = tm.validate(res)
    summ = tm.error_summary(val)
    rows = predictions(pl, world, tps, shape_list, places)
    parts = tw.block_parts(res)
    recs, unmeasured = recommend_at(res, o, rows, world, parts, summ)
    bval = tw.validate_blocks(res, tm.hosts_of(res.run), pl.g)
    layout = Layout(pl.hosts, pl.borrow, "packed")
    wplan = tw.world_plan(pl, lambda t: layout.distinct_groups(t)[0], tw.block_shapes(res),
                          world, tps, o) if tw.wants_world(o, res) else None
    if o.plan_out:
        planned = tw.block_rows(res, rows) if getattr(res, "blocks", None) else recs
        if not planned:
            raise BadInput("no config could be predicted: no shard plan to write")
        doc = tsp.shard_plan(res, pl, planned, placement_ranks)
        for c in doc["configs"]:  # what tpbal would refuse is never written
            why = tsp.refusal(c)
            if why:
                raise BadInput("the plan of %dx%dx%d %s %s tp %d would be refused by tpbal (%s): "
                               "not written" % (c["m"], c["n"], c["k"], c["split"], c["policy"],
                                                c["tp"], why))
        tr.write_atomic(o.plan_out, tr.json_dumps(doc, indent=1), inputs=list(o.dirs))
    if o.format == "json":
        print(tr.json_dumps({"schema": PLAN_SCHEMA, "validation": {"configs": val,
                                                                    "summary": summ},
                             "predictions": rows, "recommend": recs,
                             "blocks": bval, "world_plan": wplan, "not_measured": unmeasured,
                             "block_answer": tw.run_block_uses(res, world)}))
    else:
        lines = text(res, val, summ, rows, recs, world).split("\n") + \
            unmeasured_text(unmeasured, world)
        measured = len(tm.hosts_of(res.run))
        if world > measured and not o.ranks_per_node:  # what the planned world's nodes are
            lines.insert(1, "# assumed: nodes of %d ranks, as measured (--ranks-per-node N plans "
                            "nodes of N); a TP group larger than a node crosses nodes, which "
                            "the run did not measure: no model for it" % per)
        tt.say("\n".join(lines), o.wide)
        if bval or wplan:
            tt.say(tw.text(res, bval, wplan, o.ranks_per_node), o.wide)
        if parts and not wplan and world == measured:  # the run's own block answer ends it
            tt.say(tw.run_block_answer(res, world), o.wide)
    return 0


if __name__ == "__main__":
    sys.exit(tr.run_main("tpbal-plan", main, sys.argv[1:]))
