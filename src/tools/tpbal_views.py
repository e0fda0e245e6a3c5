"""tpbal_views: the per-rank, distribution and side-by-side plots of tpbal-report.

Like tpbal_plots: one figure a function, drawn from what the records say (ranks.csv, the
step samples, the traces, the summary), returning the numbers drawn for plots.json.
"""
import math

import tpbal_plots as pl
import tpbal_results as tr
from tpbal_results import clean, finite

plt = pl.plt
COLORS = pl.COLORS
POLICY_COLORS = {"even": "#8c8c8c", "weighted": "#4c72b0", "adaptive": "#8172b3",
                 "cost": "#dd8452"}


def pick_pair(cfgs):
    """The even config and its weighted (or adaptive) twin that show the most: the even
    config with the largest what-if slowdown that has a twin. (even, other) or None."""
    def group(c):
        return (c["tp"], c["split"], tr.shape_label(c), c.get("placement"))

    twins = {}  # the first non-even config of each group: one pass, not one a config
    for w in cfgs:
        if w["policy"] != "even" and not w.get("chunks"):
            twins.setdefault(group(w), w)
    best = None
    for c in cfgs:
        if c["policy"] != "even" or c["tp"] < 2 or c.get("comm_only") == "yes" or \
                c.get("chunks"):
            continue
        twin = twins.get(group(c))
        if twin and (best is None or (tr.num(c.get("slowdown")) or 0) >
                     (tr.num(best[0].get("slowdown")) or 0)):
            best = (c, twin)
    return best


def rank_rows(rows, cid):
    """ranks.csv rows of config cid, by rank position, with numbers parsed."""
    out = []
    for r in rows:
        if str(r.get("id")) != str(cid):
            continue
        d = {"rank": r.get("world_rank") or r.get("rank"), "host": clean(r.get("host", "?"), 32)}
        for f in ("speed", "shard", "compute_med_us", "wait_med_us", "comm_med_us", "score"):
            try:
                v = float(r.get(f) or "nan")
            except ValueError:
                v = float("nan")
            d[f] = v if math.isfinite(v) else None
        out.append(d)
    return out


def plot_ranks(pair, rows, outdir, made):
    """Per rank, even beside weighted: speed, shard, and median compute / wait / comm."""
    if not pair or not rows:
        return None
    sides = [(c, rank_rows(rows, c["id"])) for c in pair]
    if not all(r for _, r in sides):
        return None
    n = len(sides[0][1])
    fig, axes = plt.subplots(1, 3, figsize=(pl.inches(n, 0.5, 9, 24), 3.6))
    x = list(range(n))
    labels = ["%s\n%s" % (r["rank"], r["host"]) for r in sides[0][1]]
    data = {"configs": [c["id"] for c in pair], "ranks": [r["rank"] for r in sides[0][1]]}
    for j, (c, rr) in enumerate(sides):
        off = -0.2 if j == 0 else 0.2
        col = POLICY_COLORS.get(c["policy"], "#55a868")
        axes[0].bar([i + off for i in x], [r["speed"] or 0 for r in rr], 0.4, color=col,
                    label=c["policy"])
        axes[1].bar([i + off for i in x], [r["shard"] or 0 for r in rr], 0.4, color=col,
                    label=c["policy"])
        bottom = [0.0] * n
        for phase, f in (("compute", "compute_med_us"), ("wait", "wait_med_us"),
                         ("comm", "comm_med_us")):
            v = [(r[f] or 0) / 1e3 for r in rr]
            axes[2].bar([i + off for i in x], v, 0.4, bottom=bottom, color=COLORS[phase],
                        edgecolor=col, linewidth=1.5, label=phase if j == 0 else None)
            bottom = [a + b for a, b in zip(bottom, v)]
        data[c["policy"]] = {f: [r[f] for r in rr] for f in (
            "speed", "shard", "compute_med_us", "wait_med_us", "comm_med_us")}
    titles = ("speed (GFLOP/s when calibrated)",
              "shard (%s dimension)" % ("K" if pair[0]["split"] == "row" else "N"),
              "median per rank (ms): even left, %s right" % pair[1]["policy"])
    for ax, t in zip(axes, titles):
        ax.set_xticks(x)
        ax.set_xticklabels(labels, fontsize=7)
        ax.set_title(t, fontsize=9)
        ax.grid(alpha=0.3, axis="y")
    axes[0].legend(fontsize=7)
    axes[2].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.suptitle("Per rank: config %d (even) and %d (%s), tp %d %s %s" % (
        pair[0]["id"], pair[1]["id"], pair[1]["policy"], pair[0]["tp"], pair[0]["split"],
        tr.shape_label(pair[0])), fontsize=10)
    pl.save(fig, outdir, "ranks", made)
    return data


