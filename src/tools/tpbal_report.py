#!/usr/bin/env python3
"""tpbal-report: turn a tpbal result directory into plots and an index.html.

Reads DIR/results.jsonl and the traces (trace-NNN.json) and writes into DIR/report/
(or --out) a PNG and an SVG of each plot, plots.json (every number plotted, for
checking) and index.html, which needs no network. A --repeat run's DIR: the answer over
its passes (repeat.json) heads the page, the plots are its last pass's:

  step.png           median step time and efficiency E against the TP degree, per
                     shape, split and policy (solid: even, dashed: the others)
  weighted.png       even against weighted per config: measured speed-up beside predicted
  decomposition.png  T(N) = T_comp/N + T_comm + T_idle as stacked bars per TP degree
  comm.png           busbw and transfer time against message size, with the fitted
                     alpha-beta curve T = L + V/B (where two or more sizes were measured)
  overlap.png        --overlap chunked: serial against overlapped time per config
  gantt.png          a window of iterations of one config around its slowest step:
                     compute / wait / comm per rank, ranks grouped by node (the config
                     the answer talks about: its straggler's, else its shortest step)
  arrivals.png       rank x iteration heat map of that config's arrivals after the TP
                     group's median, in % of the step (its scale from the data):
                     periodic stalls are columns, a slow node is a band of rows
  ranks.png          each rank's compute, wait and comm in the even config and its
                     weighted twin
  steps.png          the distribution of step times of the configs of the answer
  gantt_pair.png     even above weighted on one time scale
  plan.png           tpbal-plan's predictions, where the folder holds a plan.json
Plots without data in the results are not drawn; the page lists them.
"""
import html
import math
import os
import sys

import tpbal_results as tr
import tpbal_schema as ts
import tpbal_repeat as trp  # after tpbal_results: a built tool sets its path there
import tpbal_text as tt
from tpbal_results import BadInput, clean

EPILOG = "exit status: 0 written, 2 bad input (unreadable or not a tpbal result, no config, " \
         "an unwritable output folder)."


def pick_config(res, want):
    """The config of the Gantt chart and the heat map, and why, in words: --config; else
    the one the answer talks about (the TP degree of a straggler it names, that degree's
    largest what-if slowdown; else its shortest-step config); else the largest what-if
    slowdown among those with a trace and TP > 1. (None, "") if there is none."""
    cfgs = res.configs
    if want is not None:
        c = [c for c in cfgs if c["id"] == want]
        if not c:
            raise BadInput("--config %d: no such config (ids %s)" % (
                want, ", ".join(str(c["id"]) for c in cfgs[:20]) or "none"))
        return c[0], "config %d (--config)" % want
    have = [c for c in cfgs if c["tp"] > 1 and os.path.exists(res.trace_path(c["id"]))
            and not c.get("chunks")]
    if not have:
        return None, ""
    def slowest(cs):
        return max(cs, key=lambda c: tr.num(c.get("slowdown")) or 0.0)

    answer = tr.records(res.summary.get("answer"))
    for a in answer:
        tp = a.get("tp")
        if a.get("kind") == "stragglers" and isinstance(a.get("straggler_rank"), int):
            at = [c for c in have if c["tp"] == tp]
            if at:
                return slowest(at), "the straggler the answer names (rank %d at TP %s)" % (
                    a["straggler_rank"], tp)
    for a in answer:
        if a.get("kind") == "use" and a.get("question") == "latency":
            at = [c for c in have if all(c.get(k) == a.get(k) for k in (
                "tp", "m", "n", "k", "split", "policy", "placement")) and
                ts.variant(c) == ts.variant(a)]
            if at:
                return at[0], "the shortest step the answer recommends"
    return slowest(have), "the largest what-if slowdown"


def table(head, rows):
    out = ["<table><tr>" + "".join("<th>%s</th>" % html.escape(str(h)) for h in head) + "</tr>"]
    for r in rows:
        out.append("<tr>" + "".join("<td>%s</td>" % html.escape(fmt(x)) for x in r) + "</tr>")
    return "\n".join(out) + "</table>"


