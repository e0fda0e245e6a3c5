#!/usr/bin/env python3
"""tpbal-report: turn a tpbal result directory into plots and an index.html.

usage: tpbal-report [options] DIR

Reads DIR/results.jsonl and the traces (trace-NNN.json) and writes into DIR/report/
(or --out) a PNG and an SVG of each plot, plots.json (every number plotted, for
checking) and index.html, which needs no network:

  step.png         median step time and efficiency E against the TP degree, per shape,
                   split and policy
  weighted.png     even against weighted per config: measured speed-up beside predicted
  decomposition.png  T(N) = T_comp/N + T_comm + T_idle as stacked bars per TP degree
  comm.png         busbw and transfer time against message size, with the fitted
                   alpha-beta curve T = L + V/B (where two or more sizes were measured)
  gantt.png        a window of iterations of one config: compute / wait / comm per rank,
                   ranks grouped by node
  lateness.png     rank x iteration heat map of each rank's arrival after the first of
                   its group: periodic stalls are columns, a slow node is a band of rows

options:
  --out DIR       where to write (default DIR/report)
  --config ID     the config of the Gantt chart and heat map (default: the one with the
                  largest what-if slowdown among those with a trace and TP > 1)
  --window N      iterations in the Gantt chart (default 8, centred on the slowest step)
  -h, --help      this text

exit status: 0 written, 2 bad input (unreadable or not a tpbal result, no config).
"""
import html
import json
import math
import os
import sys

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch
except ImportError:  # pragma: no cover - depends on the machine
    plt = None

COLORS = {"compute": "#4c72b0", "wait": "#dd8452", "comm": "#55a868", "idle": "#c44e52"}


class BadInput(Exception):
    """Bad input: one line, exit code 2."""


def finite(v):
    return isinstance(v, (int, float)) and math.isfinite(v)


def load(d):
    path = os.path.join(d, "results.jsonl")
    try:
        lines = open(path).read().splitlines()
    except OSError as e:
        raise BadInput("cannot read %s: %s" % (path, e.strerror or e))
    recs = []
    for n, line in enumerate(lines, 1):
        if line.strip():
            try:
                recs.append(json.loads(line))
            except ValueError:
                raise BadInput("%s line %d is not JSON: is it a tpbal result?" % (path, n))
    run = [r for r in recs if r.get("type") == "run"]
    cfgs = [r for r in recs if r.get("type") == "config"]
    summ = [r for r in recs if r.get("type") == "summary"]
    if not run:
        raise BadInput("%s has no run record: is it a tpbal result?" % path)
    if not cfgs:
        raise BadInput("%s has no config: nothing to report (status %s)" % (
            path, run[0].get("status")))
    return run[0], cfgs, (summ[0] if summ else {})


def shape_label(c):
    if c.get("comm_only") == "yes":
        return "%s %dB" % (c.get("collective"), c.get("comm_bytes"))
    return "%dx%dx%d" % (c["m"], c["n"], c["k"])


def save(fig, outdir, name, made):
    for ext in ("png", "svg"):
        fig.savefig(os.path.join(outdir, "%s.%s" % (name, ext)), dpi=110, bbox_inches="tight")
    plt.close(fig)
    made.append(name)


# ---- the plots; each returns the numbers it drew (plots.json) ----

