#!/usr/bin/env python3
"""tpbal-compare: is run B worse than run A, where, and by how much?

usage: tpbal-compare [options] A B
       tpbal-compare --baseline-out FILE RUN [RUN ...]

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

options:
  --tolerance [METRIC=]PCT  relative tolerance, default 5%% for every metric; repeatable
                            (--tolerance 5%% --tolerance busbw_gbs=3%%)
  --require SPEC            an absolute floor or ceiling on B, as METRIC>=VALUE or
                            METRIC<=VALUE, optionally for some configs only:
                            'busbw_gbs>=431@comm_bytes=268435456,tp=8'; repeatable
  --suspect-threshold X     relative score below which a node is suspect (default 0.75;
                            0 turns the check off)
  --format table|md|csv|json  output format (default table)
  --baseline-out FILE       write a baseline (median and spread per config) of the RUNs
  -h, --help                this text

exit status: 0 everything holds, 1 a regression, a failed --require or a suspect node,
2 bad input (unreadable file, different schema versions, nothing in common, bad flag).
"""
import csv
import json
import math
import os
import statistics
import sys

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
KEY_FIELDS = ["backend", "world_size", "tp", "split", "policy", "placement", "col_collective",
              "m", "n", "k", "dtype", "comm_only", "comm_bytes"]
ORDER = {"regression": 3, "noise": 2, "improved": 1, "ok": 0}


class BadInput(Exception):
    """Bad input: one line, exit code 2."""


def metric_value(c, m):
    v = c["step_us"]["median"] if m == "step_us" else c.get(m)
    return v if isinstance(v, (int, float)) and math.isfinite(v) else None


def config_key(c):
    return tuple(c.get(f) for f in KEY_FIELDS)


def key_label(key):
    k = dict(zip(KEY_FIELDS, key))
    if k.get("comm_only") == "yes":
        what = "comm %s %dB" % ("all-reduce" if k["split"] == "row" or
                                k["col_collective"] == "allreduce" else "all-gather",
                                k["comm_bytes"])
    else:
        what = "%s %dx%dx%d" % (k["split"], k["m"], k["n"], k["k"])
    return "tp%d %s %s %s%s" % (k["tp"], what, k["policy"], k["dtype"],
                                "" if k["placement"] in (None, "packed") else " " + k["placement"])


def step_spread(c):
    s = c["step_us"]
    if not all(isinstance(s.get(x), (int, float)) for x in ("median", "p95", "min")) or \
            s["median"] <= 0:
        return 0.0
    return max(0.0, (s["p95"] - s["min"]) / s["median"])


class Run:
    """One side of a comparison: configs by key, each with its metrics and spread."""

    def __init__(self, path):
        self.path = path
        self.configs = {}  # key -> {"metrics": {m: v}, "spread": x, "label": str}
        self.schema = None
        self.ranks_csv = None
        self._load(path)

    def _load(self, path):
        f = os.path.join(path, "results.jsonl") if os.path.isdir(path) else path
        try:
            with open(f) as fh:
                text = fh.read()
        except OSError as e:
            raise BadInput("cannot read %s: %s" % (f, e.strerror or e))
        if os.path.isdir(path) and os.path.exists(os.path.join(path, "ranks.csv")):
            self.ranks_csv = os.path.join(path, "ranks.csv")
        try:  # a baseline is one JSON document; results.jsonl one record per line
            doc = json.loads(text)
        except ValueError:
            doc = None
        if isinstance(doc, dict) and doc.get("type") == "baseline":
            self._load_baseline(f, doc)
            return
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                r = json.loads(line)
            except ValueError:
                raise BadInput("%s line %d is not JSON: is it a tpbal results.jsonl?" % (f, n))
            if r.get("type") == "run":
                self.schema = r.get("schema")
            elif r.get("type") == "config":
                try:
                    self.configs[config_key(r)] = {
                        "metrics": {m: metric_value(r, m) for m, _, _ in METRICS},
                        "spread": step_spread(r), "label": key_label(config_key(r)),
                        "record": r}
                except (KeyError, TypeError):
                    raise BadInput("%s line %d: a config record without its fields" % (f, n))
        if self.schema is None:
            raise BadInput("%s has no run record: is it a tpbal results.jsonl?" % f)

    def _load_baseline(self, f, b):
        try:
            self.schema = b["schema"]
            for c in b["configs"]:
                key = tuple(c["key"][k] for k in KEY_FIELDS)
                self.configs[key] = {"metrics": c["metrics"], "spread": c["spread"],
                                     "label": key_label(key), "record": None}
        except (ValueError, KeyError, TypeError):
            raise BadInput("%s: not a tpbal baseline (written by --baseline-out)" % f)