def fmt(x):
    """A cell: '-' for nothing, plain numbers without exponents (48,310 not 4.831e+04)."""
    if x is None:
        return "-"
    if isinstance(x, float):
        if not math.isfinite(x):
            return "-"
        if abs(x) >= 1e4:
            return "{:,.0f}".format(x)
        if x != 0 and abs(x) < 1e-3:
            return "%.2g" % x
        return "%.4g" % x
    return clean(x, 400)


def run_table(run):
    return [("command line", run.get("command_line")), ("status", run.get("status")),
            ("backend", run.get("backend")), ("world size", run.get("world_size")),
            ("hosts", run.get("nhosts")), ("dtype", run.get("dtype")),
            ("iterations", "%s + %s warm-up" % (run.get("iters"), run.get("warmup"))),
            ("MPI", run.get("mpi_version")), ("backend versions", run.get("backend_versions")),
            ("Slurm job", (run.get("slurm") or {}).get("job_id", "-")
             if isinstance(run.get("slurm"), dict) else "-"),
            ("configs", "%s measured, %s skipped" % (run.get("configs"), run.get("skipped")))]


def clock_part(run):
    clock = run.get("clock") if isinstance(run.get("clock"), dict) else {}
    start, end = tr.records(clock.get("start")), tr.records(clock.get("end"))
    worst = max([abs(tr.num(s.get("offset_us")) or 0) + (tr.num(s.get("rtt_us")) or 0) / 2
                 for s in end] or [0])
    rows = [(i, s.get("offset_us"), s.get("rtt_us"), e.get("offset_us"), e.get("rtt_us"))
            for i, (s, e) in enumerate(zip(start, end))]
    return ["<h2>Clock synchronisation</h2>",
            "<p>Worst |offset| + RTT/2 at the end: %.1f us (%s).</p>" % (
                worst, html.escape(clean(clock.get("method", "")))),
            table(["rank", "offset start (us)", "rtt start", "offset end", "rtt end"], rows)]


def straggler_cell(c):
    """"1: 97 %" for a rank last beyond noise (in more than (1 + 1/tp)/2 of the
    iterations, by >= 5 % of the step: the table's rule), "(1: 55 %) by chance" else."""
    s = c.get("straggler") if isinstance(c.get("straggler"), dict) else {}
    r, frac = s.get("rank"), tr.num(s.get("last_frac"))
    if not isinstance(r, int) or r < 0 or frac is None:
        return "-"
    late, step = tr.num(s.get("lateness_us")), tr.num(c["step_us"].get("median"))
    clear = frac > (1 + 1 / max(c["tp"], 1)) / 2 and late is not None and step and \
        late >= 0.05 * step
    return ("%d: %.0f %%" if clear else "(%d: %.0f %%) by chance") % (r, 100 * frac)


def configs_part(res):
    us = tr.us_text
    head = ["id", "tp", "split", "policy", "shape", "dtype", "step", "p95", "xfer",
            "LB", "E", "TFLOP/s", "busbw GB/s", "what-if S", "straggler (rank: % last)",
            "late by", "speed-up (x)", "check"]
    rows = [(c["id"], c["tp"], c["split"], c["policy"], tr.shape_label(c), c["dtype"],
             us(c["step_us"]["median"]), us(c["step_us"].get("p95")), us(c.get("xfer_us")),
             c.get("lb"), c.get("e"), c.get("tflops"), c.get("busbw_gbs"), c.get("slowdown"),
             straggler_cell(c), us(tr.num((c.get("straggler") or {}).get("lateness_us"))),
             c.get("speedup"), c.get("check")) for c in res.configs]
    parts = ["<h2>Configs</h2>", table(head, rows)]
    fits = tr.records(res.summary.get("comm_model"))
    if fits:
        import tpbal_headline as hl
        parts.append("<h2>Communication model T = L + V/B</h2>")
        parts.append(table(["collective", "tp", "policy", "placement", "comm-only", "L (us)",
                            "L 95 %", "B (GB/s)", "B 95 %", "R2", "points", "fit",
                            "avg busbw (GB/s)"],
                           [(f.get("collective"), f.get("tp"), f.get("policy"),
                             f.get("placement"), f.get("comm_only"), f.get("latency_us"),
                             hl.ival(f.get("latency_ci_us"), "%.1f").strip() or "-",
                             f.get("bandwidth_gbs"),
                             hl.ival(f.get("bandwidth_ci_gbs"), "%.3g").strip() or "-",
                             f.get("r2"), f.get("points"), f.get("quality"),
                             f.get("avg_busbw_gbs")) for f in fits]))
    return parts


