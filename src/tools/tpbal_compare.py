#!/usr/bin/env python3
"""tpbal-compare: is run B worse than run A, where, and by how much?

A and B are results.jsonl files, result directories (holding results.jsonl and
ranks.csv), or baselines written by --baseline-out. Configs are matched by their
parameters (backend, ranks, TP degree, split, policy, placement, collective, shape,
dtype, comm-only message size); each metric is compared in its direction:

  step_us    median step time            lower is better
  tflops     TFLOP/s of one group        higher is better
  busbw_gbs  nccl-tests bus bandwidth    higher is better
  lb         load balance                higher is better
  e          parallel efficiency         higher is better
  slowdown   what-if slowdown S          lower is better

A metric that is worse than A by more than its tolerance is a regression, unless the
delta lies inside the two runs' own spread (the relative spread (p95 - min) / median
of their step times, or a baseline's run-to-run spread): then it is reported as noise.
Better by more than the tolerance is an improvement.

Suspect nodes come from ranks.csv (result directories only): in the even-policy
configs with TP > 1, each rank's median relative score (min compute time in its
group / its own); a node with a rank below the threshold is suspect.
"""
import argparse
import csv
import io
import math
import os
import statistics
import sys

import tpbal_results as tr
from tpbal_results import BadInput, clean

METRICS = [  # name, direction (+1 higher is better), format
    ("step_us", -1, "%.1f"),
    ("tflops", +1, "%.4g"),
    ("busbw_gbs", +1, "%.3f"),
    ("lb", +1, "%.3f"),
    ("e", +1, "%.3f"),
    ("slowdown", -1, "%.3f"),
]
DIRECTION = {m: d for m, d, _ in METRICS}
FMT = {m: f for m, _, f in METRICS}
KEY_FIELDS = tr.KEY_FIELDS
ORDER = {"regression": 3, "noise": 2, "improved": 1, "ok": 0}
EPILOG = """exit status: 0 everything holds, 1 a regression, a failed --require or a suspect
node, 2 bad input (unreadable file, different schema versions, nothing in common, a
--require that matches no config, bad flag)."""


def metric_value(c, m):
    return tr.num(c["step_us"].get("median") if m == "step_us" else c.get(m))


def step_spread(c):
    s = c["step_us"]
    med, p95, lo = (tr.num(s.get(x)) for x in ("median", "p95", "min"))
    if med is None or p95 is None or lo is None or med <= 0:
        return 0.0
    return max(0.0, (p95 - lo) / med)


class Run:
    """One side of a comparison: configs by key, each with its metrics and spread."""

    def __init__(self, path):
        self.path = path
        self.configs = {}  # key -> {"metrics": {m: v}, "spread": x, "label": str}
        self.schema = None
        self.ranks_csv = None
        self._load(path)

    def _load(self, path):
        jsonl = os.path.join(path, "results.jsonl") if os.path.isdir(path) else path
        if not os.path.exists(jsonl):
            raise BadInput("cannot read %s: no such file or directory" % clean(jsonl))
        text = tr.read_text(jsonl, "the results", tr.MAX_JSONL)
        try:  # a baseline is one JSON document; results.jsonl one record per line
            doc = tr.json_loads(text)
        except (ValueError, RecursionError):
            doc = None
        if isinstance(doc, dict) and doc.get("type") == "baseline":
            self._load_baseline(jsonl, doc)
            return
        res = tr.load(path)
        self.schema, self.ranks_csv = res.schema, res.ranks_csv
        for c in res.configs:
            key = tr.config_key(c)
            self.configs[key] = {"metrics": {m: metric_value(c, m) for m in DIRECTION},
                                 "spread": step_spread(c), "label": tr.key_label(key),
                                 "record": c}

    def _load_baseline(self, f, b):
        try:
            self.schema = b["schema"]
            for c in b["configs"]:
                key = tuple(c["key"][k] for k in KEY_FIELDS)
                metrics = {m: tr.num(c["metrics"].get(m)) for m in DIRECTION}
                spread = tr.num(c["spread"])
                if spread is None or spread < 0:
                    raise ValueError("spread")
                self.configs[key] = {"metrics": metrics, "spread": spread,
                                     "label": tr.key_label(key), "record": None}
        except (ValueError, KeyError, TypeError, AttributeError):
            raise BadInput("%s: not a tpbal baseline (written by --baseline-out)" % clean(f))


