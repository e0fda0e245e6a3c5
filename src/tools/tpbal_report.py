#!/usr/bin/env python3
"""tpbal-report: turn a tpbal result directory into plots and an index.html.

Reads DIR/results.jsonl and the traces (trace-NNN.json) and writes into DIR/report/
(or --out) a PNG and an SVG of each plot, plots.json (every number plotted, for
checking) and index.html, which needs no network:

  step.png           median step time and efficiency E against the TP degree, per
                     shape, split and policy
  weighted.png       even against weighted per config: measured speed-up beside predicted
  decomposition.png  T(N) = T_comp/N + T_comm + T_idle as stacked bars per TP degree
  comm.png           busbw and transfer time against message size, with the fitted
                     alpha-beta curve T = L + V/B (where two or more sizes were measured)
  gantt.png          a window of iterations of one config around its slowest step:
                     compute / wait / comm per rank, ranks grouped by node
  arrivals.png       rank x iteration heat map of each rank's arrival after its TP
                     group's median arrival, in % of the step: periodic stalls are
                     columns, a slow node is a band of rows
"""
import argparse
import html
import math
import os
import sys

import tpbal_results as tr
from tpbal_results import BadInput, clean

EPILOG = "exit status: 0 written, 2 bad input (unreadable or not a tpbal result, no config, " \
         "an unwritable output folder)."


def pick_config(res, want):
    """The config of the Gantt chart: --config, else the largest what-if slowdown among
    those with a trace and TP > 1 (None if there is none)."""
    cfgs = res.configs
    if want is not None:
        c = [c for c in cfgs if c["id"] == want]
        if not c:
            raise BadInput("--config %d: no such config (ids %s)" % (
                want, ", ".join(str(c["id"]) for c in cfgs[:20]) or "none"))
        return c[0]
    have = [c for c in cfgs if c["tp"] > 1 and os.path.exists(res.trace_path(c["id"]))]
    if not have:
        return None
    return max(have, key=lambda c: tr.num(c.get("slowdown")) or 0.0)


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


def configs_part(res):
    head = ["id", "tp", "split", "policy", "shape", "dtype", "step us", "p95 us", "xfer us",
            "LB", "E", "TFLOP/s", "busbw GB/s", "S", "straggler", "speed-up", "check"]
    rows = [(c["id"], c["tp"], c["split"], c["policy"], tr.shape_label(c), c["dtype"],
             c["step_us"]["median"], c["step_us"].get("p95"), c.get("xfer_us"), c.get("lb"),
             c.get("e"), c.get("tflops"), c.get("busbw_gbs"), c.get("slowdown"),
             c.get("straggler_rank"), c.get("speedup"), c.get("check")) for c in res.configs]
    parts = ["<h2>Configs</h2>", table(head, rows)]
    fits = tr.records(res.summary.get("comm_model"))
    if fits:
        parts.append("<h2>Communication model T = L + V/B</h2>")
        parts.append(table(["collective", "tp", "policy", "placement", "comm-only", "L us",
                            "B GB/s", "R2", "points"],
                           [(f.get("collective"), f.get("tp"), f.get("policy"),
                             f.get("placement"), f.get("comm_only"), f.get("latency_us"),
                             f.get("bandwidth_gbs"), f.get("r2"), f.get("points"))
                            for f in fits]))
    return parts


def page(res, made, captions, tl):
    parts = ["<!doctype html><html><head><meta charset='utf-8'><title>tpbal report</title>",
             "<style>body{font-family:sans-serif;margin:2em;max-width:1300px}"
             "table{border-collapse:collapse;font-size:12px;margin:1em 0}"
             "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}"
             "th{background:#eee}img{max-width:100%;border:1px solid #ddd}"
             "figure{margin:1.5em 0}</style></head><body>",
             "<h1>tpbal report</h1>", "<h2>Run</h2>", table(["", ""], run_table(res.run))]
    parts += clock_part(res.run)
    parts.append("<h2>Plots</h2>")
    for name in made:
        parts.append("<figure><img src='%s.png' alt='%s'><figcaption>%s "
                     "(<a href='%s.svg'>SVG</a>)</figcaption></figure>" % (
                         name, name, html.escape(captions[name]), name))
    missing = [n for n in captions if n not in made]
    if missing:
        parts.append("<p>Not drawn (no data in these results): %s.</p>" % ", ".join(missing))
    parts += configs_part(res)
    if tl:
        parts.append("<p>Gantt chart and heat map: config %d, iterations %s.</p>" % (
            tl["config"], tl["window"]))
    parts.append("</body></html>")
    return "\n".join(parts)