def parse_pct(s, flag):
    t = s.strip()
    scale = 100.0 if t.endswith("%") else 1.0
    try:
        v = float(t.rstrip("%")) / scale
    except ValueError:
        raise BadInput("%s '%s': expected a percentage such as 5%% or 0.05" % (flag, s))
    if not 0 <= v < 10:
        raise BadInput("%s '%s': expected a percentage from 0%% to 1000%%" % (flag, s))
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
                    spec, m, ", ".join(DIRECTION)))
            try:
                val = float(v)
            except ValueError:
                raise BadInput("--require '%s': '%s' is not a number" % (spec, v))
            filters = {}
            for item in filter(None, sel.split(",")):
                f, eq, fv = item.partition("=")
                if not eq or f not in KEY_FIELDS:
                    raise BadInput("--require '%s': '%s' is not FIELD=VALUE with FIELD one of %s"
                                   % (spec, item, ", ".join(KEY_FIELDS)))
                filters[f] = fv
            return (m, op, val, filters)
    raise BadInput("--require '%s': expected METRIC>=VALUE or METRIC<=VALUE" % spec)


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
        for m, _, _ in METRICS:
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
    failed, checked = [], 0
    for m, op, val, filters in reqs:
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
    return failed, checked


def rank_scores(run):
    """{(host, world_rank): median score} over even-policy configs with TP > 1."""
    if not run.ranks_csv:
        return {}
    got = {}
    try:
        with open(run.ranks_csv) as fh:
            for r in csv.DictReader(fh):
                if r.get("policy") != "even" or int(r.get("tp", 1)) < 2 or not r.get("score"):
                    continue
                try:
                    s = float(r["score"])
                except ValueError:
                    continue
                if math.isfinite(s):
                    w = int(r.get("world_rank") or r["rank"])
                    got.setdefault((r["host"], w), []).append(s)
    except (OSError, KeyError, ValueError) as e:
        raise BadInput("cannot read %s: %s" % (run.ranks_csv, e))
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
    cols = ["config"] + [m for m, _, _ in METRICS] + ["noise", "verdict"]
    lines = []
    if md:
        lines.append("| " + " | ".join(cols) + " |")
        lines.append("|" + "---|" * len(cols))
    else:
        lines.append("# %-44s " % "config" + " ".join("%-22s" % m for m, _, _ in METRICS) +
                     " %-6s %s" % ("noise", "verdict"))
        lines.append("# %-44s " % "" + " ".join("%-22s" % "A -> B (better +)"
                                                for _ in METRICS) + " %-6s" % "")
    for r in rows:
        cells = []
        for m, _, _ in METRICS:
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
    for label in only_a:
        lines.append("%sonly in A: %s" % (p, label))
    for label in only_b:
        lines.append("%sonly in B: %s" % (p, label))
    for f in failed:
        lines.append("%srequire failed: %s" % (p, f))
    for s in sus:
        lines.append("%ssuspect node %s: %s" % (p, s["node"], "; ".join(s["ranks"])))
    return "\n".join(lines)


def out_csv(rows):
    import io
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    head = ["config"] + KEY_FIELDS
    for m, _, _ in METRICS:
        head += [m + "_a", m + "_b", m + "_delta", m + "_verdict"]
    w.writerow(head + ["noise", "verdict"])
    for r in rows:
        line = [r["config"]] + [r["key"][f] for f in KEY_FIELDS]
        for m, _, _ in METRICS:
            x = r["metrics"][m]
            line += ["" if x["a"] is None else x["a"], "" if x["b"] is None else x["b"],
                     "" if x["delta"] is None else "%.6g" % x["delta"], x["verdict"]]
        w.writerow(line + ["%.6g" % r["noise"], r["verdict"]])
    return buf.getvalue().rstrip("\n")


def write_baseline(paths, out):
    runs = [Run(p) for p in paths]
    schemas = {r.schema for r in runs}
    if len(schemas) != 1:
        raise BadInput("the runs have different schema versions %s: build a baseline from "
                       "runs of one tpbal version" % sorted(schemas))
    keys = [k for k in runs[0].configs if all(k in r.configs for r in runs)]
    if not keys:
        raise BadInput("the runs have no config in common: nothing to build a baseline of")
    configs = []
    for k in keys:
        metrics, spread = {}, max(r.configs[k]["spread"] for r in runs)
        for m, _, _ in METRICS:
            vals = [r.configs[k]["metrics"].get(m) for r in runs]
            vals = [v for v in vals if v is not None]
            metrics[m] = statistics.median(vals) if vals else None
            if vals and metrics[m]:  # run-to-run spread, relative to the median
                spread = max(spread, (max(vals) - min(vals)) / abs(metrics[m]))
        configs.append({"key": dict(zip(KEY_FIELDS, k)), "metrics": metrics, "spread": spread,
                        "runs": len(runs)})
    doc = {"type": "baseline", "schema": schemas.pop(), "runs": paths, "configs": configs}
    tmp = out + ".tmp"
    try:
        with open(tmp, "w") as fh:
            json.dump(doc, fh, indent=1)
            fh.write("\n")
        os.replace(tmp, out)
    except OSError as e:
        raise BadInput("cannot write %s: %s" % (out, e.strerror or e))
    return len(configs), len(runs)