def plot_step(cfgs, outdir, made):
    series = {}
    for c in cfgs:
        if c.get("comm_only") == "yes":
            continue
        key = "%s %s %s" % (shape_label(c), c["split"], c["policy"])
        series.setdefault(key, []).append(c)
    if not series:
        return None
    data = {}
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    for key, cs in sorted(series.items()):
        cs = sorted(cs, key=lambda c: c["tp"])
        tps = [c["tp"] for c in cs]
        steps = [c["step_us"]["median"] for c in cs]
        effs = [c["e"] for c in cs]
        ax1.plot(tps, steps, marker="o", label=key)
        ax2.plot([t for t, e in zip(tps, effs) if finite(e)], [e for e in effs if finite(e)],
                 marker="o", label=key)
        data[key] = {"tp": tps, "step_us": steps, "e": effs}
    ax1.set(xlabel="TP degree", ylabel="median step (us)", title="Step time")
    ax2.set(xlabel="TP degree", ylabel="E = T_1 / (N T_step)", title="Parallel efficiency",
            ylim=(0, 1.1))
    all_tp = sorted({t for v in data.values() for t in v["tp"]})
    for ax in (ax1, ax2):
        ax.set_xscale("log", base=2)
        ax.set_xticks(all_tp)
        ax.set_xticklabels([str(t) for t in all_tp])
        ax.minorticks_off()
        ax.grid(alpha=0.3)
    ax1.legend(fontsize=7)
    save(fig, outdir, "step", made)
    return data


def plot_weighted(cfgs, outdir, made):
    rows = [c for c in cfgs if c["policy"] == "weighted" and finite(c.get("speedup"))]
    if not rows:
        return None
    labels = ["tp%d %s %s" % (c["tp"], c["split"], shape_label(c)) for c in rows]
    meas = [c["speedup"] for c in rows]
    pred = [c["predicted_speedup"] if finite(c.get("predicted_speedup")) else float("nan")
            for c in rows]
    fig, ax = plt.subplots(figsize=(max(6, 1.1 * len(rows) + 2), 4))
    x = range(len(rows))
    ax.bar([i - 0.2 for i in x], meas, 0.4, label="measured T_even / T_weighted",
           color=COLORS["compute"])
    ax.bar([i + 0.2 for i in x], pred, 0.4, label="predicted mean(s) / min(s)",
           color=COLORS["wait"])
    ax.axhline(1.0, color="black", lw=0.8)
    ax.set_xticks(list(x))
    ax.set_xticklabels(labels, rotation=30, ha="right", fontsize=8)
    ax.set(ylabel="speed-up of weighted over even", title="Even vs weighted")
    ax.legend(fontsize=8)
    save(fig, outdir, "weighted", made)
    return {"labels": labels, "measured": meas, "predicted": pred}


def plot_decomposition(summ, outdir, made):
    series = {}
    for d in summ.get("decomposition", []):
        key = "%s %s %dx%dx%d" % (d["split"], d["policy"], d["m"], d["n"], d["k"])
        if all(x["tp"] != d["tp"] for x in series.get(key, [])):
            series.setdefault(key, []).append(d)
    if not series:
        return None
    keys = sorted(series)[:6]
    fig, axes = plt.subplots(1, len(keys), figsize=(4 * len(keys), 4), squeeze=False)
    data = {}
    for ax, key in zip(axes[0], keys):
        ds = sorted(series[key], key=lambda d: d["tp"])
        tps = [str(d["tp"]) for d in ds]
        comp = [d["comp_us"] for d in ds]
        comm = [d["comm_us"] for d in ds]
        idle = [d["idle_us"] for d in ds]
        ax.bar(tps, comp, color=COLORS["compute"], label="T_comp/N")
        ax.bar(tps, comm, bottom=comp, color=COLORS["comm"], label="T_comm")
        ax.bar(tps, idle, bottom=[a + b for a, b in zip(comp, comm)], color=COLORS["idle"],
               label="T_idle")
        ax.set(xlabel="TP degree N", ylabel="us", title=key)
        data[key] = {"tp": [d["tp"] for d in ds], "comp_us": comp, "comm_us": comm,
                     "idle_us": idle}
    axes[0][0].legend(fontsize=8)
    fig.suptitle("T(N) = T_comp/N + T_comm(N) + T_idle(N)")
    save(fig, outdir, "decomposition", made)
    return data


