"""tpbal_compare_io: what tpbal-compare reads besides result directories (its own
baselines, nccl-tests' JSON output) and how it writes (table, md, csv, json, junit)."""
import csv
import io
import math
import os
from xml.sax.saxutils import escape, quoteattr

import tpbal_results as tr
from tpbal_results import BadInput, clean
import tpbal_stats as st
import tpbal_text as tt

# name: (direction, +1 higher is better; format)
METRICS = {"step_us": (-1, "%.1f"), "tflops": (+1, "%.4g"), "busbw_gbs": (+1, "%.3f"),
           "lb": (+1, "%.3f"), "e": (+1, "%.3f"), "slowdown": (-1, "%.3f"),
           "speedup": (+1, "%.3f"), "overlap_efficiency": (+1, "%.3f")}
KEY_FIELDS = tr.KEY_FIELDS
DELTA_DOC = ("(B - A) / |A|: + means B is larger, whether that is better (TFLOP/s) or worse "
             "(a step, a slowdown); the step column is B/A - 1, the same sign")
BASELINE_SAMPLES = 4000  # pooled step samples kept per config in a baseline


NCCL_KEY = ("collective", "comm_bytes", "tp")  # how nccl-tests' results are keyed


def load_baseline(path, doc):
    """(schema, configs, from_nccl_tests) of a baseline written by write_baseline: a baseline
    of nccl-tests outputs is keyed as they are (collective, bytes, ranks) and matched to B's
    comm-only configs as an nccl-tests output is."""
    configs = {}
    nccl = doc.get("from") == "nccl-tests"
    fields = NCCL_KEY if nccl else KEY_FIELDS
    try:
        schema = doc["schema"]
        for c in doc["configs"]:
            key = tuple(c["key"].get(k, tr.KEY_DEFAULTS.get(k)) for k in fields)
            samples = [x for x in c.get("samples") or [] if tr.finite(x) and x > 0]
            medians = [x for x in c.get("run_medians") or [] if tr.finite(x) and x > 0]
            configs[key] = {"metrics": {m: tr.num(c["metrics"].get(m)) for m in METRICS},
                            "label": nccl_label(key) if nccl else tr.key_label(key),
                            "samples": samples or None,
                            "ordered": False, "spread": st.spread_halfwidth(medians),
                            "runs": len(medians) or 1, "medians": medians, "record": None}
    except (ValueError, KeyError, TypeError, AttributeError):
        raise BadInput("%s: not a tpbal baseline (written by --baseline-out)" % clean(path))
    return schema, configs, nccl


def nccl_label(key):
    coll, nbytes, ranks = key
    return clean("nccl-tests %s %s on %s ranks" % (coll, tr.size_label(nbytes), ranks))


def thin(v, n):
    """At most n of v, evenly spaced (a pooled sample that stays small)."""
    if len(v) <= n:
        return list(v)
    return [v[int(i * len(v) / n)] for i in range(n)]