def parse_pct(s, flag):
    t = s.strip()
    scale = 100.0 if t.endswith("%") else 1.0
    try:
        v = float(t.rstrip("%")) / scale
    except ValueError:
        raise BadInput("%s '%s': expected a percentage such as 5%% or 0.05" % (flag, clean(s)))
    if not 0 <= v < 10:
        raise BadInput("%s '%s': expected a percentage from 0%% to 1000%%" % (flag, clean(s)))
    return v


def parse_require(spec):
    """METRIC>=VALUE or METRIC<=VALUE[@field=value,...] -> (metric, op, value, filters)."""
    body, _, sel = spec.partition("@")
    for op in (">=", "<="):
        if op in body:
            m, v = body.split(op, 1)
            m = m.strip()
            if m not in DIRECTION:
                raise BadInput("--require '%s': unknown metric '%s' (one of %s)" % (
                    clean(spec), clean(m), ", ".join(DIRECTION)))
            try:
                val = float(v)
            except ValueError:
                raise BadInput("--require '%s': '%s' is not a number" % (clean(spec), clean(v)))
            if not math.isfinite(val):
                raise BadInput("--require '%s': the bound must be a finite number" % clean(spec))
            filters = {}
            for item in filter(None, sel.split(",")):
                f, eq, fv = item.partition("=")
                if not eq or f not in KEY_FIELDS:
                    raise BadInput("--require '%s': '%s' is not FIELD=VALUE with FIELD one of %s"
                                   % (clean(spec), clean(item), ", ".join(KEY_FIELDS)))
                filters[f] = fv
            return (m, op, val, filters)
    raise BadInput("--require '%s': expected METRIC>=VALUE or METRIC<=VALUE" % clean(spec))


def judge(metric, a, b, tol, noise):
    """Verdict and signed relative delta (positive = better) of one metric."""
    if a is None or b is None:
        return "ok", None
    if a == 0:
        return ("ok", 0.0) if b == 0 else ("ok", None)
    better = DIRECTION[metric] * (b - a) / abs(a)
    if better > tol:
        return "improved", better
    if -better > tol:
        return ("noise" if -better <= noise else "regression"), better
    return "ok", better


def compare(A, B, tols):
    rows = []
    for key in [k for k in A.configs if k in B.configs]:
        ca, cb = A.configs[key], B.configs[key]
        noise = max(ca["spread"], cb["spread"])
        row = {"config": ca["label"], "key": dict(zip(KEY_FIELDS, key)), "metrics": {},
               "noise": noise}
        verdict = "ok"
        for m in DIRECTION:
            v, d = judge(m, ca["metrics"].get(m), cb["metrics"].get(m), tols.get(m, tols[None]),
                         noise)
            row["metrics"][m] = {"a": ca["metrics"].get(m), "b": cb["metrics"].get(m),
                                 "delta": d, "verdict": v}
            if ORDER[v] > ORDER[verdict]:
                verdict = v
        row["verdict"] = verdict
        rows.append(row)
    only_a = [A.configs[k]["label"] for k in A.configs if k not in B.configs]
    only_b = [B.configs[k]["label"] for k in B.configs if k not in A.configs]
    return rows, only_a, only_b


def check_requires(B, reqs):
    """Failed requirements; a requirement that no config of B can be held to is an error."""
    failed = []
    for m, op, val, filters in reqs:
        checked = 0
        for key, c in B.configs.items():
            k = dict(zip(KEY_FIELDS, key))
            if any(str(k.get(f)) != fv for f, fv in filters.items()):
                continue
            v = c["metrics"].get(m)
            if v is None:
                continue
            checked += 1
            if not (v >= val if op == ">=" else v <= val):
                failed.append("%s: %s %s %s (is %s)" % (c["label"], m, op, "%g" % val,
                                                        FMT[m] % v))
        if not checked:
            sel = ",".join("%s=%s" % kv for kv in filters.items())
            raise BadInput("--require %s%s%g%s: no config of B has %s%s: a gate that checks "
                           "nothing (see the configs with --format csv)" % (
                               m, op, val, "@" + clean(sel) if sel else "", m,
                               " with " + clean(sel) if sel else ""))
    return failed


def rank_scores(run):
    """{(host, world_rank): median score} over even-policy configs with TP > 1."""
    if not run.ranks_csv:
        return {}
    got = {}
    for r in tr.read_ranks(run.ranks_csv):
        try:
            if r.get("policy") != "even" or int(r.get("tp") or 1) < 2 or not r.get("score"):
                continue
            s = float(r["score"])
            w = int(r.get("world_rank") or r["rank"])
        except (ValueError, KeyError, TypeError):
            continue
        if math.isfinite(s):
            got.setdefault((clean(r.get("host", "?"), 64), w), []).append(s)
    return {k: statistics.median(v) for k, v in got.items()}