def rank_table(pair, rows):
    """(head, rows) of the per-rank, per-host table of the pair."""
    head = ["config", "policy", "rank", "host", "speed (GFLOP/s when calibrated)", "shard",
            "compute", "wait", "comm", "score"]
    out = []
    for c in pair or []:
        for r in rank_rows(rows, c["id"]):
            out.append((c["id"], c["policy"], r["rank"], r["host"], r["speed"],
                        r["shard"], pl.us_text(r["compute_med_us"]),
                        pl.us_text(r["wait_med_us"]), pl.us_text(r["comm_med_us"]), r["score"]))
    return head, out


def ecdf(v):
    s = sorted(x for x in v if finite(x))
    return s, [(i + 1) / len(s) for i in range(len(s))]


def plot_steps(cfgs, outdir, made):
    """Step-time distributions (ECDF of the recorded step samples), one panel per shape and
    TP degree, one line per split and policy."""
    groups = {}
    for c in cfgs:
        if c.get("step_samples_us") and c.get("comm_only") != "yes":
            groups.setdefault((tr.shape_label(c), c["tp"]), []).append(c)
    if not groups:
        return None
    keys = sorted(groups, key=lambda k: (k[0], k[1]))[:pl.MAX_BARS // 4]
    cols = min(3, len(keys))
    rows = (len(keys) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.2 * rows), squeeze=False)
    data = {}
    for ax, key in zip([a for row in axes for a in row], keys):
        top = max((x for c in groups[key] for x in c["step_samples_us"] if finite(x)), default=0)
        unit, f = pl.time_unit(top)  # one unit for the panel
        for c in groups[key][:pl.MAX_SERIES]:
            xs, ys = ecdf(c["step_samples_us"])
            ax.step([x / f for x in xs], ys, where="post",
                    label="%s %s" % (c["split"], c["policy"]),
                    color=POLICY_COLORS.get(c["policy"]),
                    linestyle="-" if c["split"] == "row" else "--")
            data["%d" % c["id"]] = {"samples": len(xs), "median_us": c["step_us"]["median"]}
        ax.set(xlabel="step (%s)" % unit, ylabel="fraction of iterations",
               title="%s, tp %d" % (clean(key[0], 40), key[1]))
        ax.grid(alpha=0.3)
    for ax in [a for row in axes for a in row][len(keys):]:
        ax.set_visible(False)
    seen = {}  # one legend beside the panels, never over a curve: a split and policy look
    for ax in [a for row in axes for a in row][:len(keys)]:  # the same in every panel
        for h, lab in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(lab, h)
    fig.legend(list(seen.values()), list(seen), fontsize=7, loc="upper left",
               bbox_to_anchor=(1.0, 0.95))
    fig.suptitle("Step-time distributions (every recorded iteration)", fontsize=10)
    fig.tight_layout()
    pl.save(fig, outdir, "steps", made)
    return data


def boundaries(t, shown):
    """Each shown iteration's start (the earliest compute start of any rank)."""
    out = []
    for i in shown:
        st = [t.spans[(r, i)]["compute"][0] for r in t.ranks if t.has(r, i, "compute")]
        out.append(min(st) if st else None)
    return out


def window_end(t, shown):
    """The latest comm end of the last shown iteration."""
    last = shown[-1]
    return max((t.spans[(r, last)]["comm"][0] + t.spans[(r, last)]["comm"][1]
                for r in t.ranks if t.has(r, last, "comm")), default=float("nan"))


def shade_gaps(ax, t, shown, t0, other):
    """Each gap of the window where the config did not run (tpbal_plots.interleave_gaps),
    shaded and named on its axes: the other config of the pair ran there."""
    out = []
    for s, e in pl.interleave_gaps(t, shown):
        x0, x1 = (s - t0) / 1e3, (e - t0) / 1e3
        ax.axvspan(x0, x1, facecolor="none", edgecolor="#999999", hatch="//", lw=0, zorder=0)
        ax.text(0.5 * (x0 + x1), -0.45, other, ha="center", va="bottom", fontsize=7,
                color="#555555", clip_on=True,
                bbox={"facecolor": "white", "edgecolor": "none", "pad": 1})
        out.append([round(x0, 3), round(x1, 3)])
    return out