STYLE = ("<style>body{font-family:sans-serif;margin:2em;max-width:1300px}"
         "table{border-collapse:collapse;font-size:12px;margin:1em 0}"
         "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}"
         "th{background:#eee}img{max-width:100%;border:1px solid #ddd}"
         "figure{margin:1.5em 0}.headline{border:2px solid #4c72b0;background:#f3f6fb;"
         "padding:0.6em 1.2em;margin:1em 0}.headline li{margin:0.25em 0}"
         ".use{font-weight:bold;font-size:15px}.warning{color:#a61b1b;font-weight:bold}"
         ".note{color:#555}</style>")


def headline_part(res):
    import tpbal_headline as hl
    items = hl.headline(res)
    if not items:
        return []
    lis = ["<li class='%s'>%s%s</li>" % (k, "WARNING: " if k == "warning" else "",
                                         html.escape(t)) for k, t in items]
    return ["<div class='headline'><h2>The answer</h2><p>The words are defined at the end: "
            "<a href='#words'>Words</a>.</p><ul>"] + lis + ["</ul></div>"]


def page(res, made, captions, tl, extra=()):
    parts = ["<!doctype html><html><head><meta charset='utf-8'><title>tpbal report</title>",
             STYLE, "</head><body>", "<h1>tpbal report</h1>"]
    parts += headline_part(res)
    parts += configs_part(res)  # second: the numbers the answer is made of
    parts += ["<h2>Run</h2>", table(["", ""], run_table(res.run))]
    parts += clock_part(res.run)
    parts.append("<h2>Plots</h2>")
    for name in made:
        parts.append("<figure><img src='%s.png' alt='%s'><figcaption>%s "
                     "(<a href='%s.svg'>SVG</a>)</figcaption></figure>" % (
                         name, name, html.escape(captions[name]), name))
    missing = [n for n in captions if n not in made]
    if missing:
        parts.append("<p>Not drawn (no data in these results): %s.</p>" % ", ".join(missing))
    parts += list(extra)
    if tl:
        parts.append("<p>Gantt chart and heat map: config %d, %s; iterations %s.</p>" % (
            tl["config"], html.escape(tl.get("why", "")), tl["window"]))
    import tpbal_glossary as tg
    parts += tg.html_part()  # every word the page uses, defined (doc/GLOSSARY.md)
    parts.append("</body></html>")
    return "\n".join(parts)