def suspects(A, B, threshold):
    if threshold <= 0:
        return []
    sa, sb = rank_scores(A), rank_scores(B)
    nodes = {}
    for (host, w), s in sorted(sb.items()):
        if s < threshold:
            before = sa.get((host, w))
            nodes.setdefault(host, []).append(
                "rank %d score %.2f%s" % (w, s, "" if before is None else " (A: %.2f)" % before))
    return [{"node": h, "ranks": v} for h, v in sorted(nodes.items())]


def fmt_delta(d):
    return "-" if d is None else "%+.1f%%" % (100.0 * d)


def fmt_val(m, v):
    return "-" if v is None else FMT[m] % v


def out_table(rows, only_a, only_b, failed, sus, md):
    cols = ["config"] + list(DIRECTION) + ["noise", "verdict"]
    lines = []
    if md:
        lines.append("| " + " | ".join(cols) + " |")
        lines.append("|" + "---|" * len(cols))
    else:
        lines.append("# %-44s " % "config" + " ".join("%-22s" % m for m in DIRECTION) +
                     " %-6s %s" % ("noise", "verdict"))
        lines.append("# %-44s " % "" + " ".join("%-22s" % "A -> B (better +)"
                                                for _ in DIRECTION) + " %-6s" % "")
    for r in rows:
        cells = []
        for m in DIRECTION:
            x = r["metrics"][m]
            if x["a"] is None and x["b"] is None:
                cells.append("-")
            else:
                cells.append("%s->%s %s%s" % (fmt_val(m, x["a"]), fmt_val(m, x["b"]),
                                               fmt_delta(x["delta"]),
                                               "!" if x["verdict"] == "regression" else ""))
        noise = "%.0f%%" % (100 * r["noise"])
        if md:
            lines.append("| " + " | ".join([r["config"]] + cells + [noise, r["verdict"]]) + " |")
        else:
            lines.append("  %-44s " % r["config"] + " ".join("%-22s" % c for c in cells) +
                         " %-6s %s" % (noise, r["verdict"]))
    p = "" if md else "# "
    lines += ["%sonly in A: %s" % (p, label) for label in only_a]
    lines += ["%sonly in B: %s" % (p, label) for label in only_b]
    lines += ["%srequire failed: %s" % (p, f) for f in failed]
    lines += ["%ssuspect node %s: %s" % (p, s["node"], "; ".join(s["ranks"])) for s in sus]
    return "\n".join(lines)


def out_csv(rows):
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    head = ["config"] + KEY_FIELDS
    for m in DIRECTION:
        head += [m + "_a", m + "_b", m + "_delta", m + "_verdict"]
    w.writerow(head + ["noise", "verdict"])
    for r in rows:
        line = [r["config"]] + [r["key"][f] for f in KEY_FIELDS]
        for m in DIRECTION:
            x = r["metrics"][m]
            line += ["" if x["a"] is None else x["a"], "" if x["b"] is None else x["b"],
                     "" if x["delta"] is None else "%.6g" % x["delta"], x["verdict"]]
        w.writerow(line + ["%.6g" % r["noise"], r["verdict"]])
    return buf.getvalue().rstrip("\n")


def write_baseline(paths, out):
    runs = [Run(p) for p in paths]
    schemas = {str(r.schema) for r in runs}
    if len(schemas) != 1:
        raise BadInput("the runs have different schema versions (%s): build a baseline from "
                       "runs of one tpbal version" % clean(", ".join(sorted(schemas))))
    keys = [k for k in runs[0].configs if all(k in r.configs for r in runs)]
    if not keys:
        raise BadInput("the runs have no config in common: nothing to build a baseline of")
    configs = []
    for k in keys:
        metrics, spread = {}, max(r.configs[k]["spread"] for r in runs)
        for m in DIRECTION:
            vals = [r.configs[k]["metrics"].get(m) for r in runs]
            vals = [v for v in vals if v is not None]
            metrics[m] = statistics.median(vals) if vals else None
            if vals and metrics[m]:  # run-to-run spread, relative to the median
                spread = max(spread, (max(vals) - min(vals)) / abs(metrics[m]))
        configs.append({"key": dict(zip(KEY_FIELDS, k)), "metrics": metrics, "spread": spread,
                        "runs": len(runs)})
    doc = {"type": "baseline", "schema": runs[0].schema, "runs": paths, "configs": configs}
    inputs = []
    for p in paths:
        inputs += [p, p + "/results.jsonl", p + "/ranks.csv"]
    tr.write_atomic(out, tr.json_dumps(doc, indent=1) + "\n", inputs)
    return len(configs), len(runs)


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise BadInput("%s: see tpbal-compare --help" % message)