def plot_gantt_pair(pair, traces, outdir, window, made):
    """Even above weighted on one time scale: a window of iterations each, iteration
    boundaries as lines, the slowest step shaded."""
    if not pair or not all(t and t.iters and t.ranks for t in traces):
        return None
    panels = []
    for c, t in zip(pair, traces):
        worst, shown = pl.gantt_window(t, window)
        b = boundaries(t, shown)
        if b[0] is None:
            return None
        panels.append((c, t, worst, shown, b))
    span = max(window_end(t, shown) - b[0] for _, t, _, shown, b in panels)
    if not finite(span) or span <= 0:
        return None
    n = len(panels[0][1].ranks)
    fig, axes = plt.subplots(2, 1, figsize=(11, 2 * pl.inches(n, 0.35, 1.2)), sharex=True)
    data = {}
    for ax, (c, t, worst, shown, b) in zip(axes, panels):
        t0 = b[0]
        for row, r in enumerate(t.ranks):
            for phase in ("compute", "wait", "comm"):
                bars = [((t.spans[(r, i)][phase][0] - t0) / 1e3, t.spans[(r, i)][phase][1] / 1e3)
                        for i in shown if t.has(r, i, phase)]
                ax.broken_barh(bars, (row - 0.3, 0.6), color=COLORS[phase], zorder=2)
        for i, x in zip(shown, b):
            if x is None:
                continue
            ax.axvline((x - t0) / 1e3, color="black", lw=0.5, alpha=0.5)
        if worst in shown:
            k = shown.index(worst)
            end = b[k + 1] if k + 1 < len(b) and b[k + 1] is not None else t0 + span
            ax.axvspan((b[k] - t0) / 1e3, (end - t0) / 1e3, color="#ffd92f", alpha=0.35, lw=0,
                       zorder=0)
        mate = pair[1] if c is pair[0] else pair[0]
        gap = shade_gaps(ax, t, shown, t0, "%s ran here (side by side)" % mate["policy"]) \
            if (c.get("interleave_rounds") or 0) > 0 else []
        ax.set_yticks(range(len(t.ranks)))
        ax.set_yticklabels([t.label(r) for r in t.ranks], fontsize=7)
        ax.set_ylim(len(t.ranks) - 0.5, -0.6)  # room above the first rank for the gaps' names
        ax.set_title("config %d: %s, iterations %d-%d (slowest %d, shaded%s)" % (
            c["id"], c["policy"], shown[0], shown[-1], worst,
            "; hatched: it did not run" if gap else ""), fontsize=9)
        data[c["policy"]] = {"config": c["id"], "window": shown, "slowest_iter": worst,
                             "gaps_ms": gap}
    axes[1].set_xlim(0, span / 1e3)
    axes[1].set_xlabel("ms from the window's first iteration (one scale for both)")
    axes[0].legend(handles=[pl.Patch(color=COLORS[p], label=p) for p in ("compute", "wait",
                                                                          "comm")],
                   fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.suptitle("Even against %s, tp %d %s %s" % (pair[1]["policy"], pair[0]["tp"],
                                                   pair[0]["split"], tr.shape_label(pair[0])),
                 fontsize=10)
    pl.save(fig, outdir, "gantt_pair", made)
    return data


def plot_overlap(cfgs, outdir, made):
    """--overlap chunked: the share of the communication hidden (overlap efficiency) and the
    speed-up over serial against the chunk count, one line per split, TP degree, policy and
    shape."""
    rows = [c for c in cfgs if c.get("chunks") and c.get("overlap_figures")]
    if not rows:
        return None
    lines = {}
    for c in rows:
        key = "tp%d %s %s %s" % (c["tp"], c["split"], c["policy"], tr.shape_label(c))
        f = c["overlap_figures"]
        lines.setdefault(key, []).append((c["chunks"], tr.num(f.get("efficiency")),
                                          tr.num(f.get("speedup"))))
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 3.8))
    data = {}
    for key, pts in sorted(lines.items()):
        pts.sort()
        xs = [p[0] for p in pts]
        eff = [100 * p[1] if finite(p[1]) else float("nan") for p in pts]
        sp = [p[2] if finite(p[2]) else float("nan") for p in pts]
        a1.plot(xs, eff, marker="o", label=clean(key, 40))
        a2.plot(xs, sp, marker="o", label=clean(key, 40))
        data[key] = {"chunks": xs, "efficiency": [p[1] for p in pts],
                     "speedup": [p[2] for p in pts]}
    a1.axhline(0, color="black", lw=0.8)
    a2.axhline(1.0, color="black", lw=0.8)
    a1.set(xlabel="chunks", ylabel="communication hidden (%)", title="Overlap efficiency")
    a2.set(xlabel="chunks", ylabel="T_serial / T_overlap", title="Speed-up over serial")
    ticks = sorted({c["chunks"] for c in rows})
    for a in (a1, a2):
        a.set_xticks(ticks)
        a.set_xticklabels([str(t) for t in ticks])
    a2.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    pl.save(fig, outdir, "overlap", made)
    return data
