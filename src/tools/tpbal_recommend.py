"""tpbal_recommend: tpbal-plan's recommendation per shape among the configs it may recommend
(tpbal's own rule: even, TP 1, or a policy that beats its group's even config), the shortest
step and the highest layer rate over the world; measured beats predicted."""
import math
import statistics

import tpbal_model as tm
import tpbal_results as tr
import tpbal_schema as ts
from tpbal_results import clean

TOLERANCE = 0.05  # as tpbal's verdicts (src/record/verdict.h)


def measured_verdicts(res, world):
    """The run's own verdicts on its policies over even (its summary's answer), by
    (shape, tp, placement, split, variant, policy): for the measured world."""
    out = {}
    summ = res.summary if isinstance(getattr(res, "summary", None), dict) else {}
    if world != len(tm.hosts_of(res.run)):
        return out
    for a in tr.records(summ.get("answer")):
        if a.get("kind") != "tp":
            continue
        for p in tr.records(a.get("policies")):
            out[(a.get("m"), a.get("n"), a.get("k"), a.get("tp"), a.get("placement"),
                 p.get("split"), *ts.variant(p), p.get("policy"))] = \
                p.get("verdict")
    return out


def row_key(r):
    return (r["m"], r["n"], r["k"], r["tp"], r["placement"], r["split"], *ts.variant(r),
            r["policy"])


def measured_steps(res, world):
    """The median steps the directory measured, by row_key, for the measured world (a
    recommendation picks by these where it has them: measured beats predicted; several
    runs: the median of theirs). Serial GEMM configs only (what the predictions cover)."""
    if world != len(tm.hosts_of(res.run)):
        return {}
    seen = {}
    for c in res.configs:
        step = tr.num((c.get("step_us") or {}).get("median"))
        if c.get("comm_only") == "yes" or c.get("chunks") or step is None:
            continue
        key = (c["m"], c["n"], c["k"], c["tp"], c.get("placement") or "packed", c["split"],
               *ts.variant(c), c["policy"])
        seen.setdefault(key, []).append(step)
    return {k: statistics.median(v) for k, v in seen.items()}


def group_of(r):
    """A config's group: its shape, TP degree, placement, split and variant (all but the
    policy)."""
    return (r["m"], r["n"], r["k"], r["tp"], r["placement"], r["split"], *ts.variant(r))


def even_index(rows):
    """The first predicted even row of each group (group_of), for recommendable."""
    out = {}
    for e in rows:
        if e["policy"] == "even" and e["prediction"]:
            out.setdefault(group_of(e), e)
    return out


def recommendable(r, evens, verdicts):
    """As tpbal's answer: even, TP 1, or a policy that beats the even config of its group
    (evens: even_index's), by the run's own verdict where it measured the pair ("better"),
    else by a predicted speed-up beyond the tolerance."""
    if r["policy"] == "even" or r["tp"] == 1:
        return True
    key = (r["m"], r["n"], r["k"], r["tp"], r["placement"], r["split"], *ts.variant(r),
           r["policy"])
    if key in verdicts:
        return verdicts[key] == "better"
    ev = evens.get(group_of(r))
    return not ev or ev["prediction"]["step_us"] > r["prediction"]["step_us"] * (1.0 + TOLERANCE)


def run_uses(res, world):
    """The run's own use lines (its summary's "use" answers) by (question, row_key): how sure
    the run was of each pick against its runner-up, for the measured world only."""
    summ = res.summary if isinstance(getattr(res, "summary", None), dict) else {}
    if world != len(tm.hosts_of(res.run)):
        return {}
    out = {}
    for a in tr.records(summ.get("answer")):
        if a.get("kind") == "use" and "sure" in a:
            out[(a.get("question"), (a.get("m"), a.get("n"), a.get("k"), a.get("tp"),
                                     a.get("placement"), a.get("split"), *ts.variant(a),
                                     a.get("policy")))] = a
    return out


