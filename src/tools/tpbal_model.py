"""tpbal_model: models of a result directory, and the step they predict for any config.

Compute, per world rank: t = c0 + F / R, a GEMM's time against its FLOPs F (a fixed cost
c0 >= 0, which is why small shards run below peak, and a rate R), fitted by least squares
weighted by 1/t^2 (relative residuals) to every (FLOPs, median compute) the rank measured:
each config's shard, and its calibration GEMM (the speed at the even shard's FLOPs).

Communication, per collective and kind of group (inside one node, or across nodes): the
ring algorithms' cost in the group size t, so that an unmeasured degree can be predicted,
T = a (t - 1) L + a (t - 1) / t * V / B, with a = 2 for all-reduce (reduce-scatter, then
all-gather) and 1 for all-gather, V the whole result's bytes; B > 0 and L fitted the same
way to what the collective added to each measured step (exposed_comm: the step less the
slowest rank's compute; a comm-only config's whole step). L >= 0, but where a series sweeps
at least 4 sizes over at least 4x (a comm-only sweep) L is free: a shaped link lets its
burst pass at line rate, and the line through such a sweep crosses below the origin (a
predicted time is never below 0).

A config's step: per TP group, its slowest rank's predicted compute on the shard it would
get (even: as equal as the granularity allows; weighted: in proportion to the ranks'
modelled speeds at the even shard, largest remainder at the granularity) plus the group's
transfer; the config's step is its slowest group's. Idle is the rest: the slowest rank's
compute less the mean. Every figure says where it extrapolates: FLOPs, a group size or
message bytes outside what was measured, a kind of group never measured, ranks beyond the
measured world.
"""
import copy
import math
import statistics

import tpbal_results as tr
import tpbal_schema as ts
from tpbal_results import finite