def plot_comm(cfgs, summ, outdir, made):
    fits = summ.get("comm_model", [])
    series = {}
    for c in cfgs:
        if c["tp"] < 2 or not finite(c.get("xfer_us")) or not finite(c.get("comm_bytes")):
            continue
        key = (c["collective"], c["tp"], c["policy"], c["placement"], c.get("comm_only", "no"))
        series.setdefault(key, []).append(c)
    series = {k: v for k, v in series.items() if len({c["comm_bytes"] for c in v}) >= 2}
    if not series:
        return None
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    data = {}
    for key, cs in sorted(series.items()):
        cs = sorted(cs, key=lambda c: c["comm_bytes"])
        label = "%s tp%d %s%s" % (key[0], key[1], key[2],
                                  " comm-only" if key[4] == "yes" else "")
        v = [c["comm_bytes"] for c in cs]
        t = [c["xfer_us"] for c in cs]
        bw = [c["busbw_gbs"] for c in cs]
        line = ax1.plot(v, t, "o", label=label)[0]
        ax2.plot(v, bw, "o-", color=line.get_color(), label=label)
        fit = [f for f in fits if (f["collective"], f["tp"], f["policy"], f["placement"],
                                   f.get("comm_only", "no")) == key]
        entry = {"bytes": v, "xfer_us": t, "busbw_gbs": bw}
        if fit:
            f = fit[0]
            lo, hi = min(v), max(v)
            xs = [lo * (hi / lo) ** (i / 60.0) for i in range(61)]
            ys = [f["latency_us"] + x / (f["bandwidth_gbs"] * 1e3) for x in xs]
            xs, ys = [x for x, y in zip(xs, ys) if y > 0], [y for y in ys if y > 0]  # log axes
            ax1.plot(xs, ys, "-", color=line.get_color(), lw=1,
                     label="fit L %.1f us, B %.2f GB/s" % (f["latency_us"], f["bandwidth_gbs"]))
            entry["fit"] = {"latency_us": f["latency_us"], "bandwidth_gbs": f["bandwidth_gbs"],
                            "r2": f["r2"]}
        data[label] = entry
    ax1.set(xscale="log", yscale="log", xlabel="message (bytes)", ylabel="transfer xfer_us (us)",
            title="Time vs size, T = L + V/B")
    ax2.set(xscale="log", xlabel="message (bytes)", ylabel="busbw (GB/s)",
            title="Bus bandwidth (nccl-tests)")
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=7)
    save(fig, outdir, "comm", made)
    return data


def read_trace(d, cid):
    path = os.path.join(d, "trace-%03d.json" % cid)
    try:
        tr = json.load(open(path))
    except (OSError, ValueError) as e:
        raise BadInput("cannot read the trace %s: %s" % (path, e))
    info = tr.get("otherData", {})
    hosts, names, spans = {}, {}, {}
    for e in tr.get("traceEvents", []):
        if e.get("ph") == "M" and e.get("name") == "process_name":
            hosts[e["pid"]] = e["args"]["name"]
        elif e.get("ph") == "M" and e.get("name") == "thread_name":
            names[e["tid"]] = (e["pid"], e["args"]["name"])
        elif e.get("ph") == "X":
            spans.setdefault((e["tid"], e["args"]["iter"]), {})[e["name"]] = (e["ts"], e["dur"])
    return info, hosts, names, spans


def pick_config(cfgs, d, want):
    if want is not None:
        c = [c for c in cfgs if c["id"] == want]
        if not c:
            raise BadInput("--config %d: no such config (ids 0..%d)" % (want, len(cfgs) - 1))
        return c[0]
    have = [c for c in cfgs if c["tp"] > 1 and
            os.path.exists(os.path.join(d, "trace-%03d.json" % c["id"]))]
    if not have:
        return None
    return max(have, key=lambda c: c["slowdown"] if finite(c.get("slowdown")) else 0.0)