def parse_args(argv):
    opts = {"tol": {None: 0.05}, "req": [], "thr": 0.75, "fmt": "table", "baseline": None,
            "paths": []}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("-h", "--help"):
            print(__doc__.replace("%%", "%"))
            sys.exit(0)
        name, eq, val = a.partition("=") if a.startswith("--") else (a, "", "")
        if name in ("--tolerance", "--require", "--suspect-threshold", "--format",
                    "--baseline-out"):
            if not eq:
                i += 1
                if i >= len(argv):
                    raise BadInput("%s needs a value: see tpbal-compare --help" % name)
                val = argv[i]
            if name == "--tolerance":
                m, sep, pct = val.rpartition("=")
                if sep and m not in DIRECTION:
                    raise BadInput("--tolerance '%s': unknown metric '%s' (one of %s)" % (
                        val, m, ", ".join(DIRECTION)))
                opts["tol"][m if sep else None] = parse_pct(pct, name)
            elif name == "--require":
                opts["req"].append(parse_require(val))
            elif name == "--suspect-threshold":
                try:
                    opts["thr"] = float(val)
                except ValueError:
                    raise BadInput("--suspect-threshold '%s': expected a number" % val)
            elif name == "--format":
                if val not in ("table", "md", "csv", "json"):
                    raise BadInput("--format '%s': expected table, md, csv or json" % val)
                opts["fmt"] = val
            else:
                opts["baseline"] = val
        elif a.startswith("-") and a != "-":
            raise BadInput("unknown option '%s': see tpbal-compare --help" % a)
        else:
            opts["paths"].append(a)
        i += 1
    return opts


def main(argv):
    o = parse_args(argv)
    if o["baseline"]:
        if not o["paths"]:
            raise BadInput("--baseline-out needs at least one run")
        n, runs = write_baseline(o["paths"], o["baseline"])
        print("tpbal-compare: baseline of %d configs from %d runs written to %s" % (
            n, runs, o["baseline"]), file=sys.stderr)
        return 0
    if len(o["paths"]) != 2:
        raise BadInput("expected two results (A B), got %d: see tpbal-compare --help" %
                       len(o["paths"]))
    A, B = Run(o["paths"][0]), Run(o["paths"][1])
    if A.schema != B.schema:
        raise BadInput("A has schema version %s and B %s: compare results of the same tpbal "
                       "version" % (A.schema, B.schema))
    rows, only_a, only_b = compare(A, B, o["tol"])
    if not rows:
        raise BadInput("A and B have no config in common (%d and %d configs): nothing to "
                       "compare" % (len(A.configs), len(B.configs)))
    failed, _ = check_requires(B, o["req"])
    sus = suspects(A, B, o["thr"])
    regressions = [r for r in rows if r["verdict"] == "regression"]
    status = 1 if regressions or failed or sus else 0
    if o["fmt"] == "json":
        print(json.dumps({"a": A.path, "b": B.path, "rows": rows, "only_in_a": only_a,
                          "only_in_b": only_b, "require_failed": failed, "suspect_nodes": sus,
                          "status": status}, indent=1))
    elif o["fmt"] == "csv":
        print(out_csv(rows))
    else:
        print(out_table(rows, only_a, only_b, failed, sus, o["fmt"] == "md"))
    verdict = "B is worse than A" if status else "B holds against A"
    print("tpbal-compare: %s: %d configs compared, %d regressed, %d improved, %d noise; "
          "%d only in A, %d only in B; %d requirements failed; %d suspect nodes" % (
              verdict, len(rows), len(regressions),
              len([r for r in rows if r["verdict"] == "improved"]),
              len([r for r in rows if r["verdict"] == "noise"]), len(only_a), len(only_b),
              len(failed), len(sus)), file=sys.stderr)
    return status


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except BadInput as e:
        print("tpbal-compare: error: %s" % e, file=sys.stderr)
        sys.exit(2)