CAPTIONS = {
    "blocks": "tpbal --block: per TP degree and policy, the block's step as its GEMMs' "
              "phases (compute, wait, the rest: the collective), one GEMM after another, "
              "and its tokens per second per rank with the 95 % interval.",
    "plan": "tpbal-plan's cross-validation (leave-one-out up to 200 configs, 10 folds past): every "
            "config's measured step against the one "
            "predicted from models fitted without it.",
    "ranks": "Per rank, even beside weighted (the even config with the largest what-if "
             "slowdown and its twin): calibrated speed, shard, and median compute / wait / "
             "comm (ranks.csv).",
    "steps": "Step-time distributions: the fraction of iterations at most that long, from "
             "every recorded step, per shape and TP degree.",
    "gantt_pair": "Even above weighted on one time scale: a window of iterations each, "
                  "iteration starts as lines, the slowest step shaded.",
    "step": "Median step time and efficiency E against the TP degree, per shape, split and "
            "policy.",
    "weighted": "Even against weighted: the measured speed-up T_even / T_weighted with its "
                "95 % interval (the one the verdict reads) beside the one predicted from the "
                "even config's per-rank compute and the weighted shards; bars from 0.",
    "decomposition": "T(N) = T_comp/N + T_comm(N) + T_idle(N) per TP degree: per shape and "
                     "split, even beside weighted; the mean terms scaled to add up to the "
                     "median step T (marker).",
    "comm": "Transfer time and bus bandwidth against message size, with the fitted "
            "T = L + V/B where the fit means something (more than two sizes, a resolved "
            "bandwidth, not a poor fit).",
    "overlap": "--overlap chunked: the share of the communication hidden (1 - exposed / "
               "T_comm alone) and the speed-up over serial (T_serial / T_overlap, the parts "
               "timed alone in the same config) against the chunk count.",
    "gantt": "A window of iterations around the slowest step: compute, wait and comm per "
             "rank, grouped by node.",
    "arrivals": "Each rank's arrival after its TP group's median arrival, in % of the step, "
                "per measured iteration (under 1 us: 0): a straggler is red, the ranks that "
                "wait for it blue.",
}


def positive(lo):
    def parse(s):
        try:
            v = int(s)
        except ValueError:
            raise BadInput("'%s': expected an integer" % clean(s))
        if v < lo:
            raise BadInput("'%s': out of range (at least %d)" % (clean(s), lo))
        return v
    return parse


def parse_args(argv):
    p = tr.ArgumentParser("tpbal-report", __doc__, epilog=EPILOG)
    p.add_argument("dir", metavar="DIR", help="a tpbal result directory (--out of tpbal)")
    p.add_argument("--out", metavar="DIR", help="where to write (default DIR/report)")
    p.add_argument("--config", type=positive(0), metavar="ID",
                   help="the config of the Gantt chart and heat map (default: the one with the "
                        "largest what-if slowdown among those with a trace and TP > 1)")
    p.add_argument("--window", type=positive(1), default=8, metavar="N",
                   help="iterations in the Gantt chart (default 8, centred on the slowest step)")
    p.add_argument("--compare", metavar="B",
                   help="also write compare.html: the result directory B against DIR (A), "
                        "with tpbal-compare's decision per config drawn")
    p.add_argument("--tolerance", default="5%", metavar="PCT",
                   help="with --compare: the step change that counts (default 5%%)")
    p.add_argument("--history", nargs="+", metavar="FLEET",
                   help="a fleet (DIR holds tpbal --fleet's fleet.json): earlier fleets of the "
                        "same nodes, oldest first, drawn as each node's history")
    return p.parse_args(argv)


def report_dir(o, top=None):
    """--out, or DIR/report (refused where it is a link: a folder others may write)."""
    outdir = o.out or os.path.join(top or o.dir, "report")
    if not o.out and os.path.islink(outdir):
        raise BadInput("%s is a symbolic link: tpbal-report writes its report into no folder "
                       "a link points at (it is left as it is); remove it or give --out DIR"
                       % clean(outdir))
    try:
        os.makedirs(outdir, exist_ok=True)
    except OSError as e:
        raise BadInput("cannot create %s: %s" % (clean(outdir), e.strerror or e))
    return outdir


def fleet_gemm_level(doc):
    """The GEMM scores' level and rounds, and what --budget spent on them (fleet.json's gemm
    and budget; an older fleet.json has neither: 95 %)."""
    g = doc.get("gemm") if isinstance(doc.get("gemm"), dict) else {}
    b = doc.get("budget") if isinstance(doc.get("budget"), dict) else {}
    level = g.get("level") if tr.finite(g.get("level")) else 0.95
    txt = "GEMM at %.4g %%" % (100.0 * level)
    if isinstance(g.get("rounds"), int):
        txt += " over %d rounds" % g["rounds"]
    if all(tr.finite(b.get(k)) for k in ("seconds", "spent_s", "looks", "open")):
        txt += "; --budget %g s: %.1f s spent on %d more look%s, %d node%s left suspect" % (
            b["seconds"], b["spent_s"], b["looks"] - 1, "" if b["looks"] == 2 else "s",
            b["open"], "" if b["open"] == 1 else "s")
    return html.escape(txt)