def pooled(runs, paths, what="a baseline"):
    """The baseline document of runs (the paths they came from): per config in all of them,
    the median of each metric, their step samples pooled and each run's step median."""
    nccl = {r.nccl_tests for r in runs}
    if len(nccl) != 1:
        raise BadInput("the runs mix nccl-tests outputs and tpbal results: build %s "
                       "of one kind" % what)
    nccl = nccl.pop()
    schemas = {str(r.schema) for r in runs}
    if len(schemas) != 1:
        raise BadInput("the runs have different schema versions (%s): build %s from "
                       "runs of one tpbal version" % (clean(", ".join(sorted(schemas))), what))
    keys = [k for k in runs[0].configs if all(k in r.configs for r in runs)]
    if not keys:
        raise BadInput("the runs have no config in common: nothing to build %s of" % what)
    configs = []
    for k in keys:
        metrics, pool, medians = {}, [], []
        for m in METRICS:
            vals = [r.configs[k]["metrics"].get(m) for r in runs]
            vals = [v for v in vals if v is not None]
            metrics[m] = sorted(vals)[len(vals) // 2] if vals else None
        for r in runs:
            s = r.configs[k]["samples"]
            pool += s or []
            if s:
                medians.append(st.median(s))
        configs.append({"key": dict(zip(NCCL_KEY if nccl else KEY_FIELDS, k)),
                        "metrics": metrics,
                        "samples": thin(sorted(pool), BASELINE_SAMPLES),
                        "run_medians": medians, "runs": len(runs)})
    doc = {"type": "baseline", "version": 2, "schema": runs[0].schema, "runs": paths,
           "configs": configs}
    if nccl:  # keyed as nccl-tests' results are: matched to B's comm-only configs
        doc["from"] = "nccl-tests"
    return doc


def write_baseline(runs, paths, out):
    doc = pooled(runs, paths)
    inputs = []
    for p in paths:
        inputs += [p, os.path.join(p, "results.jsonl"), os.path.join(p, "ranks.csv")]
    tr.write_atomic(out, tr.json_dumps(doc, indent=1) + "\n", inputs)
    return len(doc["configs"]), len(runs)


def load_nccl_tests(path, doc):
    """nccl-tests' JSON output (-J): {(collective, bytes, ranks): entry}, to be matched
    with B's comm-only configs (match_nccl_tests)."""
    args = doc.get("args") if isinstance(doc.get("args"), list) else []
    prog = os.path.basename(str(args[0])) if args else ""
    coll = {"all_reduce_perf": "all-reduce", "all_gather_perf": "all-gather"}.get(prog)
    if not coll:
        raise BadInput("%s: nccl-tests output of %s: only all_reduce_perf and all_gather_perf "
                       "match tpbal's collectives" % (clean(path), clean(prog or "?")))
    cfg = doc.get("config") if isinstance(doc.get("config"), dict) else {}
    ranks = len(tr.records(cfg.get("devices")))
    out = {}
    for r in tr.records(doc["results"]):
        oop = r.get("out_of_place") if isinstance(r.get("out_of_place"), dict) else {}
        size, t = r.get("size"), tr.num(oop.get("time"))
        if not isinstance(size, int) or t is None or t <= 0:
            continue
        per = r.get("out_of_place_per_iter") if isinstance(r.get("out_of_place_per_iter"),
                                                           dict) else {}
        samples = [x for x in per.get("times_us") or [] if tr.finite(x) and x > 0]
        out[(coll, size, ranks)] = {
            "metrics": dict({m: None for m in METRICS}, step_us=t,
                            busbw_gbs=tr.num(oop.get("bus_bw"))),
            "label": nccl_label((coll, size, ranks)),
            "samples": samples or None, "ordered": True, "spread": 0.0, "runs": 1,
            "record": None}
    if not out:
        raise BadInput("%s: no usable result in the nccl-tests output" % clean(path))
    return "nccl-tests %s" % doc.get("version"), out


def match_nccl_tests(a, b):
    """A's nccl-tests entries under the keys of B's comm-only configs of the same
    collective, bytes and TP degree."""
    matched = {}
    for key, e in b.items():
        rec = e["record"] or {}
        if rec.get("comm_only") != "yes":
            continue
        hit = a.get((rec.get("collective"), rec.get("comm_bytes"), rec.get("tp")))
        if hit:
            matched[key] = dict(hit, label=e["label"])
    return matched


def _command(run):
    """The command line without what only names where the results went (--out DIR,
    --force) and the program's folder."""
    words, out, skip = str(run.get("command_line") or "").split(), [], False
    for i, w in enumerate(words):
        if skip:
            skip = False
            continue
        if w in ("--out", "-o"):
            skip = True
            continue
        if w.startswith("--out=") or w == "--force":
            continue
        out.append(os.path.basename(w) if i == 0 else w)
    return " ".join(out)


def conditions(run):
    """What a run was measured under, by name (None: unknown, a baseline or nccl-tests)."""
    if not isinstance(run, dict):
        return None
    ranks = [r for r in run.get("ranks") or [] if isinstance(r, dict)]
    hosts = sorted({str(r.get("host")) for r in ranks})
    emu = [r.get("emulate_speed") for r in ranks]
    return {"command": _command(run),
            "version": "%s %s" % (run.get("tool") or "tpbal", run.get("version") or "?"),
            "backend": str(run.get("backend")),
            "ranks": "%s on %s" % (run.get("world_size"), ",".join(hosts) or "?"),
            "dtype": str(run.get("dtype")),
            "emulation": ",".join("%g" % x if tr.finite(x) else "1" for x in emu)
                         if any(tr.finite(x) and x != 1 for x in emu) else "none",
            "devices": ",".join(sorted({str(r["name"]) for r in ranks if r.get("name")})),
            "libraries": "%s; %s" % (run.get("mpi_version") or "?",
                                      run.get("backend_versions") or "?")}


def differences(ca, cb):
    """The conditions that differ between A and B, by name ([] when alike or unknown)."""
    if not ca or not cb:
        return []
    return [k for k in ca if ca[k] != cb.get(k)]


def conditions_lines(A, B, prefix="# "):
    """A's and B's conditions side by side, then the differences in one line."""
    ca, cb = A.conditions, B.conditions
    if not ca or not cb:
        return []
    lines = ["%s%s %s: %s" % (prefix, side, k, clean(str(c[k]), 400)) for side, c in
             (("A", ca), ("B", cb)) for k in ("command", "version", "ranks", "devices")]
    diff = differences(ca, cb)
    lines.append("%sA and B %s" % (prefix, "differ in: " + ", ".join(
        "%s (%s / %s)" % (k, clean(str(ca[k]), 80), clean(str(cb[k]), 80))
        if k not in ("command", "libraries") else k for k in diff)
        if diff else "were measured alike (command, version, backend, ranks, dtype, "
                     "emulation, devices, libraries)"))
    return lines


def fmt_ratio(s):
    if not s:
        return "-"
    return "%+.1f%% [%+.1f, %+.1f]" % (100 * (s["ratio"] - 1), 100 * (s["lo"] - 1),
                                       100 * (s["hi"] - 1))


def fmt_delta(x):
    if x.get("note"):
        return x["note"]
    if x["a"] is None and x["b"] is None:
        return "-"
    return "-" if x["delta"] is None else "%+.1f%%" % (100.0 * x["delta"])


def fmt_detect(s):
    """The smallest change the comparison could see, where it decided nothing ("-" where
    the interval already decided: the verdict is the evidence)."""
    if not s or math.isinf(s["detectable"]) or s.get("verdict") in ("regression", "improved"):
        return "-"
    return ">=%.1f%%" % (100 * s["detectable"])


SHOWN = ["tflops", "busbw_gbs", "lb", "e", "slowdown", "speedup", "overlap_efficiency"]


def shown(rows, wide):
    """The metric columns of the table: all with wide (and in Markdown), else those with a
    value in at least one row (an all-'-' column, such as overlap_efficiency in a run
    without --overlap, is left out: the table fits 120 columns more often; csv has all)."""
    if wide:
        return SHOWN
    return [m for m in SHOWN if any(fmt_delta(r["metrics"][m]) not in ("-", "no reference")
                                    for r in rows)]


def out_table(rows, only_a, only_b, failed, sus, md, wide=True):
    cols_m = shown(rows, wide or md)
    cols = ["config", "step B/A [95% interval]", "detects"] + cols_m + ["verdict"]
    cells = [[r["config"], fmt_ratio(r["step"]), fmt_detect(r["step"])] +
             [fmt_delta(r["metrics"][m]) for m in cols_m] +
             ["can't tell" if r.get("cant_tell") else r["verdict"]] for r in rows]
    lines = []
    if md:
        lines.append("| " + " | ".join(cols) + " |")
        lines.append("|" + "---|" * len(cols))
        lines += ["| " + " | ".join(c) + " |" for c in cells]
    else:  # every column as wide as its widest cell: nothing cut
        w = [max([len(cols[i])] + [len(c[i]) for c in cells]) for i in range(len(cols))]
        over = 2 + sum(w) + len(w) - 1 - tt.DEFAULT_WIDTH
        if not wide and over > 0:  # a label too long for 120 columns goes on a line of its own
            w[0] = max(len(cols[0]), w[0] - over)
        lines.append("# " + " ".join("%-*s" % (w[i], c) for i, c in enumerate(cols)).rstrip())
        for c in cells:
            if len(c[0]) > w[0]:
                lines.append("  " + c[0])
                c = [""] + c[1:]
            lines.append("  " + " ".join("%-*s" % (w[i], x) for i, x in enumerate(c)).rstrip())
    p = "" if md else "# "
    left = [m for m in SHOWN if m not in cols_m]
    if left:
        lines.append("# no value in any row, left out: %s (--wide shows them)" % ", ".join(left))
    why = {}
    for r in rows:
        if r.get("cant_tell"):
            why[r["cant_tell"]] = why.get(r["cant_tell"], 0) + 1
    lines += ["%scan't tell (%d config%s, counted inconclusive): %s" % (
        p, n, "" if n == 1 else "s", w) for w, n in why.items()]
    lines += ["%sonly in A: %s" % (p, label) for label in only_a]
    lines += ["%sonly in B: %s" % (p, label) for label in only_b]
    lines += ["%srequire failed: %s" % (p, f) for f in failed]
    lines += ["%ssuspect node %s: %s%s" % (p, s["node"], "; ".join(s["ranks"]),
                                           " (as slow in A)" if s.get("known") else "")
              for s in sus]
    return "\n".join(lines)


def out_csv(rows):
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    head = ["config"] + KEY_FIELDS + ["step_a", "step_b", "ratio", "ratio_lo", "ratio_hi",
                                      "detectable"]
    for m in SHOWN:
        head += [m + "_a", m + "_b", m + "_delta"]
    w.writerow(head + ["verdict"])  # every text field through clean: no ESC, BEL or CR raw
    for r in rows:
        s = r["step"] or {}
        line = [r["config"]] + [clean(r["key"][f], 1000) if isinstance(r["key"][f], str)
                                else r["key"][f] for f in KEY_FIELDS]
        line += [r["metrics"]["step_us"]["a"], r["metrics"]["step_us"]["b"]]
        line += ["" if not s else "%.6g" % s[k] for k in ("ratio", "lo", "hi", "detectable")]
        for m in SHOWN:
            x = r["metrics"][m]
            line += ["" if x["a"] is None else x["a"], "" if x["b"] is None else x["b"],
                     "" if x["delta"] is None else "%.6g" % x["delta"]]
        w.writerow(["" if v is None else v for v in line] + [r["verdict"]])
    return buf.getvalue().rstrip("\n")


def out_junit(rows, failed, sus):
    """JUnit XML, well-formed: every name and message through clean (no character XML 1.0
    forbids) and quoteattr/escape."""
    fails = [r for r in rows if r["verdict"] == "regression"]
    skips = [r for r in rows if r["verdict"] == "inconclusive"]
    out = ['<?xml version="1.0" encoding="UTF-8"?>',
           '<testsuite name="tpbal-compare" tests="%d" failures="%d" skipped="%d">' % (
               len(rows) + len(failed) + len(sus), len(fails) + len(failed) + len(sus),
               len(skips))]
    for r in rows:
        name = quoteattr(clean(r["config"], 1000))
        msg = "step %s; detects %s" % (fmt_ratio(r["step"]), fmt_detect(r["step"]))
        if r["verdict"] == "regression":
            out.append('  <testcase classname="tpbal.config" name=%s><failure type="regression" '
                       'message=%s/></testcase>' % (name, quoteattr(msg)))
        elif r["verdict"] == "inconclusive":
            out.append('  <testcase classname="tpbal.config" name=%s><skipped message=%s/>'
                       '</testcase>' % (name, quoteattr("inconclusive: " + msg)))
        else:
            out.append('  <testcase classname="tpbal.config" name=%s/>' % name)
    for f in failed:
        out.append('  <testcase classname="tpbal.require" name=%s><failure type="require" '
                   'message=%s/></testcase>' % (quoteattr(clean(f.split(":")[0])),
                                                quoteattr(clean(f, 2000))))
    for s in sus:
        if s.get("known"):  # as slow in A: reported, not a failure of B
            out.append('  <testcase classname="tpbal.node" name=%s><system-out>%s'
                       '</system-out></testcase>' % (quoteattr(clean(s["node"])),
                                                     escape(clean("; ".join(s["ranks"]), 2000))))
            continue
        out.append('  <testcase classname="tpbal.node" name=%s><failure type="suspect" '
                   'message=%s/></testcase>' % (quoteattr(clean(s["node"])),
                                                quoteattr(clean("; ".join(s["ranks"]), 2000))))
    out.append("</testsuite>")
    return "\n".join(out)


def render(fmt, A, B, rows, only_a, only_b, failed, sus, status, tol, covers="", wide=True):
    if fmt == "json":
        return tr.json_dumps({"a": A.path, "b": B.path, "a_conditions": A.conditions,
                              "b_conditions": B.conditions,
                              "differ": differences(A.conditions, B.conditions),
                              "delta": DELTA_DOC, "tolerance": tol,
                              "intervals_cover": covers, "rows": rows,
                              "only_in_a": only_a, "only_in_b": only_b,
                              "require_failed": failed, "suspect_nodes": sus,
                              "status": status}, indent=1)
    if fmt == "csv":
        return out_csv(rows)
    if fmt == "junit":
        return out_junit(rows, failed, sus)
    p = "" if fmt == "md" else "# "
    return "\n".join(conditions_lines(A, B, p) + [out_table(rows, only_a, only_b, failed, sus,
                                                             fmt == "md", wide)]) + \
        ("\n%sintervals cover %s" % (p, covers) if covers else "") + \
        "\n%sdeltas: %s" % (p, DELTA_DOC)

