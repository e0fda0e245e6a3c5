"""tpbal_plots: the plots of tpbal-report, one function each.

Every plot function takes what it draws (configs, the summary, a trace), draws one
figure into outdir (PNG and SVG) through save(), and returns the numbers it drew
(for plots.json, which the tests check against the result files), or None when
there is nothing to draw. Values are read as the record wrote them; nothing that
the C code decides (steps, windows, straggler) is derived again here.
"""
import io
import os

import matplotlib

matplotlib.use("Agg")
matplotlib.rcParams["text.parse_math"] = False  # "$\frac{$" in a name is text, not TeX
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from matplotlib.ticker import FuncFormatter, NullFormatter  # noqa: E402

import tpbal_results as tr  # noqa: E402
from tpbal_layout import LAYOUT, fit_legends, legend_over_data  # noqa: E402,F401
from tpbal_results import BadInput, clean, finite  # noqa: E402

COLORS = {"compute": "#4c72b0", "wait": "#dd8452", "comm": "#55a868", "idle": "#c44e52"}
MAX_SERIES = 12  # lines with a legend; more are drawn without one
MAX_BARS = 48  # bars in one chart (the rest are named in the caption)
MAX_INCHES = 30  # no figure larger than this on a side


def save(fig, outdir, name, made):
    """Write fig as outdir/name.png and .svg, each whole or not at all and never through a
    link (tpbal_results.write_atomic); refuse with one line when that fails. The legends'
    overlap with the data is recorded in LAYOUT."""
    try:
        LAYOUT[name] = {"legend_over_data": fit_legends(fig)}
        for ext in ("png", "svg"):
            buf = io.BytesIO()
            fig.savefig(buf, format=ext, dpi=110, bbox_inches="tight")
            tr.write_atomic(os.path.join(outdir, "%s.%s" % (name, ext)), buf.getvalue())
    except (OSError, ValueError) as e:
        raise BadInput("cannot write the %s plot into %s: %s" % (name, clean(outdir), e))
    finally:
        plt.close(fig)
    made.append(name)
    tr.Progress("drawing", 12, "plots at most").step(len(made))


def inches(n, per, base, cap=MAX_INCHES):
    return min(cap, base + per * n)


time_unit, us_text = tr.time_unit, tr.us_text