def fleet_report(o, plots, outdir):
    """DIR holds a fleet.json (tpbal --fleet): the fleet view, the nodes' table."""
    import tpbal_fleet as tf
    fleets = [tf.load(d) for d in (o.history or [])] + [tf.load(o.dir)]
    made, data = [], {}
    data["fleet"] = tf.plot(fleets, outdir, made, plots.plt, plots.save)
    doc = fleets[-1]
    head = ["node", "host", "GEMM", "all-reduce", "link", "clock", "verdict", "reason"]

    def sc(n, k):
        v = n.get(k) if isinstance(n.get(k), dict) else {}
        return "%.2f [%.2f, %.2f]" % (v["score"], v["lo"], v["hi"]) \
            if all(tr.finite(v.get(x)) for x in ("score", "lo", "hi")) else "-"
    body = [(n.get("node"), clean(str(n.get("host"))), sc(n, "gemm"), sc(n, "collective"),
             sc(n, "link"), sc(n, "clock"), clean(str(n.get("verdict"))),
             clean(str(n.get("reason") or "-"))) for n in doc["nodes"]]
    parts = ["<!doctype html><html><head><meta charset='utf-8'><title>tpbal fleet</title>",
             STYLE, "</head><body>", "<h1>tpbal fleet</h1>",
             "<p>%d ranks; scores against the fleet's median with 95 %% intervals (%s); "
             "threshold %.2f; exclude: %s</p>" % (len(doc["ranks"]), fleet_gemm_level(doc),
                                                  doc["threshold"], html.escape(
                 clean(str(doc.get("slurm_exclude") or "none")))),
             table(head, body)]
    for name in made:
        parts.append("<figure><img src='%s.png' alt='%s'><figcaption>Every rank's GEMM rate "
                     "over the fleet's median by node, the links between neighbouring nodes%s "
                     "(<a href='%s.svg'>SVG</a>)</figcaption></figure>" % (
                         name, name, " and each node's history over the runs"
                         if len(fleets) > 1 else "", name))
    parts.append("</body></html>")
    write_outputs(outdir, data, "\n".join(parts))
    tt.say("tpbal-report: the fleet view (%s) and index.html in %s" % (
        ", ".join(made) or "no plot", clean(outdir)))
    return 0


def write_outputs(outdir, data, text):
    if "tpbal_plots" in sys.modules:  # the legends' overlap with the data, as drawn
        data["layout"] = dict(sys.modules["tpbal_plots"].LAYOUT)
    tr.write_atomic(os.path.join(outdir, "plots.json"), tr.json_dumps(data, indent=1))
    tr.write_atomic(os.path.join(outdir, "index.html"), text)