def tolerance(spec):
    m, sep, pct = spec.rpartition("=")
    if sep and m not in DIRECTION:
        raise BadInput("--tolerance '%s': unknown metric '%s' (one of %s)" % (
            clean(spec), clean(m), ", ".join(DIRECTION)))
    return (m if sep else None, parse_pct(pct, "--tolerance"))


def threshold(s):
    try:
        v = float(s)
    except ValueError:
        raise BadInput("--suspect-threshold '%s': expected a number" % clean(s))
    if not 0 <= v <= 1:
        raise BadInput("--suspect-threshold '%s': expected a score from 0 to 1" % clean(s))
    return v


def parse_args(argv):
    p = Parser(prog="tpbal-compare", description=__doc__.split("\n", 1)[1],
               epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
               usage="tpbal-compare [options] A B\n       tpbal-compare --baseline-out FILE "
                     "RUN [RUN ...]")
    p.add_argument("paths", nargs="*", metavar="RUN", help="results (A B, or the RUNs)")
    p.add_argument("--tolerance", action="append", default=[], type=tolerance,
                   metavar="[METRIC=]PCT",
                   help="relative tolerance, default 5%% for every metric; repeatable "
                        "(--tolerance 5%% --tolerance busbw_gbs=3%%)")
    p.add_argument("--require", action="append", default=[], type=parse_require,
                   metavar="SPEC",
                   help="an absolute floor or ceiling on B, METRIC>=VALUE or METRIC<=VALUE, "
                        "optionally for some configs only: "
                        "'busbw_gbs>=431@comm_bytes=268435456,tp=8'; repeatable; one that "
                        "matches no config is an error")
    p.add_argument("--suspect-threshold", type=threshold, default=0.75, metavar="X",
                   help="relative score below which a node is suspect (default 0.75; 0 turns "
                        "the check off)")
    p.add_argument("--format", choices=("table", "md", "csv", "json"), default="table",
                   help="output format (default table)")
    p.add_argument("--baseline-out", metavar="FILE",
                   help="write a baseline (median and spread per config) of the RUNs")
    o = p.parse_args(argv)
    o.tol = {None: 0.05}
    o.tol.update(dict(o.tolerance))
    return o


def main(argv):
    o = parse_args(argv)
    if o.baseline_out:
        if not o.paths:
            raise BadInput("--baseline-out needs at least one run")
        n, runs = write_baseline(o.paths, o.baseline_out)
        print("tpbal-compare: baseline of %d configs from %d runs written to %s" % (
            n, runs, clean(o.baseline_out)), file=sys.stderr)
        return 0
    if len(o.paths) != 2:
        raise BadInput("expected two results (A B), got %d: see tpbal-compare --help" %
                       len(o.paths))
    A, B = Run(o.paths[0]), Run(o.paths[1])
    if A.schema != B.schema:
        raise BadInput("A has schema version %s and B %s: compare results of the same tpbal "
                       "version" % (clean(A.schema), clean(B.schema)))
    rows, only_a, only_b = compare(A, B, o.tol)
    if not rows:
        raise BadInput("A and B have no config in common (%d and %d configs): nothing to "
                       "compare" % (len(A.configs), len(B.configs)))
    failed = check_requires(B, o.require)
    sus = suspects(A, B, o.suspect_threshold)
    regressions = [r for r in rows if r["verdict"] == "regression"]
    status = 1 if regressions or failed or sus else 0
    if o.format == "json":
        print(tr.json_dumps({"a": A.path, "b": B.path, "rows": rows, "only_in_a": only_a,
                             "only_in_b": only_b, "require_failed": failed,
                             "suspect_nodes": sus, "status": status}, indent=1))
    elif o.format == "csv":
        print(out_csv(rows))
    else:
        print(out_table(rows, only_a, only_b, failed, sus, o.format == "md"))
    verdict = "B is worse than A" if status else "B holds against A"
    print("tpbal-compare: %s: %d configs compared, %d regressed, %d improved, %d noise; "
          "%d only in A, %d only in B; %d requirements failed; %d suspect nodes" % (
              verdict, len(rows), len(regressions),
              len([r for r in rows if r["verdict"] == "improved"]),
              len([r for r in rows if r["verdict"] == "noise"]), len(only_a), len(only_b),
              len(failed), len(sus)), file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(tr.run_main("tpbal-compare", main, sys.argv[1:]))