ELEMENT_BYTES = {"fp64": 8, "fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2, "fp8": 2}
# a of T = a (t-1) L + a (t-1)/t V / B: nccl-tests' bus-bandwidth factor times t/(t-1)
# (run/coll_*.c: all-reduce 2(t-1)/t, all-gather and reduce-scatter (t-1)/t)
COLL_FACTOR = {"all-reduce": 2.0, "all-gather": 1.0, "reduce-scatter": 1.0}


def wls2(x1, x2, y, nonneg=True):
    """y ~ p x1 + q x2, least squares weighted by 1/y^2, then once more without the points
    more than 3x the median relative residual (and over 5 %) off: a config measured while
    its rank's core was shared would pull the fit. p >= 0 when nonneg (else refitted with
    p = 0). Returns (p, q) or None."""
    got = _wls2(x1, x2, y, nonneg)
    if got is None or len(y) < 4:
        return got
    res = [abs((got[0] * a + got[1] * b) / v - 1.0) for a, b, v in zip(x1, x2, y)]
    cut = max(0.05, 3.0 * statistics.median(res))
    keep = [i for i, r in enumerate(res) if r <= cut]
    if len(keep) == len(y) or len(keep) < 3:
        return got
    return _wls2([x1[i] for i in keep], [x2[i] for i in keep], [y[i] for i in keep],
                 nonneg) or got


def _wls2(x1, x2, y, nonneg):
    w = [1.0 / (v * v) for v in y]
    s11 = sum(a * a * c for a, c in zip(x1, w))
    s22 = sum(b * b * c for b, c in zip(x2, w))
    s12 = sum(a * b * c for a, b, c in zip(x1, x2, w))
    s1y = sum(a * v * c for a, v, c in zip(x1, y, w))
    s2y = sum(b * v * c for b, v, c in zip(x2, y, w))
    det = s11 * s22 - s12 * s12
    if det > 1e-12 * max(s11 * s22, 1e-300) and len(y) >= 2:
        p, q = (s1y * s22 - s2y * s12) / det, (s11 * s2y - s12 * s1y) / det
        if (p >= 0 or not nonneg) and q > 0:
            return p, q
    if s22 > 0 and s2y > 0:  # through the origin of x1
        return 0.0, s2y / s22
    return None


class ComputeModel:
    """t = c0 + F / R per world rank."""

    def __init__(self, points):
        """points: {world rank: [(flops, t_us), ...]}"""
        self.fit, self.range = {}, {}
        for w, pts in points.items():
            pts = [(f, t) for f, t in pts if finite(f) and finite(t) and f > 0 and t > 0]
            if not pts:
                continue
            got = wls2([1.0] * len(pts), [f for f, _ in pts], [t for _, t in pts])
            if got:
                self.fit[w] = got  # (c0 us, 1 / R in us per FLOP)
                self.range[w] = (min(f for f, _ in pts), max(f for f, _ in pts))

    def time(self, w, flops):
        c0, inv = self.fit[w]
        return c0 + flops * inv

    def extrapolates(self, w, flops):
        lo, hi = self.range[w]
        return flops < 0.8 * lo or flops > 1.25 * hi


SWEEP_SIZES, SWEEP_SPAN = 4, 4.0  # a series this wide fits L freely (CommModel)


class CommModel:
    """T = a (t-1) L + a (t-1)/t V / B per (collective, kind)."""

    def __init__(self, points):
        """points: {(collective, kind): [(t, bytes, T_us), ...]}"""
        self.fit, self.range = {}, {}
        for key, pts in points.items():
            a = COLL_FACTOR.get(key[0], 1.0)
            pts = [p for p in pts if p[0] >= 2 and finite(p[1]) and finite(p[2]) and p[2] > 0]
            if not pts:
                continue
            sizes = {v for _, v, _ in pts}
            sweep = len(sizes) >= SWEEP_SIZES and max(sizes) >= SWEEP_SPAN * min(sizes)
            got = wls2([a * (t - 1) for t, _, _ in pts],
                       [a * (t - 1) / t * v for t, v, _ in pts], [x for _, _, x in pts],
                       nonneg=not sweep)
            if got:
                self.fit[key] = got  # (L us, 1 / B in us per byte)
                self.range[key] = ({t for t, _, _ in pts}, min(v for _, v, _ in pts),
                                   max(v for _, v, _ in pts))

    def time(self, key, t, nbytes):
        if t < 2:
            return 0.0
        a = COLL_FACTOR.get(key[0], 1.0)
        lat, inv = self.fit[key]
        return max(0.0, a * (t - 1) * lat + a * (t - 1) / t * nbytes * inv)

    def extrapolates(self, key, t, nbytes):
        tps, lo, hi = self.range[key]
        return t not in tps or nbytes < 0.8 * lo or nbytes > 1.25 * hi


def layer_flops(m, n, k, split, shard):
    """A rank's GEMM FLOPs: 2 M N k_r (row) or 2 M K n_r (col)."""
    return 2.0 * m * (n if split == "row" else k) * shard


def split_dim(n, k, split):
    return k if split == "row" else n


def even_shards(dim, t, g):
    """As equal as the granularity allows (every shard a multiple of g, the rest last)."""
    units, rest = divmod(dim, g)
    base, extra = divmod(units, t)
    out = [(base + (1 if r < extra else 0)) * g for r in range(t)]
    out[-1] += rest
    return out


def weighted_shards(dim, speeds, g):
    """Shards in proportion to speeds, largest remainder at the granularity, each >= g: the
    C's tpb_partition_weighted step for step (speeds scaled by the largest; while the units
    are too many, one goes back from the shard most over its quota that has more than one;
    while too few, one goes to the shard most under its quota; ties to the first rank), so
    that the two never disagree (tests/python/test_golden.py)."""
    t, units = len(speeds), dim // g
    top = max(speeds)
    total = 0.0
    for s in speeds:
        total += s / top
    quota = [units * (s / top) / total for s in speeds]
    out = [max(1, int(math.floor(q))) for q in quota]
    assigned = sum(out)
    while assigned != units:
        sign = 1 if assigned < units else -1
        best, gap = None, -math.inf
        for r in range(t):
            if sign < 0 and out[r] <= 1:
                continue
            d = sign * (quota[r] - out[r])
            if d > gap:
                best, gap = r, d
        out[best] += sign
        assigned += sign
    out = [u * g for u in out]
    out[-1] += dim - units * g
    return out


def exposed_comm(c):
    """What the collective adds to a config's step: its median step less its slowest rank's
    median compute (a comm-only config: its --comm-gap, ~0 back-to-back). More than the
    transfer after the last arrival (xfer_us) by the skew of the ranks' starts that a slow
    link leaves behind, which the step pays too. None where unknown."""
    step = c["step_us"].get("median")
    comp = [x for x in c.get("compute_us") or [] if finite(x)]
    if c.get("comm_only") == "yes" and not comp:
        comp = [0.0]
    if not finite(step) or not comp or step - max(comp) <= 0:
        return None
    return step - max(comp)


def kind_of(group_hosts):
    return "inter-node" if len(set(group_hosts)) > 1 else "intra-node"


class Models:
    """Compute and comm models of a set of measured configs (a result directory's)."""

    def __init__(self, cfgs, hosts, granularity=1, leave_out=None):
        """cfgs: config records; hosts: host per world rank; leave_out: config ids whose
        measurements are not used (leave-one-out)."""
        self.hosts, self.g = hosts, granularity
        cpts, mpts, self.bytes_of = {}, {}, {}
        for c in cfgs:
            if leave_out is not None and c["id"] in leave_out:
                continue
            if c.get("comm_only") != "yes":
                self._compute_points(c, cpts)
            t = exposed_comm(c)
            if c["tp"] >= 2 and t is not None and finite(c.get("comm_bytes")):
                ranks = c.get("world_ranks") or list(range(c["world_size"]))
                on = c.get("run_hosts") or hosts
                key = (c.get("collective"), kind_of([on[w] for w in ranks[:c["tp"]]]))
                mpts.setdefault(key, []).append((c["tp"], c["comm_bytes"], t))
            if c.get("comm_only") != "yes" and finite(c.get("comm_bytes")):
                self.bytes_of[(c["m"], c["n"], c["k"], c["dtype"], c["split"],
                               c.get("sequence_parallel", "off"))] = c["comm_bytes"]
        self.compute = ComputeModel(cpts)
        self.comm = CommModel(mpts)

    def _compute_points(self, c, pts):
        ranks = c.get("world_ranks") or list(range(c["world_size"]))
        for p, w in enumerate(ranks):
            shard = (c.get("shards") or [None] * len(ranks))[p]
            t = (c.get("compute_us") or [None] * len(ranks))[p]
            if c["tp"] == 1:
                shard = split_dim(c["n"], c["k"], c["split"])
            if finite(shard) and finite(t):
                pts.setdefault(w, []).append((layer_flops(c["m"], c["n"], c["k"], c["split"],
                                                          shard), t))
        if c.get("speed_source") == "calibration" and c["tp"] >= 2:
            even = even_shards(split_dim(c["n"], c["k"], c["split"]), c["tp"], self.g)
            for p, w in enumerate(ranks):
                s = (c.get("speeds") or [None] * len(ranks))[p]
                if finite(s) and s > 0:
                    f = layer_flops(c["m"], c["n"], c["k"], c["split"], even[p % c["tp"]])
                    pts.setdefault(w, []).append((f, f / (s * 1e3)))  # GFLOP/s -> FLOP/us

    def comm_bytes(self, m, n, k, dtype, split, sp="off"):
        """nccl-tests' S of the layer's collective: the M x N output (row, col; row+sp's
        reduce-scatter input), or the whole X (col+sp's all-gather), as measured."""
        got = self.bytes_of.get((m, n, k, dtype, split, sp))
        if got is not None:
            return got
        if split == "col" and sp == "on":
            return m * k * ELEMENT_BYTES.get(dtype, 4)
        return m * n * ELEMENT_BYTES.get(dtype, 4)

    def predict(self, m, n, k, split, policy, tp, ranks, dtype, collective=None, hosts=None,
                borrow=None, shards=None, sp="off"):
        """The predicted step of a config on world ranks `ranks` (positions in order), with
        its terms and what it extrapolates; None when a rank or the collective has no model,
        or the split dimension has fewer granules than tp (a shard would be empty).
        sp: sequence parallelism ("on": row reduce-scatters, col all-gathers X).
        hosts: host per world rank (default: the measured ones); borrow: the measured rank
        whose compute model each rank uses (default: its own); shards: the shard of each
        position (default: the policy's, from the modelled speeds)."""
        hosts = hosts or self.hosts
        model = (lambda w: borrow[w]) if borrow else (lambda w: w)
        if any(model(w) not in self.compute.fit for w in ranks):
            return None
        dim, flags = split_dim(n, k, split), set()
        if tp > 1 and dim < tp * self.g:  # a rank's shard would be empty: tpbal skips it
            return None
        coll = collective or tr.collective_of(split, sequence_parallel=sp)
        nbytes = self.comm_bytes(m, n, k, dtype, split, sp)
        worst = None
        for g in range(len(ranks) // tp):
            grp = ranks[g * tp:(g + 1) * tp]
            mgrp = [model(w) for w in grp]
            if shards is not None and tp > 1:
                gsh = shards[g * tp:(g + 1) * tp]
            else:
                gsh = self.shards(dim, mgrp, policy, m, n, k, split) if tp > 1 else [dim]
            comp = [self.compute.time(w, layer_flops(m, n, k, split, s))
                    for w, s in zip(mgrp, gsh)]
            for w, s in zip(mgrp, gsh):
                if self.compute.extrapolates(w, layer_flops(m, n, k, split, s)):
                    flags.add("flops")
            xfer = 0.0
            if tp > 1:
                key = (coll, kind_of([hosts[w] for w in grp]))
                if key not in self.comm.fit:
                    return None
                xfer = self.comm.time(key, tp, nbytes)
                if self.comm.extrapolates(key, tp, nbytes):
                    flags.add("comm")
            step = max(comp) + xfer
            if worst is None or step > worst["step_us"]:
                worst = {"step_us": step, "comp_us": sum(comp) / len(comp), "comm_us": xfer,
                         "idle_us": max(comp) - sum(comp) / len(comp), "shards": gsh,
                         "group": grp}
        worst["extrapolates"] = sorted(flags)
        return worst

    def speeds(self, dim, grp, m, n, k, split):
        """The modelled speed (FLOP/us) of every rank of grp at its even shard."""
        even = even_shards(dim, len(grp), self.g)
        flops = [layer_flops(m, n, k, split, s) for s in even]
        return [f / self.compute.time(w, f) for w, f in zip(grp, flops)]

    def shards(self, dim, grp, policy, m, n, k, split):
        if policy == "even":
            return even_shards(dim, len(grp), self.g)
        return weighted_shards(dim, self.speeds(dim, grp, m, n, k, split), self.g)


def hosts_of(run):
    """The host of every world rank, from the run record (one line if it cannot say)."""
    ranks = tr.records(run.get("ranks"))
    world = run.get("world_size")
    if not isinstance(world, int) or isinstance(world, bool) or not 1 <= world <= 1 << 20:
        raise tr.BadInput("the run record's world_size is not a number of ranks: is it a "
                          "tpbal result?")
    if ranks and len(ranks) != world:
        raise tr.BadInput("the run record names %d ranks for a world of %d" % (len(ranks), world))
    return [tr.clean(r.get("host", "?"), 64) for r in ranks] or ["?"] * world


def check_configs(cfgs, world):
    """What the models index by: every GEMM config's ranks, shards and times, one per world
    rank (one line naming the config otherwise)."""
    for c in cfgs:
        ranks = c.get("world_ranks") or list(range(world))
        ok = c.get("world_size", world) == world and isinstance(ranks, list) and \
            sorted(ranks) == list(range(world)) and c["tp"] <= world and world % c["tp"] == 0
        for f in ("shards", "compute_us", "speeds"):
            v = c.get(f)
            ok = ok and (v is None or (isinstance(v, list) and len(v) == world))
        if not ok:
            raise tr.BadInput("config %s: its ranks, shards or times do not match a world of %d "
                              "ranks" % (c.get("id"), world))


class Pooled:
    """Several runs of one sweep as one result: every config's records across the runs (its
    measurements all count in the fits) and the median over the runs of its median step
    (one disturbed run moves the reference less). The first run's metadata stands for all,
    but each config keeps its own run's hosts (run_hosts): a packed run on one node pooled with
    a comm-only sweep across two gives the models an inter-node link."""

    def __init__(self, results):
        self.dir = results[0].dir
        self.run = results[0].run
        self.jsonl = results[0].jsonl
        self.runs = len(results)
        self.configs, self.reference, self.blocks = [], {}, []
        by_key = {}
        for i, res in enumerate(results):
            new_id = {}
            for c in res.configs:
                new_id[c["id"]] = len(self.configs)
                c = dict(c, id=len(self.configs), run=i, run_hosts=hosts_of(res.run))
                self.configs.append(c)
                by_key.setdefault(tr.config_key(c), []).append(c)
            for b in getattr(res, "blocks", []):  # --block: its configs by their pooled ids
                if all(c in new_id for c in b["configs"]):
                    self.blocks.append(dict(b, configs=[new_id[c] for c in b["configs"]]))
        for key, cs in by_key.items():
            ref = statistics.median(c["step_us"]["median"] for c in cs
                                    if finite(c["step_us"].get("median")))
            for c in cs:
                self.reference[c["id"]] = (key, ref, [x["id"] for x in cs])


def modelled(res):
    """res as the models read it: a run with --cost-profile is refused (they model dense
    GEMMs, work in proportion to the shard), and chunked configs (--overlap chunked), whose
    compute and transfer are interleaved, are left out. A shallow copy; res is not changed."""
    prof = res.run.get("cost_profile")
    if prof:
        raise tr.BadInput("%s ran with --cost-profile %s: tpbal-plan models dense GEMMs (work "
                          "in proportion to the shard); plan from a run without it"
                          % (tr.clean(res.dir), tr.clean(str(prof.get("source")))))
    out = copy.copy(res)
    out.configs = [c for c in res.configs if not c.get("chunks")]
    return out


def granularity_of(run):
    g = run.get("granularity") or 1
    if not isinstance(g, int) or isinstance(g, bool) or not 1 <= g <= 1 << 30:
        raise tr.BadInput("the run record's granularity is not a shard unit")
    return g


LOO_MAX = 200  # configs validated one at a time; past that FOLDS folds (one fit a fold)
FOLDS = 10


def validation_method(n):
    """How validate checks n configs: leave-one-out (a fit a config, quadratic in n) up to
    LOO_MAX, then FOLDS-fold cross-validation (a fit a fold: linear)."""
    return "leave-one-out" if n <= LOO_MAX else "%d-fold" % FOLDS


def validate(res, folds=None):
    """Cross-validation: each GEMM config predicted from models fitted without it, on the
    shards it ran with (a weighted config's shards come from that run's calibration, whose
    noise is the answer's to flag, not the model's): one at a time (leave-one-out) up to
    LOO_MAX configs, else in FOLDS folds (config j in fold j mod FOLDS, each fold's configs
    predicted from the others'); folds forces a count (0: leave-one-out). Rows of (config,
    measured, predicted, error, extrapolates, method)."""
    hosts = hosts_of(res.run)
    check_configs(res.configs, len(hosts))
    g = granularity_of(res.run)
    pooled = getattr(res, "reference", None)
    units, done = [], set()
    for c in res.configs:
        if c.get("comm_only") == "yes" or not finite(c["step_us"].get("median")):
            continue
        key, meas, ids = pooled[c["id"]] if pooled else (None, c["step_us"]["median"], [c["id"]])
        if key is not None and key in done:
            continue  # one row per config of the sweep
        done.add(key)
        units.append((c, meas, ids))
    if folds is None:
        folds = 0 if len(units) <= LOO_MAX else FOLDS
    method = "%d-fold" % folds if folds else "leave-one-out"
    groups = [[j for j in range(len(units)) if j % folds == f] for f in range(folds)] \
        if folds else [[j] for j in range(len(units))]
    rows = [None] * len(units)
    prog = tr.Progress("validating the models (%s)" % method, len(units))
    for n, group in enumerate(groups):
        out = {i for j in group for i in units[j][2]}
        mdl = Models(res.configs, hosts, g, leave_out=out)
        for j in group:
            rows[j] = _validate_one(res, pooled, mdl, *units[j])
            rows[j]["method"] = method
        prog.step(sum(len(x) for x in groups[:n + 1]))
    return rows


def _validate_one(res, pooled, mdl, c, meas, ids):
    """A config's row: its measured step against the models' prediction."""
    preds = []
    for x in (res.configs[i] for i in ids) if pooled else [c]:
        ranks = x.get("world_ranks") or list(range(x["world_size"]))
        shards = x.get("shards") if all(finite(v) for v in x.get("shards") or [None]) else None
        preds.append(mdl.predict(x["m"], x["n"], x["k"], x["split"], x["policy"], x["tp"],
                                 ranks, x["dtype"], x.get("collective"),
                                 hosts=x.get("run_hosts"), shards=shards,
                                 sp=x.get("sequence_parallel", "off")))
    got = [p for p in preds if p]  # each run's copy on its own shards: their median
    pred = statistics.median(p["step_us"] for p in got) if got else None
    flags = sorted({f for p in got for f in p["extrapolates"]}) if got else ["no model"]
    return {"config": c["id"] if not pooled else ids[0], "tp": c["tp"], "split": c["split"],
            **ts.variant_dict(c), "policy": c["policy"],
            "shape": tr.shape_label(c), "measured_us": meas, "predicted_us": pred,
            "error": pred / meas - 1.0 if pred else None, "extrapolates": flags}


def error_summary(rows):
    errs = sorted(abs(r["error"]) for r in rows if r["error"] is not None)
    if not errs:
        return None
    q = lambda f: errs[min(len(errs) - 1, int(math.ceil(f * len(errs))) - 1)]
    return {"configs": len(errs), "median": statistics.median(errs), "p90": q(0.9),
            "max": errs[-1], "unpredicted": len(rows) - len(errs),
            "method": rows[0].get("method", "leave-one-out")}