def size_ticks(ax, sizes):
    """Byte-size tick labels (4K, 1M) at the measured sizes of a log axis."""
    ticks = sorted(set(sizes))
    if len(ticks) > 12:
        ticks = ticks[::(len(ticks) + 11) // 12]
    ax.set_xticks(ticks)
    ax.set_xticklabels([tr.size_label(b) for b in ticks], fontsize=8)
    ax.minorticks_off()


def plain_log(axis):
    """Plain numbers (10, 100, 1000) on a log axis: its default labels are TeX
    ($\\mathdefault{10^{4}}$), printed as such with text.parse_math off."""
    axis.set_major_formatter(FuncFormatter(lambda v, _: "%g" % v))
    axis.set_minor_formatter(NullFormatter())


def step_series(cfgs):
    """{label: configs by TP degree} of the GEMM configs, one series per shape, split and
    policy; a policy other than even starts from the TP 1 config of its shape and split
    (at TP 1 there is nothing to weigh), so that its line starts where even's does."""
    series, tp1 = {}, {}
    for c in cfgs:
        if c.get("comm_only") != "yes":
            key = "%s %s %s" % (tr.shape_label(c), c["split"], c["policy"])
            series.setdefault(key, []).append(c)
            if c["tp"] == 1:
                tp1[(tr.shape_label(c), c["split"])] = c
    for key, v in series.items():
        first = tp1.get((tr.shape_label(v[0]), v[0]["split"]))
        if first is not None and all(c["tp"] != 1 for c in v):
            v.append(first)
    return {k: sorted(v, key=lambda c: c["tp"]) for k, v in series.items()}


def plot_step(cfgs, outdir, made):
    series = step_series(cfgs)
    if not series:
        return None
    data = {}
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    drawn = sorted(series.items())[:MAX_BARS]  # more lines than this are a blur
    if len(series) > len(drawn):
        fig.suptitle("the first %d of %d series" % (len(drawn), len(series)))
    unit, f = time_unit(max(c["step_us"]["median"] for _, cs in drawn for c in cs))
    for key, cs in drawn:
        tps = [c["tp"] for c in cs]
        steps = [c["step_us"]["median"] for c in cs]
        effs = [c.get("e") for c in cs]
        style = "-" if key.endswith(" even") else "--"
        ax1.plot(tps, [x / f for x in steps], marker="o", label=clean(key), linestyle=style)
        ax2.plot([t for t, e in zip(tps, effs) if finite(e)], [e for e in effs if finite(e)],
                 marker="o", label=clean(key), linestyle=style)
        data[key] = {"tp": tps, "step_us": steps, "e": effs}
    ax1.set(xlabel="TP degree", ylabel="median step (%s)" % unit, title="Step time",
            ylim=(0, None))
    # from 0, and high enough for every E drawn (E > 1: shards faster per FLOP, not clipped)
    e_top = max([e for v in data.values() for e in v["e"] if finite(e)] + [1.0])
    ax2.set(xlabel="TP degree", ylabel="E = T_1 / (N T_step)", title="Parallel efficiency",
            ylim=(0, 1.1 * e_top))
    all_tp = sorted({t for v in data.values() for t in v["tp"]})
    for ax in (ax1, ax2):
        ax.set_xscale("log", base=2)
        ax.set_xticks(all_tp)
        ax.set_xticklabels([str(t) for t in all_tp])
        ax.minorticks_off()
        ax.grid(alpha=0.3)
    if len(series) <= MAX_SERIES:
        ax2.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    save(fig, outdir, "step", made)
    return data


def decomposition_groups(summ):
    """{tp: [row, ...]} of the summary's decomposition, one row per shape, split and
    policy (rows with a missing term are left out)."""
    groups, seen = {}, set()
    for d in tr.records(summ.get("decomposition")):
        if not all(finite(d.get(f)) for f in (
                "tp", "m", "n", "k", "comp_us", "comm_us", "idle_us", "step_us")):
            continue
        key = (d["tp"], d.get("split"), d.get("policy"), d["m"], d["n"], d["k"])
        if key not in seen:
            seen.add(key)
            groups.setdefault(d["tp"], []).append(d)
    order = {"even": 0, "weighted": 1, "adaptive": 2, "cost": 3}
    return {tp: sorted(v, key=lambda d: ("%dx%dx%d" % (d["m"], d["n"], d["k"]), d.get("split"),
                                         order.get(d.get("policy"), 3)))
            for tp, v in sorted(groups.items())}


def plot_decomposition(summ, outdir, made):
    """One grouped chart per TP degree: per shape and split, even beside weighted, each a
    stacked bar of T_comp/N, T_comm and T_idle (the mean terms scaled to add up to the
    median step, as the summary gives them), a marker at T. One y-scale for all panels;
    nothing is left out."""
    groups = decomposition_groups(summ)
    if not groups:
        return None
    top = max(d["step_us"] for v in groups.values() for d in v)
    unit, f = time_unit(top)
    widths = [len(v) for v in groups.values()]
    fig, axes = plt.subplots(1, len(groups), figsize=(inches(sum(max(w, 3) for w in widths),
                                                               0.75, 2.5), 4.6),
                             squeeze=False, sharey=True,
                             gridspec_kw={"width_ratios": [max(w, 3) for w in widths]})
    data = {}
    for ax, (tp, ds) in zip(axes[0], groups.items()):
        x = list(range(len(ds)))
        comp = [d["comp_us"] / f for d in ds]
        comm = [d["comm_us"] / f for d in ds]
        idle = [d["idle_us"] / f for d in ds]
        ax.bar(x, comp, 0.8, color=COLORS["compute"], label="T_comp/N")
        ax.bar(x, comm, 0.8, bottom=comp, color=COLORS["comm"], label="T_comm")
        ax.bar(x, idle, 0.8, bottom=[a + b for a, b in zip(comp, comm)], color=COLORS["idle"],
               label="T_idle")
        ax.plot(x, [d["step_us"] / f for d in ds], "k_", markersize=14, mew=2,
                label="T (median step)")
        ax.set_xticks(x)
        ax.set_xticklabels(["%dx%dx%d\n%s %s" % (d["m"], d["n"], d["k"], clean(d.get("split")),
                                                 clean(d.get("policy"))) for d in ds],
                           fontsize=7, rotation=45, ha="right")
        ax.set_title("tp %d" % tp, fontsize=9)
        ax.grid(alpha=0.3, axis="y")
        data["tp%d" % tp] = [{"split": d.get("split"), "policy": d.get("policy"),
                              "m": d["m"], "n": d["n"], "k": d["k"], "comp_us": d["comp_us"],
                              "comm_us": d["comm_us"], "idle_us": d["idle_us"],
                              "step_us": d["step_us"]} for d in ds]
    axes[0][0].set_ylabel("median step (%s), its terms scaled to add up" % unit)
    axes[0][-1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.suptitle("T(N) = T_comp/N + T_comm(N) + T_idle(N), per TP degree", fontsize=10)
    fig.tight_layout()
    save(fig, outdir, "decomposition", made)
    return data


def comm_series(cfgs):
    """{(collective, tp, policy, placement, comm_only): configs by size} with >= 2 sizes."""
    series = {}
    for c in cfgs:
        if c["tp"] < 2 or not finite(c.get("xfer_us")) or not finite(c.get("comm_bytes")):
            continue
        key = (c.get("collective"), c["tp"], c["policy"], c.get("placement"),
               c.get("comm_only", "no"))
        series.setdefault(key, []).append(c)
    return {k: sorted(v, key=lambda c: c["comm_bytes"]) for k, v in series.items()
            if len({c["comm_bytes"] for c in v}) >= 2}


MEANINGFUL_FITS = ("ok", "latency not resolved")  # the fit's quality: worth a curve


def fit_of(summ, key):
    """The series' alpha-beta fit where it means something: a resolved bandwidth over more
    than two sizes, not a poor fit (None otherwise)."""
    for f in tr.records(summ.get("comm_model")):
        if (f.get("collective"), f.get("tp"), f.get("policy"),
                                    f.get("placement"), f.get("comm_only", "no")) == key \
                and finite(f.get("latency_us")) and finite(f.get("bandwidth_gbs")) \
                and f.get("quality", "ok") in MEANINGFUL_FITS:
            return f
    return None


def spread_bars(c):
    """The config's step spread (min and p95 against the median) applied to its transfer
    time: (below, above) in us, or (0, 0)."""
    s, x = c.get("step_us") or {}, c.get("xfer_us")
    med, lo, hi = (tr.num(s.get(k)) for k in ("median", "min", "p95"))
    if not (med and lo is not None and hi is not None and finite(x)):
        return 0.0, 0.0
    return max(0.0, x * (1 - lo / med)), max(0.0, x * (hi / med - 1))


def plot_comm(cfgs, summ, outdir, made):
    series = comm_series(cfgs)
    if not series:
        return None
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    data = {}
    for key, cs in sorted(series.items(), key=str)[:MAX_SERIES]:
        label = "%s tp%d %s%s" % (key[0], key[1], key[2], " comm-only" if key[4] == "yes" else "")
        v = [c["comm_bytes"] for c in cs]
        t = [c["xfer_us"] for c in cs]
        bw = [c.get("busbw_gbs") for c in cs]
        bars = [spread_bars(c) for c in cs]
        line = ax1.errorbar(v, t, yerr=[[b[0] for b in bars], [b[1] for b in bars]], fmt="o",
                            capsize=2, label=clean(label))[0]
        ax2.plot(v, [b if finite(b) else float("nan") for b in bw], "o-",
                 color=line.get_color(), label=clean(label))
        entry = {"bytes": v, "xfer_us": t, "busbw_gbs": bw, "bars_us": bars}
        f = fit_of(summ, key)
        if f and f["bandwidth_gbs"] > 0:
            lo, hi = min(v), max(v)
            xs = [lo * (hi / lo) ** (i / 60.0) for i in range(61)]
            ys = [f["latency_us"] + x / (f["bandwidth_gbs"] * 1e3) for x in xs]
            xs, ys = [x for x, y in zip(xs, ys) if y > 0], [y for y in ys if y > 0]  # log axes
            ax1.plot(xs, ys, "-", color=line.get_color(), lw=1,
                     label="fit L %.1f us, B %.2f GB/s" % (f["latency_us"], f["bandwidth_gbs"]))
            entry["fit"] = {"latency_us": f["latency_us"], "bandwidth_gbs": f["bandwidth_gbs"],
                            "r2": f.get("r2")}
        data[label] = entry
    ax1.set(xscale="log", yscale="log", xlabel="message (bytes)", ylabel="transfer time (us)",
            title="Time vs size, T = L + V/B (bars: the step's min..p95 spread)")
    ax2.set(xscale="log", xlabel="message (bytes)", ylabel="busbw (GB/s)",
            title="Bus bandwidth (nccl-tests)")
    sizes = [b for e in data.values() for b in e["bytes"]]
    for ax in (ax1, ax2):
        size_ticks(ax, sizes)
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=7)
    plain_log(ax1.yaxis)
    save(fig, outdir, "comm", made)
    return data


class Trace:
    """One config's trace, as the record wrote it: hosts, rank names and spans."""

    def __init__(self, path, config=None):
        self.info, events = tr.read_trace(path, config)
        self.hosts, self.names, self.spans = {}, {}, {}
        for e in events:
            args = e.get("args") if isinstance(e.get("args"), dict) else {}
            if not all(isinstance(e.get(k), int) and not isinstance(e.get(k), bool)
                       for k in ("pid", "tid")):
                continue  # not an event of a rank (tpbal writes integer ids)
            if e.get("ph") == "M" and e.get("name") == "process_name":
                self.hosts[e["pid"]] = clean(args.get("name", "?"), 40)
            elif e.get("ph") == "M" and e.get("name") == "thread_name":
                self.names[e["tid"]] = (e["pid"], clean(args.get("name", "?"), 40))
            elif e.get("ph") == "X" and finite(e.get("ts")) and finite(e.get("dur")) and \
                    isinstance(args.get("iter"), int):
                self.spans.setdefault((e["tid"], args["iter"]), {})[str(e.get("name"))] = (
                    e["ts"], e["dur"])
        # ranks grouped by node (pid), then by position (tid)
        self.ranks = sorted(self.names, key=lambda t: (self.names[t][0], t))
        self.iters = sorted({i for (_, i) in self.spans})

    def label(self, r):
        return "%s (%s)" % (self.names[r][1], self.hosts.get(self.names[r][0], "?"))

    def has(self, r, i, *phases):
        s = self.spans.get((r, i), {})
        return all(p in s for p in phases)


def gantt_window(t, window):
    """The iterations of the Gantt chart: window of them centred on the record's slowest."""
    worst = t.info.get("slowest_iter")
    if not isinstance(worst, int) or worst not in t.iters:
        worst = t.iters[len(t.iters) // 2]
    at = t.iters.index(worst)
    lo = max(0, min(at - window // 2, len(t.iters) - window))
    return worst, t.iters[lo:lo + window]


def interleave_gaps(t, shown):
    """The gaps of the window where no rank of the config ran: between two shown iterations,
    from the last rank's end of one to the first rank's start of the next, where it is
    longer than the longest of the window's iterations (the pause between two iterations is
    a barrier's; a longer one is another config's round, measured side by side). (start,
    end) pairs in the trace's microseconds."""
    def end(i):
        e = [sum(t.spans[(r, i)][p]) for r in t.ranks for p in ("compute", "wait", "comm")
             if t.has(r, i, p)]
        return max(e) if e else None

    def start(i):
        s = [t.spans[(r, i)]["compute"][0] for r in t.ranks if t.has(r, i, "compute")]
        return min(s) if s else None
    spans = [(start(i), end(i)) for i in shown]
    longest = max([e - s for s, e in spans if s is not None and e is not None] or [0])
    gaps = []
    for (_, e), (s, _) in zip(spans, spans[1:]):
        if e is not None and s is not None and longest > 0 and s - e > longest:
            gaps.append((e, s))
    return gaps


def plot_gantt(c, t, outdir, window, made, why=""):
    if not t.iters or not t.ranks:
        return None
    worst, shown = gantt_window(t, window)
    starts = [t.spans[(r, shown[0])]["compute"][0] for r in t.ranks
              if t.has(r, shown[0], "compute")]
    if not starts:
        return None
    t0 = min(starts)
    ends = [sum(t.spans[(r, i)][p]) for r in t.ranks for i in shown for p in ("compute", "wait",
                                                                              "comm")
            if t.has(r, i, p)]
    unit, f = time_unit(max(ends) - t0)  # the window's span: us for a comm-only run
    fig, ax = plt.subplots(figsize=(11, inches(len(t.ranks), 0.45, 1.5)))
    gantt = {}
    for row, r in enumerate(t.ranks):
        for phase in ("compute", "wait", "comm"):
            bars = [((t.spans[(r, i)][phase][0] - t0) / f, t.spans[(r, i)][phase][1] / f)
                    for i in shown if t.has(r, i, phase)]
            ax.broken_barh(bars, (row - 0.4, 0.8), color=COLORS[phase])
            gantt.setdefault(t.names[r][1], {})[phase + "_us"] = [b[1] * f for b in bars]
    # the other configs of its interleaved set ran in the gaps: marked, not left unexplained
    gaps = interleave_gaps(t, shown) if (c.get("interleave_rounds") or 0) > 0 else []
    for g0, g1 in gaps:
        ax.axvspan((g0 - t0) / f, (g1 - t0) / f, facecolor="0.92", edgecolor="0.6",
                   hatch="//", linewidth=0)
    ax.set_yticks(range(len(t.ranks)))
    ax.set_yticklabels([t.label(r) for r in t.ranks], fontsize=8)
    ax.invert_yaxis()
    ax.set(xlabel="%s from iteration %d" % (unit, shown[0]),
           title="%s: config %d, tp %d %s %s %s, iterations %d-%d (slowest step: %d)" % (
               clean(why or "config %d" % c["id"], 80).capitalize(), c["id"], c["tp"],
               c["split"], c["policy"], tr.shape_label(c), shown[0], shown[-1], worst))
    # beside the plot, not over rank 0's bars
    handles = [Patch(color=COLORS[p], label=p) for p in ("compute", "wait", "comm")]
    if gaps:
        handles.append(Patch(facecolor="0.92", edgecolor="0.6", hatch="//",
                             label="other configs, run\nin its gaps (interleaved)"))
    ax.legend(handles=handles, fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    save(fig, outdir, "gantt", made)
    return {"config": c["id"], "why": why, "window": shown, "slowest_iter": worst,
            "ranks": [t.names[r][1] for r in t.ranks], "gantt": gantt,
            "interleaved_us": [[g0 - t0, g1 - t0] for g0, g1 in gaps]}


ARRIVAL_FLOOR_US = 1.0  # offsets below this are clock jitter of the marks, drawn as 0


def arrival_offsets(t, tp):
    """Each rank's arrival (compute end) minus its TP group's median arrival, per kept
    iteration, in % of that iteration's step as the record wrote it (NaN where missing);
    an offset under ARRIVAL_FLOOR_US is 0 (sub-us jitter would light up comm-only runs,
    whose steps are microseconds)."""
    steps = t.info.get("steps_us") if isinstance(t.info.get("steps_us"), list) else []
    step_of = dict(zip(t.iters, steps)) if len(steps) == len(t.iters) else {}
    rows = []
    for r in t.ranks:
        row = []
        for i in t.iters:
            grp = sorted(sum(t.spans[(q, i)]["compute"]) for q in t.ranks
                         if q // tp == r // tp and t.has(q, i, "compute"))
            step = step_of.get(i)
            if not t.has(r, i, "compute") or not grp or not finite(step) or step <= 0:
                row.append(float("nan"))
                continue
            n = len(grp)
            med = grp[n // 2] if n % 2 else (grp[n // 2 - 1] + grp[n // 2]) / 2
            off = sum(t.spans[(r, i)]["compute"]) - med
            row.append(0.0 if abs(off) < ARRIVAL_FLOOR_US else 100.0 * off / step)
        rows.append(row)
    return rows


def arrival_scale(rows):
    """The heat map's colour limit: the 99th percentile of |offset| (at least 2 %), so that a
    rank 7 % late is not white on a fixed +-50 % scale."""
    v = sorted(abs(x) for row in rows for x in row if finite(x))
    if not v:
        return 50.0
    return max(2.0, v[min(len(v) - 1, int(0.99 * len(v)))])


def plot_arrivals(c, t, outdir, made, why=""):
    if not t.iters or not t.ranks:
        return None
    tp = t.info.get("tp") if isinstance(t.info.get("tp"), int) and t.info["tp"] > 0 else c["tp"]
    rows = arrival_offsets(t, tp)
    fig, ax = plt.subplots(figsize=(11, inches(len(t.ranks), 0.35, 1.8)))
    lim = arrival_scale(rows)
    im = ax.imshow(rows, aspect="auto", cmap="coolwarm", interpolation="nearest", vmin=-lim,
                   vmax=lim)
    fig.colorbar(im, ax=ax, label="arrival - group median\n(% of the step)")
    ax.set_yticks(range(len(t.ranks)))
    ax.set_yticklabels([t.label(r) for r in t.ranks], fontsize=8)
    step_x = max(1, len(t.iters) // 20)  # label the iterations themselves (a --trace-iters
    ax.set_xticks(range(0, len(t.iters), step_x))  # window keeps some, not all)
    ax.set_xticklabels([str(i) for i in t.iters[::step_x]], fontsize=8)
    ax.set(xlabel="measured iteration%s" % (
        "" if len(t.iters) == t.info.get("iters", len(t.iters)) else " (those the trace kept)"),
        title="Arrival offsets, %s: config %d, tp %d %s %s" % (
            clean(why or "config %d" % c["id"], 80), c["id"], c["tp"], c["split"], c["policy"]))
    save(fig, outdir, "arrivals", made)
    return {"config": c["id"], "iters": t.iters, "ranks": [t.names[r][1] for r in t.ranks],
            "offset_pct": rows, "scale_pct": lim}