CAPTIONS = {
    "step": "Median step time and efficiency E against the TP degree, per shape, split and "
            "policy.",
    "weighted": "Even against weighted: the measured speed-up T_even / T_weighted beside the "
                "one predicted from the even config's per-rank compute and the weighted "
                "shards.",
    "decomposition": "T(N) = T_comp/N + T_comm(N) + T_idle(N) per TP degree (the summary's "
                     "decomposition).",
    "comm": "Transfer time and bus bandwidth against message size, with the fitted "
            "T = L + V/B.",
    "gantt": "A window of iterations around the slowest step: compute, wait and comm per "
             "rank, grouped by node.",
    "arrivals": "Each rank's arrival after its TP group's median arrival, in % of the step, "
                "per measured iteration: a straggler is red, the ranks that wait for it blue.",
}


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise BadInput("%s: see tpbal-report --help" % message)


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
    p = Parser(prog="tpbal-report", description=__doc__.split("\n", 1)[1], epilog=EPILOG,
               formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dir", metavar="DIR", help="a tpbal result directory (--out of tpbal)")
    p.add_argument("--out", metavar="DIR", help="where to write (default DIR/report)")
    p.add_argument("--config", type=positive(0), metavar="ID",
                   help="the config of the Gantt chart and heat map (default: the one with the "
                        "largest what-if slowdown among those with a trace and TP > 1)")
    p.add_argument("--window", type=positive(1), default=8, metavar="N",
                   help="iterations in the Gantt chart (default 8, centred on the slowest step)")
    return p.parse_args(argv)


def write_outputs(outdir, data, text):
    tr.write_atomic(os.path.join(outdir, "plots.json"), tr.json_dumps(data, indent=1))
    tr.write_atomic(os.path.join(outdir, "index.html"), text)


def main(argv):
    o = parse_args(argv)
    try:
        import tpbal_plots as plots
    except ImportError:
        raise BadInput("matplotlib is missing for %s: install it (Debian/Ubuntu: apt-get install "
                       "python3-matplotlib)" % sys.executable)
    res = tr.load(o.dir)
    if not res.configs:
        raise BadInput("%s has no config: nothing to report (status %s)" % (
            clean(res.jsonl), clean(res.run.get("status"))))
    outdir = o.out or os.path.join(res.dir, "report")
    try:
        os.makedirs(outdir, exist_ok=True)
    except OSError as e:
        raise BadInput("cannot create %s: %s" % (clean(outdir), e.strerror or e))
    made, data = [], {}
    data["step"] = plots.plot_step(res.configs, outdir, made)
    data["weighted"] = plots.plot_weighted(res.configs, outdir, made)
    data["decomposition"] = plots.plot_decomposition(res.summary, outdir, made)
    data["comm"] = plots.plot_comm(res.configs, res.summary, outdir, made)
    c = pick_config(res, o.config)
    trace = plots.Trace(res.trace_path(c["id"]), c["id"]) if c else None
    data["timeline"] = plots.plot_gantt(c, trace, outdir, o.window, made) if c else None
    data["arrivals"] = plots.plot_arrivals(c, trace, outdir, made) if c else None
    write_outputs(outdir, data, page(res, made, CAPTIONS, data["timeline"]))
    print("tpbal-report: %d plots (%s) and index.html in %s" % (
        len(made), ", ".join(made), clean(outdir)))
    return 0


if __name__ == "__main__":
    sys.exit(tr.run_main("tpbal-report", main, sys.argv[1:]))