def main(argv):
    o = parse_args(argv)
    try:
        import tpbal_plots as plots
    except ImportError:
        raise BadInput("matplotlib is missing for %s: install it (Debian/Ubuntu: apt-get install "
                       "python3-matplotlib)" % sys.executable)
    if os.path.exists(os.path.join(o.dir, "fleet.json")) and \
            not os.path.exists(os.path.join(o.dir, "results.jsonl")):
        if o.compare:
            raise BadInput("--compare B compares two sweeps; %s holds a fleet: draw earlier "
                           "fleets with --history OLD, or tpbal-compare --fleet OLD NEW"
                           % clean(o.dir))
        return fleet_report(o, plots, report_dir(o))
    if o.history:
        raise BadInput("--history draws fleets (tpbal --fleet): %s holds no fleet.json"
                       % clean(o.dir))
    res = load_run(o.dir)
    if not res.configs:
        raise BadInput("%s has no config: nothing to report (status %s)" % (
            clean(res.jsonl), clean(res.run.get("status"))))
    outdir = report_dir(o, o.dir if tr.is_repeat(o.dir) else res.dir)
    made, data = [], {}
    serial = [c for c in res.configs if not c.get("chunks")]  # chunked ones: the overlap plot
    data["step"] = plots.plot_step(serial, outdir, made)
    import tpbal_speedup as sp
    data["weighted"] = sp.plot_weighted(res.configs, outdir, made, res.summary)
    data["decomposition"] = plots.plot_decomposition(res.summary, outdir, made)
    data["comm"] = plots.plot_comm(serial, res.summary, outdir, made)
    import tpbal_views as vw
    data["overlap"] = vw.plot_overlap(res.configs, outdir, made)
    c, why = pick_config(res, o.config)
    trace = plots.Trace(res.trace_path(c["id"]), c["id"]) if c else None
    data["timeline"] = plots.plot_gantt(c, trace, outdir, o.window, made, why) if c else None
    data["arrivals"] = plots.plot_arrivals(c, trace, outdir, made, why) if c else None
    extra = per_rank_views(res, plots, outdir, o.window, made, data)
    import tpbal_report_plan as rp
    import tpbal_report_block as rb
    extra += rb.block_part(res, outdir, made, data, table)
    extra += rp.plan_part(res, outdir, made, data, table)
    write_outputs(outdir, data, page(res, made, CAPTIONS, data["timeline"], extra))
    tt.say("tpbal-report: %d plots (%s) and index.html in %s" % (
        len(made), ", ".join(made), clean(outdir)))
    if o.compare:
        import tpbal_compare
        import tpbal_report_compare as rc
        tol = tpbal_compare.parse_tolerance(o.tolerance)
        cm = rc.write(o.dir, o.compare, outdir, tol, table)
        tt.say("tpbal-report: %d plots (%s) and compare.html in %s" % (
            len(cm), ", ".join(cm), clean(outdir)))
    return 0


def load_run(path):
    """The run at path; a --repeat run's last pass, whose plots and tables the report draws,
    with the answer over the passes (repeat.json) as its headline's answer."""
    if not tr.is_repeat(path):
        return tr.load(path)
    doc, dirs = trp.repeat_doc(path)
    res = tr.load(os.path.join(path, dirs[-1]))
    summ = dict(res.summary) if isinstance(res.summary, dict) else {}
    summ["answer"] = trp.repeat_summary(doc)["answer"]
    res.headline_summary = summ
    res.headline_note = ("A --repeat run of %d passes: the answer above is the one over the "
                         "passes (repeat.json); the tables and plots below are %s's "
                         "(tpbal-report %s/pass-K draws another)." % (
                             len(dirs), clean(dirs[-1]), clean(path)))
    return res


def per_rank_views(res, plots, outdir, window, made, data):
    """The per-rank bars and table, the step distributions and even beside weighted in one
    Gantt chart; returns the page's per-rank table."""
    import tpbal_views as vw
    pair = vw.pick_pair(res.configs)
    rows = tr.read_ranks(res.ranks_csv) if res.ranks_csv else []
    data["ranks"] = vw.plot_ranks(pair, rows, outdir, made)
    data["steps"] = vw.plot_steps(res.configs, outdir, made)
    traces = None
    if pair and all(os.path.exists(res.trace_path(c["id"])) for c in pair):
        traces = [plots.Trace(res.trace_path(c["id"]), c["id"]) for c in pair]
    data["gantt_pair"] = vw.plot_gantt_pair(pair, traces, outdir, window, made) \
        if traces else None
    if not pair or not rows:
        return []
    return ["<h2>Per rank and host</h2>", table(*vw.rank_table(pair, rows))]


if __name__ == "__main__":
    sys.exit(tr.run_main("tpbal-report", main, sys.argv[1:]))