def plot_timeline(d, c, outdir, window, made):
    info, hosts, names, spans = read_trace(d, c["id"])
    tp = info.get("tp", c["tp"])
    ranks = sorted(names, key=lambda t: (names[t][0], t))  # grouped by node (pid)
    iters = sorted({i for (_, i) in spans})
    if not iters or not ranks:
        return None
    # the step of an iteration: last comm end - first compute start over all ranks
    def step(i):
        s = [spans[(r, i)] for r in ranks if (r, i) in spans]
        return max(x["comm"][0] + x["comm"][1] for x in s) - min(x["compute"][0] for x in s)

    worst = max(iters, key=step)
    lo = max(0, min(worst - window // 2, len(iters) - window))
    shown = iters[lo:lo + window]
    fig, ax = plt.subplots(figsize=(11, 0.45 * len(ranks) + 1.5))
    t0 = min(spans[(r, shown[0])]["compute"][0] for r in ranks if (r, shown[0]) in spans)
    gantt = {}
    for row, r in enumerate(ranks):
        for phase in ("compute", "wait", "comm"):
            bars = [((spans[(r, i)][phase][0] - t0) / 1e3, spans[(r, i)][phase][1] / 1e3)
                    for i in shown if (r, i) in spans]
            ax.broken_barh(bars, (row - 0.4, 0.8), color=COLORS[phase])
            gantt.setdefault(names[r][1], {})[phase + "_us"] = [b[1] * 1e3 for b in bars]
    ax.set_yticks(range(len(ranks)))
    ax.set_yticklabels(["%s (%s)" % (names[r][1], hosts.get(names[r][0], "?")) for r in ranks],
                       fontsize=8)
    ax.invert_yaxis()
    ax.set(xlabel="ms from iteration %d" % shown[0],
           title="Config %d: tp %d %s %s %s, iterations %d-%d (slowest step: %d)" % (
               c["id"], tp, c["split"], c["policy"], shape_label(c), shown[0], shown[-1],
               worst))
    ax.legend(handles=[Patch(color=COLORS[p], label=p) for p in ("compute", "wait", "comm")],
              fontsize=8, loc="upper right")
    save(fig, outdir, "gantt", made)
    # lateness: arrival (compute end) minus the first arrival of the rank's group
    late = []
    for r in ranks:
        row = []
        for i in iters:
            grp = [q for q in ranks if q // tp == r // tp and (q, i) in spans]
            if (r, i) not in spans or not grp:
                row.append(float("nan"))
                continue
            arrive = lambda q: spans[(q, i)]["compute"][0] + spans[(q, i)]["compute"][1]
            row.append(arrive(r) - min(arrive(q) for q in grp))
        late.append(row)
    fig, ax = plt.subplots(figsize=(11, 0.35 * len(ranks) + 1.8))
    im = ax.imshow(late, aspect="auto", cmap="magma", interpolation="nearest")
    fig.colorbar(im, ax=ax, label="us after the first arrival in the group")
    ax.set_yticks(range(len(ranks)))
    ax.set_yticklabels(["%s (%s)" % (names[r][1], hosts.get(names[r][0], "?")) for r in ranks],
                       fontsize=8)
    step_x = max(1, len(iters) // 20)  # label the iterations themselves (a --trace-iters
    ax.set_xticks(range(0, len(iters), step_x))  # window keeps some, not all)
    ax.set_xticklabels([str(i) for i in iters[::step_x]], fontsize=8)
    ax.set(xlabel="measured iteration%s" % ("" if len(iters) == info.get("iters", len(iters))
                                            else " (those the trace kept)"),
           title="Lateness, config %d" % c["id"])
    save(fig, outdir, "lateness", made)
    return {"config": c["id"], "window": shown, "slowest_iter": worst,
            "ranks": [names[r][1] for r in ranks], "gantt": gantt, "lateness_us": late}


# ---- the page ----

def table(head, rows):
    out = ["<table><tr>" + "".join("<th>%s</th>" % html.escape(str(h)) for h in head) + "</tr>"]
    for r in rows:
        out.append("<tr>" + "".join("<td>%s</td>" % html.escape(fmt(x)) for x in r) + "</tr>")
    return "\n".join(out) + "</table>"


def fmt(x):
    if x is None:
        return "-"
    if isinstance(x, float):
        return "%.4g" % x if math.isfinite(x) else "-"
    return str(x)


def page(run, cfgs, summ, made, captions, tl):
    clock = run.get("clock", {})
    worst = max([abs(s["offset_us"]) + s["rtt_us"] / 2 for s in clock.get("end", [])] or [0])
    meta = [("command line", run.get("command_line")), ("status", run.get("status")),
            ("backend", run.get("backend")), ("world size", run.get("world_size")),
            ("hosts", run.get("nhosts")), ("dtype", run.get("dtype")),
            ("iterations", "%s + %s warm-up" % (run.get("iters"), run.get("warmup"))),
            ("MPI", run.get("mpi_version")), ("backend versions", run.get("backend_versions")),
            ("Slurm job", (run.get("slurm") or {}).get("job_id", "-")),
            ("configs", "%s measured, %s skipped" % (run.get("configs"), run.get("skipped")))]
    parts = ["<!doctype html><html><head><meta charset='utf-8'><title>tpbal report</title>",
             "<style>body{font-family:sans-serif;margin:2em;max-width:1300px}"
             "table{border-collapse:collapse;font-size:12px;margin:1em 0}"
             "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}"
             "th{background:#eee}img{max-width:100%;border:1px solid #ddd}"
             "figure{margin:1.5em 0}</style></head><body>",
             "<h1>tpbal report</h1>", "<p id='imgcheck'>images: checking</p>",
             "<h2>Run</h2>", table(["", ""], meta),
             "<h2>Clock synchronisation</h2>",
             "<p>Worst |offset| + RTT/2 at the end: %.1f us (%s).</p>" % (
                 worst, html.escape(clock.get("method", ""))),
             table(["rank", "offset start (us)", "rtt start", "offset end", "rtt end"],
                   [(i, s["offset_us"], s["rtt_us"], e["offset_us"], e["rtt_us"])
                    for i, (s, e) in enumerate(zip(clock.get("start", []), clock.get("end", [])))])]
    parts.append("<h2>Plots</h2>")
    for name in made:
        parts.append("<figure><img src='%s.png' alt='%s'><figcaption>%s "
                     "(<a href='%s.svg'>SVG</a>)</figcaption></figure>" % (
                         name, name, html.escape(captions[name]), name))
    missing = [n for n in captions if n not in made]
    if missing:
        parts.append("<p>Not drawn (no data in these results): %s.</p>" % ", ".join(missing))
    parts.append("<h2>Configs</h2>")
    head = ["id", "tp", "split", "policy", "shape", "dtype", "step us", "p95 us", "xfer us", "LB",
            "E", "TFLOP/s", "busbw GB/s", "S", "straggler", "speed-up", "check"]
    parts.append(table(head, [(c["id"], c["tp"], c["split"], c["policy"], shape_label(c),
                               c["dtype"], c["step_us"]["median"], c["step_us"]["p95"],
                               c.get("xfer_us"), c.get("lb"), c.get("e"), c.get("tflops"),
                               c.get("busbw_gbs"), c.get("slowdown"), c.get("straggler_rank"),
                               c.get("speedup"), c.get("check")) for c in cfgs]))
    if summ.get("comm_model"):
        parts.append("<h2>Communication model T = L + V/B</h2>")
        parts.append(table(["collective", "tp", "policy", "placement", "comm-only", "L us",
                            "B GB/s", "R2", "points"],
                           [(f["collective"], f["tp"], f["policy"], f["placement"],
                             f.get("comm_only"), f["latency_us"], f["bandwidth_gbs"], f["r2"],
                             f["points"]) for f in summ["comm_model"]]))
    if tl:
        parts.append("<p>Gantt chart and heat map: config %d, iterations %s.</p>" % (
            tl["config"], tl["window"]))
    parts.append("<script>window.addEventListener('load',function(){var im=document.images,"
                 "ok=0,bad=[];for(var i=0;i<im.length;i++){if(im[i].complete&&"
                 "im[i].naturalWidth>0)ok++;else bad.push(im[i].getAttribute('src'));}"
                 "document.getElementById('imgcheck').textContent='images: '+ok+' of '+"
                 "im.length+' loaded'+(bad.length?', missing: '+bad.join(' '):'');});</script>")
    parts.append("</body></html>")
    return "\n".join(parts)


CAPTIONS = {
    "step": "Median step time and efficiency E against the TP degree, per shape, split and "
            "policy.",
    "weighted": "Even against weighted: the measured speed-up T_even / T_weighted beside the "
                "predicted mean(s)/min(s).",
    "decomposition": "T(N) = T_comp/N + T_comm(N) + T_idle(N) per TP degree (the summary's "
                     "decomposition).",
    "comm": "Transfer time and bus bandwidth against message size, with the fitted "
            "T = L + V/B.",
    "gantt": "A window of iterations around the slowest step: compute, wait and comm per "
             "rank, grouped by node.",
    "lateness": "Each rank's arrival after the first of its TP group, per measured iteration.",
}


def no_nan(x):
    """NaN and infinities as null: plots.json stays strict JSON."""
    if isinstance(x, dict):
        return {k: no_nan(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [no_nan(v) for v in x]
    return x if not isinstance(x, float) or math.isfinite(x) else None


def parse_args(argv):
    o = {"out": None, "config": None, "window": 8, "dir": None}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("-h", "--help"):
            print(__doc__)
            sys.exit(0)
        if a in ("--out", "--config", "--window"):
            if i + 1 >= len(argv):
                raise BadInput("%s needs a value: see tpbal-report --help" % a)
            v = argv[i + 1]
            i += 1
            if a == "--out":
                o["out"] = v
            else:
                try:
                    o[a[2:]] = int(v)
                except ValueError:
                    raise BadInput("%s '%s': expected an integer" % (a, v))
                if o[a[2:]] < (1 if a == "--window" else 0):
                    raise BadInput("%s '%s': out of range" % (a, v))
        elif a.startswith("-"):
            raise BadInput("unknown option '%s': see tpbal-report --help" % a)
        elif o["dir"] is None:
            o["dir"] = a
        else:
            raise BadInput("one result directory expected: see tpbal-report --help")
        i += 1
    if o["dir"] is None:
        raise BadInput("no result directory given: tpbal-report DIR")
    return o


def main(argv):
    o = parse_args(argv)
    if plt is None:
        raise BadInput("matplotlib is missing for %s: install it (Debian/Ubuntu: apt-get install "
                       "python3-matplotlib)" % sys.executable)
    run, cfgs, summ = load(o["dir"])
    outdir = o["out"] or os.path.join(o["dir"], "report")
    try:
        os.makedirs(outdir, exist_ok=True)
    except OSError as e:
        raise BadInput("cannot create %s: %s" % (outdir, e.strerror or e))
    made, data = [], {}
    data["step"] = plot_step(cfgs, outdir, made)
    data["weighted"] = plot_weighted(cfgs, outdir, made)
    data["decomposition"] = plot_decomposition(summ, outdir, made)
    data["comm"] = plot_comm(cfgs, summ, outdir, made)
    c = pick_config(cfgs, o["dir"], o["config"])
    tl = plot_timeline(o["dir"], c, outdir, o["window"], made) if c else None
    data["timeline"] = tl
    with open(os.path.join(outdir, "plots.json"), "w") as fh:
        json.dump(no_nan(data), fh, indent=1, allow_nan=False)
    with open(os.path.join(outdir, "index.html"), "w") as fh:
        fh.write(page(run, cfgs, summ, made, CAPTIONS, tl))
    print("tpbal-report: %d plots (%s) and index.html in %s" % (
        len(made), ", ".join(made), outdir))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except BadInput as e:
        print("tpbal-report: error: %s" % e, file=sys.stderr)
        sys.exit(2)
