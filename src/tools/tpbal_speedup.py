"""tpbal_speedup: tpbal-report's even-against-weighted plot: per weighted (or cost) config
its measured speed-up over even with the 95 % interval its verdict reads, the verdict itself
above the bar, the most balancing could buy (the bound) as a tick, the band of a draw (within
5 %) shaded, and the speed-up predicted from the even run beside it. The verdicts and bounds
are the run's own (its summary's answer), never decided again here."""
import tpbal_plots as pl
import tpbal_results as tr
import tpbal_schema as ts
from tpbal_results import clean, finite

TOLERANCE = 0.05  # a draw: within 5 % (src/record/verdict.h)
VERDICT_COLORS = {"better": "#2ca02c", "worse": "#d62728", "draw": "#7f7f7f",
                  "inconclusive": "#ff7f0e", "disturbed": "#9467bd"}


def speedup_answers(summ):
    """{(tp, placement, m, n, k, split, variant..., policy): {lo, hi, bound, verdict}}:
    the answer's speed-ups over even, their 95 % intervals (the ones that decide the
    verdict), the balance bound and the verdict."""
    out = {}
    for a in tr.records((summ or {}).get("answer")):
        if a.get("kind") != "tp":
            continue
        for p in tr.records(a.get("policies")):
            lo, hi = p.get("speedup_lo"), p.get("speedup_hi")
            out[(a.get("tp"), a.get("placement"), a.get("m"), a.get("n"), a.get("k"),
                 p.get("split"), *ts.variant(p), p.get("policy"))] = {
                "lo": lo if finite(lo) else None, "hi": hi if finite(hi) else None,
                "bound": p.get("speedup_bound") if finite(p.get("speedup_bound")) else None,
                "verdict": p.get("verdict") if isinstance(p.get("verdict"), str) else None}
    return out


def speedup_intervals(summ):
    """{key: (lo, hi)} of speedup_answers where both ends are known."""
    return {k: (v["lo"], v["hi"]) for k, v in speedup_answers(summ).items()
            if v["lo"] is not None and v["hi"] is not None}


def plot_weighted(cfgs, outdir, made, summ=None):
    """Weighted (and cost) over even, bars from 0: measured (with its interval) beside
    predicted, the verdict above, the bound as a tick, the draw band and the line at 1."""
    rows = [c for c in cfgs if c["policy"] in ("weighted", "cost") and finite(c.get("speedup"))]
    if not rows:
        return None
    rows = rows[:pl.MAX_BARS]
    labels = ["tp%d %s %s%s" % (c["tp"], c["split"], tr.shape_label(c),
                                " cost" if c["policy"] == "cost" else "") for c in rows]
    meas = [c["speedup"] for c in rows]
    pred = [c["predicted_speedup"] if finite(c.get("predicted_speedup")) else float("nan")
            for c in rows]
    ans = speedup_answers(summ)
    got = [ans.get((c["tp"], c.get("placement") or "packed", c["m"], c["n"], c["k"], c["split"],
                    *ts.variant(c), c["policy"])) or {} for c in rows]
    iv = [(g["lo"], g["hi"]) if g.get("lo") is not None and g.get("hi") is not None else None
          for g in got]
    lo = [m - i[0] if i else 0.0 for m, i in zip(meas, iv)]
    hi = [i[1] - m if i else 0.0 for m, i in zip(meas, iv)]
    bound = [g.get("bound") for g in got]
    verdict = [g.get("verdict") for g in got]
    fig, ax = pl.plt.subplots(figsize=(pl.inches(len(rows), 1.1, 2), 4.4))
    x = list(range(len(rows)))
    ax.axhspan(1.0 / (1.0 + TOLERANCE), 1.0 + TOLERANCE, color="#bbbbbb", alpha=0.35, lw=0,
               label="a draw: within 5 % of even")
    ax.bar([i - 0.2 for i in x], meas, 0.4, yerr=[lo, hi], capsize=3,
           label="measured T_even / T_weighted, 95 % interval", color=pl.COLORS["compute"])
    ax.bar([i + 0.2 for i in x], pred, 0.4, label="predicted from the even run",
           color=pl.COLORS["wait"])
    bx = [i - 0.2 for i, b in zip(x, bound) if b is not None]
    if bx:
        ax.scatter(bx, [b for b in bound if b is not None], marker="_", s=400, color="black",
                   zorder=3, label="at most: the bound balancing can reach")
    ax.axhline(1.0, color="black", lw=0.8)
    vals = [v for v in meas + pred + [1.0 + TOLERANCE] + [i[1] for i in iv if i] +
            [b for b in bound if b is not None] if finite(v)]
    top = max(vals)
    ax.set_ylim(0.0, 1.15 * top)
    for i, v in enumerate(verdict):  # the run's verdict above its pair of bars
        if v:
            ax.text(i, 1.04 * top, clean(v, 20), ha="center", va="bottom", fontsize=7,
                    color=VERDICT_COLORS.get(v, "black"), clip_on=False)
    ax.set_xticks(x)
    ax.set_xticklabels([clean(s, 40) for s in labels], rotation=30, ha="right", fontsize=8)
    ax.set(ylabel="speed-up of weighted over even (x)",
           title="Even vs weighted: the run's verdict above each bar")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    pl.save(fig, outdir, "weighted", made)
    return {"labels": labels, "measured": meas, "predicted": pred,
            "interval": [list(i) if i else None for i in iv], "bound": bound,
            "verdict": verdict, "band": [1.0 / (1.0 + TOLERANCE), 1.0 + TOLERANCE]}