def sureness(question, pick, runner, margin, uses, err):
    """How sure a pick is against its runner-up (the best other TP degree): where both were
    measured and the run picked the same config, the run's own statement (against its own
    runner-up, any other config it may recommend: at least as close as this one); else,
    where a prediction is involved, sure only when the margin exceeds the models' p90 error
    on both (margin > (1 + err)^2); "not enough data" where neither can say. runner None:
    no other TP degree, the run's statement alone (None without one)."""
    u = uses.get((question, row_key(pick))) if pick["basis"] == "measured" else None
    if (u and tr.num(u.get("margin_lo")) is not None and isinstance(u.get("runner_up"), str)
            and (runner is None or runner["basis"] == "measured")):
        return {"sure": u["sure"], "basis": "the run's interval",
                "runner_up_tp": u.get("runner_up_tp"), "runner_up": u["runner_up"],
                "margin": tr.num(u.get("margin")), "margin_lo": tr.num(u.get("margin_lo")),
                "margin_hi": tr.num(u.get("margin_hi"))}
    if runner is None:
        return None
    out = {"runner_up_tp": runner["tp"], "runner_up": runner["split"] + " " + runner["policy"],
           "margin": margin, "margin_lo": None, "margin_hi": None}
    if pick["basis"] == "measured" and runner["basis"] == "measured":
        return dict(out, sure="not enough data", basis="no interval from the run")
    if err is None or not math.isfinite(margin):
        return dict(out, sure="not enough data", basis="no validated model")
    return dict(out, sure="sure" if margin > (1.0 + err) ** 2 else "not sure",
                basis="the models' p90 error", error=err)


def sureness_text(what, s):
    """"#     shortest step: sure, 1.79x [1.65, 1.94] over the next, TP 1 ..." """
    head = "#     %s: %s, %.2fx" % (what, s["sure"], s["margin"])
    if s.get("margin_lo") is not None:
        head += " [%.2f, %.2f]" % (s["margin_lo"], s["margin_hi"])
    head += " over the next, TP %d %s" % (s["runner_up_tp"], clean(s["runner_up"]))
    if s["basis"] == "the run's interval":
        return head + " (the run's interval)" + \
            ("" if s["sure"] == "sure" else ": either will do; --iters to tell")
    if s["basis"] == "the models' p90 error":
        return head + (" (beyond the models' p90 error, %.1f %%, on both)" % (100 * s["error"])
                       if s["sure"] == "sure" else
                       ": within the models' p90 error (%.1f %%) on either: either will do, "
                       "or measure both" % (100 * s["error"]))
    return head + " (%s)" % s["basis"]


def recommend(rows, world, verdicts=None, measured=None, uses=None, err=None):
    """Per shape, tpbal's two questions among the configs it may recommend: the shortest
    step (latency) and the highest layer rate over the world, (P/t) / T (throughput), the
    rest P/t left to data or pipeline parallelism (TP x rest = P). A config the directory
    measured at this world is judged by its measured median step, as tpbal's own answer
    judges it (measured beats predicted); the others by their prediction. Each pick says
    which (its "basis" and "step_us")."""
    measured = measured or {}
    out = []
    tp1 = {}  # at TP 1 the split changes nothing that runs: one shape's fastest measured
    for k, v in measured.items():
        if k[3] == 1:
            tp1[k[:3]] = min(v, tp1.get(k[:3], v))

    def known(r):
        m = measured.get(row_key(r))
        return m if m is not None or r["tp"] > 1 else tp1.get(row_key(r)[:3])

    def step(r):
        m = known(r)
        return m if m is not None else r["prediction"]["step_us"]

    def order(r):  # a tie goes to the config the run measured itself (its label)
        return (step(r), row_key(r) not in measured)

    evens, by_shape = even_index(rows), {}
    for r in rows:
        by_shape.setdefault((r["m"], r["n"], r["k"]), []).append(r)
    for shape in sorted(by_shape):
        best = {}
        for r in by_shape[shape]:
            if (r["prediction"] is None and known(r) is None) or \
                    not recommendable(r, evens, verdicts or {}):
                continue
            if r["tp"] not in best or order(r) < order(best[r["tp"]]):
                best[r["tp"]] = r
        if not best:
            continue
        lat = min(best.values(), key=step)
        thr = max(best.values(), key=lambda r: (world / r["tp"]) / step(r))

        def pick(r):
            return dict(r, step_us=step(r),
                        basis="measured" if known(r) is not None else "predicted")

        def rate(r):
            return (world / r["tp"]) / step(r)
        rec = {"m": shape[0], "n": shape[1], "k": shape[2], "latency": pick(lat),
               "throughput": pick(thr), "world": world}
        for q, p, better in (("latency", lat, lambda r: -step(r)), ("throughput", thr, rate)):
            rest = [r for r in best.values() if r is not p]
            nxt = max(rest, key=better) if rest else None
            margin = (step(nxt) / step(p) if q == "latency" else rate(p) / rate(nxt)) \
                if nxt else math.nan
            s = sureness(q, rec[q], pick(nxt) if nxt else None, margin, uses or {}, err)
            if s:
                rec[q + "_sure"] = s
        out.append(rec)
    return out
