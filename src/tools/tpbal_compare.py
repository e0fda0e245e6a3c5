#!/usr/bin/env python3
"""tpbal-compare: is run B worse than run A, where, and by how much, and how sure is that?

A and B are results.jsonl files, result directories (holding results.jsonl and
ranks.csv), or baselines written by --baseline-out; A may also be nccl-tests' JSON
output (all_reduce_perf / all_gather_perf -J), matched with B's --comm-only configs by
collective, bytes and ranks. Configs are matched by their parameters (backend, ranks,
TP degree, split, policy, placement, collective, shape, dtype, comm-only message size).

The verdict of a config is its step time's (lower is better), from every iteration's
step the record keeps: the ratio of the medians B/A with a 95 % interval (order
statistics of each median, widened for autocorrelated iterations and, for a baseline,
for the spread between its runs):

  regression    the whole interval is slower than 1 + tolerance
  improved      the whole interval is faster than 1 / (1 + tolerance)
  ok            the whole interval lies within the tolerance
  inconclusive  too noisy to tell at this tolerance (run more iterations, or compare
                against a baseline of several runs)
  can't tell    counted inconclusive: a run whose own noise line says other processes
                took over 25 % of a machine's CPUs, or a config its run marked disturbed
                (bimodal or spiky steps), is not judged whatever its interval says; the
                table says which run said what (its interval is kept); a config with
                the same steps on both sides (a run against itself) is judged as usual

One run's iterations do not show how much a whole run moves from run to run (a core
that is slower for a run's length, another placement of pages): where a side is a single
run its interval is widened by a between-run spread, measured (a --baseline-out of
several runs: the spread of their medians) or given (--run-spread, default 8 %, the
robust spread, 1.4826 x the median absolute deviation of the log, of a config's median
between identical runs measured on the 2-vCPU machines tpbal is tested on:
doc/METRICS.md "Run to run"); every output says which. --run-spread 0 compares the
iterations alone.

Where nothing was decided, a row says the smallest change the samples could have
detected. TFLOP/s and, for comm-only configs, busbw follow the step; LB and the what-if
slowdown S are shown and not judged; E and the weighted speed-up are shown only where
their references (the TP-1 even config, the even config) hold in both runs. Every change
is (B - A) / |A| in the table and the JSON's "delta" alike: + means B is larger, better
for TFLOP/s, worse for a step.

Before the table: how A and B were measured (command line without --out, version,
backend, ranks and hosts, dtype, emulation, devices, libraries) and, in one line, what
differs between them; the verdict line on stderr repeats the differences.

Suspect nodes come from ranks.csv (result directories only): in the even-policy
configs with TP > 1, each rank's median relative score (min compute time in its
group / its own); a node with a rank below the threshold is suspect. A rank slowed on
purpose (--emulate-speed below 1, or --inject-delay) is never suspect. A suspect node
fails the comparison only when it got slower: one already as slow in A (its ranks' scores
in A at most 0.05 above B's) is listed and does not fail it, so a run compared with
itself holds.
"""
import math
import statistics
import sys

import tpbal_results as tr
import tpbal_schema as ts
import tpbal_text as tt
from tpbal_results import BadInput, clean
import tpbal_stats as st
import tpbal_compare_io as io_
from tpbal_compare_run import Run, entry, metric_value  # noqa: F401 (the sides)

METRICS = io_.METRICS
KEY_FIELDS = tr.KEY_FIELDS
ORDER = {"regression": 4, "inconclusive": 3, "improved": 1, "ok": 0}
NOISY_LOAD = 0.25  # other processes' CPU share called noise (base/cpuload.h's TPB_NOISY_LOAD)
RUN_SPREAD = 0.08  # a config median's spread between identical runs here (METRICS.md)
EPILOG = """exit status: 0 every config holds, 1 a regression, a failed --require or a node
that became suspect (one as slow in A is listed, not failed), 2 bad input (unreadable file, different schema versions, nothing in common, a
--require that matches no config, a tolerance that is not a fraction of 1, bad flag),
3 no regression but some config inconclusive."""


def parse_tolerance(s):
    t = s.strip()
    if "=" in t:
        raise BadInput("--tolerance '%s': one tolerance for the step (the verdict); the other "
                       "metrics follow it or are shown unjudged" % clean(s))
    scale = 100.0 if t.endswith("%") else 1.0
    try:
        v = float(t.rstrip("%")) / scale
    except ValueError:
        raise BadInput("--tolerance '%s': expected a percentage such as 5%% or a fraction "
                       "such as 0.05" % clean(s))
    if not (0.0 < v < 1.0):
        raise BadInput("--tolerance '%s': expected a fraction between 0 and 1 (5%% or "
                       "0.05); %s would be %.0f%%" % (clean(s), clean(s), 100 * v)
                       if math.isfinite(v) else "--tolerance '%s': not a number" % clean(s))
    return v


def parse_spread(s):
    """--run-spread: a percentage or fraction in [0, 1)."""
    t = s.strip()
    scale = 100.0 if t.endswith("%") else 1.0
    try:
        v = float(t.rstrip("%")) / scale
    except ValueError:
        v = math.nan
    if not (0.0 <= v < 1.0):
        raise BadInput("--run-spread '%s': expected a percentage such as 3%% or a fraction "
                       "such as 0.03 (0: none)" % clean(s))
    return v


def parse_require(spec):
    """METRIC>=VALUE or METRIC<=VALUE[@field=value,...] -> (metric, op, value, filters)."""
    body, _, sel = spec.partition("@")
    for op in (">=", "<="):
        if op in body:
            m, v = body.split(op, 1)
            m = m.strip()
            if m not in METRICS:
                raise BadInput("--require '%s': unknown metric '%s' (one of %s)" % (
                    clean(spec), clean(m), ", ".join(METRICS)))
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


def spreads(ca, cb, run_spread):
    """The two sides' between-run half-widths (log). A baseline's measured one is the
    prediction interval of one more run, so it covers the single run it is compared with;
    two single runs each get the given spread's 95 % half-width."""
    if ca["runs"] > 1 or cb["runs"] > 1:
        return ca["spread"] if ca["runs"] > 1 else 0.0, cb["spread"] if cb["runs"] > 1 else 0.0
    return st.Z95 * run_spread, st.Z95 * run_spread


def step_verdict(ca, cb, tol, run_spread=0.0):
    """The step statistics of one config (None when a side has no step)."""
    a = ca["samples"] or ca["metrics"]["step_us"]
    b = cb["samples"] or cb["metrics"]["step_us"]
    if a is None or b is None:
        return None
    if ca["runs"] > 1 and cb["runs"] > 1:  # a run (a pass) as the unit on both sides
        s = st.compare_samples(a, b, tol, ca["ordered"], cb["ordered"], 0.0, 0.0)
        r = st.compare_runs(ca.get("medians") or [], cb.get("medians") or [], tol,
                            s["half"] if s else 0.0)
        if r:
            return r
    sa, sb = spreads(ca, cb, run_spread)
    return st.compare_samples(a, b, tol, ca["ordered"], cb["ordered"], sa, sb)


def covers(A, B, run_spread):
    """What the intervals account for, in words."""
    pooled = [n for n, r in (("A", A), ("B", B))
              if any(c["runs"] > 1 for c in r.configs.values())]
    if len(pooled) == 2:
        return ("the spread between the runs (passes) of A and of B: a run as the unit, a Welch "
                "t interval on their medians' logs (%s)" % ", ".join(
                    "%s %d" % (n, max(c["runs"] for c in r.configs.values()))
                    for n, r in (("A", A), ("B", B))))
    if pooled:
        return ("the iterations and the measured spread between the runs of %s (one more run's "
                "prediction interval)" % " and ".join(pooled))
    if run_spread > 0:
        return ("the iterations and an assumed %.1f %% between runs for A and B (--run-spread; "
                "a baseline of several runs measures it)" % (100 * run_spread))
    return "the iterations only: no run-to-run variation (--run-spread 0)"


def delta(m, a, b):
    """Relative change of a metric, (b - a) / |a|: positive = B larger, better or worse
    (io_.DELTA_DOC; None if unknown)."""
    if a is None or b is None or a == 0:
        return None
    return (b - a) / abs(a)


def reference(cfg, verdicts, **fields):
    """The verdict of the reference of cfg (the TP-1 even config for E, the even one for
    the speed-up) in verdicts (by key, as key_index makes it), or None."""
    want = dict(cfg, **fields)
    return verdicts.get(tuple(sorted(want.items(), key=lambda kv: kv[0])))


def key_index(rows):
    """The rows' verdicts by key: a dict lookup each, not a scan (10^4 configs)."""
    return {tuple(sorted(r["key"].items(), key=lambda kv: kv[0])): r["verdict"] for r in rows}


def cant_tell(A, B, ca, cb):
    """Why the runs' own flags leave config (ca, cb) unjudged: a run whose noise line says
    other processes took over NOISY_LOAD of a machine's CPUs, or a config its run marked
    disturbed (bimodal or spiky steps); None where neither. Such a config is inconclusive
    ("can't tell"), never a regression or an improvement: two identical runs on a busy
    machine were called 88 % worse."""
    why = ["%s's run: other processes took %.0f %% of %s's CPUs" % (n, 100 * r.busy[0], r.busy[1])
           for n, r in (("A", A), ("B", B)) if r.busy and r.busy[0] > NOISY_LOAD]
    for n, c in (("A", ca), ("B", cb)):
        d = (c.get("record") or {}).get("disturbed")
        if isinstance(d, dict) and d.get("verdict") == "disturbed":
            why.append("%s's config disturbed (%s)" % (n, clean(str(d.get("why") or "?"), 40)))
    return "; ".join(why) or None


def compare(A, B, tol, run_spread=0.0):
    rows = []
    both = [k for k in A.configs if k in B.configs]
    prog = tr.Progress("comparing", len(both))
    for n, key in enumerate(both):
        if n % 200 == 0:
            prog.step(n)
        ca, cb = A.configs[key], B.configs[key]
        s = step_verdict(ca, cb, tol, run_spread)
        row = {"config": ca["label"], "key": dict(zip(KEY_FIELDS, key)), "metrics": {},
               "step": s, "verdict": s["verdict"] if s else "inconclusive"}
        same = ca["samples"] and ca["samples"] == cb["samples"]  # one measurement on both sides
        flags = None if same else cant_tell(A, B, ca, cb)
        if flags:  # the runs say they cannot be judged: the interval is kept, the verdict not
            row["verdict"], row["cant_tell"] = "inconclusive", flags
        for m in METRICS:
            a, b = ca["metrics"].get(m), cb["metrics"].get(m)
            row["metrics"][m] = {"a": a, "b": b, "delta": delta(m, a, b)}
        rows.append(row)
    verdicts = key_index(rows)
    for r in rows:  # derived ratios only where their references hold
        e_ref = "ok" if r["key"]["tp"] == 1 else (  # TP 1 has no weighted: even stands for it
            reference(r["key"], verdicts, tp=1, policy="even") or
            reference(r["key"], verdicts, tp=1, policy="even", **ts.variant_off()))
        s_ref = reference(r["key"], verdicts, policy="even")
        if e_ref != "ok":
            r["metrics"]["e"]["delta"] = None
            r["metrics"]["e"]["note"] = "reference changed" if e_ref else "no reference"
        if r["key"]["policy"] not in ("weighted", "cost") or s_ref != "ok":
            r["metrics"]["speedup"]["delta"] = None
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
                                                        METRICS[m][1] % v))
        if not checked:
            sel = ",".join("%s=%s" % kv for kv in filters.items())
            raise BadInput("--require %s%s%g%s: no config of B has %s%s: a gate that checks "
                           "nothing (see the configs with --format csv)" % (
                               m, op, val, "@" + clean(sel) if sel else "", m,
                               " with " + clean(sel) if sel else ""))
    return failed


def rank_scores(run):
    """{(host, world_rank): median score} over even-policy configs with TP > 1, leaving
    out the ranks slowed on purpose."""
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
        if math.isfinite(s) and w not in run.emulated:
            got.setdefault((clean(r.get("host", "?"), 64), w), []).append(s)
    return {k: statistics.median(v) for k, v in got.items()}


def suspects(A, B, threshold):
    if threshold <= 0:
        return []
    sa, sb = rank_scores(A), rank_scores(B)
    nodes, known = {}, {}
    for (host, w), s in sorted(sb.items()):
        if s < threshold:
            before = sa.get((host, w))
            nodes.setdefault(host, []).append(
                "rank %d score %.2f%s" % (w, s, "" if before is None else " (A: %.2f)" % before))
            # as slow in A (within 0.05): B did not get worse there
            was = before is not None and before <= s + KNOWN_SLOW_MARGIN
            known[host] = known.get(host, True) and was
    return [{"node": h, "ranks": v, "known": known[h]} for h, v in sorted(nodes.items())]


KNOWN_SLOW_MARGIN = 0.05


def threshold(s):
    try:
        v = float(s)
    except ValueError:
        raise BadInput("--suspect-threshold '%s': expected a number" % clean(s))
    if not 0 <= v <= 1:
        raise BadInput("--suspect-threshold '%s': expected a score from 0 to 1" % clean(s))
    return v


def parse_args(argv):
    p = tr.ArgumentParser("tpbal-compare", __doc__, epilog=EPILOG,
                          usage="tpbal-compare [options] A B\n       tpbal-compare "
                                "--baseline-out FILE RUN [RUN ...]")
    p.add_argument("paths", nargs="*", metavar="RUN", help="results (A B, or the RUNs)")
    p.add_argument("--tolerance", type=parse_tolerance, default=0.05, metavar="PCT",
                   help="the step change that counts, as 5%% or 0.05 (default 5%%)")
    p.add_argument("--require", action="append", default=[], type=parse_require,
                   metavar="SPEC",
                   help="an absolute floor or ceiling on B, METRIC>=VALUE or METRIC<=VALUE, "
                        "optionally for some configs only: "
                        "'busbw_gbs>=431@comm_bytes=268435456,tp=8'; repeatable; one that "
                        "matches no config is an error")
    p.add_argument("--run-spread", type=parse_spread, default=RUN_SPREAD, metavar="PCT",
                   help="the between-run spread (log SD) assumed for a side that is a single "
                        "run (default %.0f%%%%, measured here; 0: the iterations alone)"
                        % (100 * RUN_SPREAD))
    p.add_argument("--suspect-threshold", type=threshold, default=0.75, metavar="X",
                   help="relative score below which a node is suspect (default 0.75; 0 turns "
                        "the check off)")
    p.add_argument("--format", choices=("table", "md", "csv", "json", "junit"),
                   default="table", help="output format (default table; junit: one test "
                                         "case per config, for CI systems)")
    p.add_argument("--wide", action="store_true",
                   help="keep long lines whole when piped (by default the table's '#' lines "
                        "and the closing line fit 120 columns, a terminal's width in one)")
    p.add_argument("--fleet", action="store_true",
                   help="compare two fleet qualifications (tpbal --fleet's fleet.json, or the "
                        "directories holding them): which nodes and links got slower, by how "
                        "much, with a 95 %% interval; exit 1 when one did")
    p.add_argument("--baseline-out", metavar="FILE",
                   help="write a baseline of the RUNs (their pooled step samples and the "
                        "spread of their medians, per config)")
    return p.parse_args(argv)


NOISY_SPREAD = 0.25  # a calibration spread beyond this: its run's speeds did not settle


def noise(A, B):
    """The runs' noise that their verdicts carry (issue 44): a calibration whose speeds did
    not settle (worst spread over NOISY_SPREAD: the weighted configs' shards, and the
    machine's steadiness, are in doubt), other processes that took over NOISY_LOAD of a
    machine's CPUs during a run (tpbal measures it: the summary's cpu_others). "" when
    neither."""
    said = ["%s's calibration spread %.0f %%" % (n, 100 * r.cal_spread)
            for n, r in (("A", A), ("B", B))
            if r.cal_spread is not None and r.cal_spread > NOISY_SPREAD]
    busy = ["%s: other processes took %.0f %% of %s's CPUs" % (n, 100 * r.busy[0], r.busy[1])
            for n, r in (("A", A), ("B", B)) if r.busy and r.busy[0] > NOISY_LOAD]
    why = ["the speeds did not settle: weighted rows"] if said else []
    why += ["a machine was shared"] if busy else []
    return ("; noise: %s (%s and every verdict read with care)" % (
        " and ".join(said + busy), ", ".join(why))) if said or busy else ""


def blind(A, B, rows, run_spread):
    """Single runs on both sides: the smallest change the comparison could have called a
    regression (the median over its configs), said plainly, and how to see smaller ones.
    "" where a side has several runs or nothing was decided on samples."""
    if A.nccl_tests or any(c["runs"] > 1 for r in (A, B) for c in r.configs.values()):
        return ""
    d = sorted(r["step"]["detectable"] for r in rows
               if r["step"] and math.isfinite(r["step"]["detectable"]))
    if not d:
        return ""
    return ("; single runs on both sides: a change below %.0f %% cannot be told from run-to-run "
            "noise here (%s); tpbal --repeat 3 on both sides, or a baseline of runs, measures "
            "that spread" % (100 * d[len(d) // 2],
                             "an assumed %.0f %% between runs" % (100 * run_spread)
                             if run_spread > 0 else "the iterations alone"))


def main(argv):
    o = parse_args(argv)
    if o.fleet:
        import tpbal_fleet as tf
        bad = ("--baseline-out (a baseline of sweeps)" if o.baseline_out else
               "--require (a sweep's configs)" if o.require else
               "--format %s (a fleet prints a table or json)" % o.format
               if o.format not in ("table", "json") else None)
        if bad:
            raise BadInput("--fleet compares two fleets: %s has no effect there: drop it" % bad)
        if len(o.paths) != 2:
            raise BadInput("--fleet compares two fleets (OLD NEW), got %d" % len(o.paths))
        old, new = tf.load(o.paths[0]), tf.load(o.paths[1])
        rows, only_old, only_new = tf.compare(old, new, o.tolerance, o.run_spread)
        text, status = tf.compare_text(old, new, rows, only_old, only_new, o.tolerance)
        print(tr.json_dumps({"rows": rows, "only_old": only_old, "only_new": only_new,
                             "status": status}) if o.format == "json" else text)
        return status
    if o.baseline_out:
        if not o.paths:
            raise BadInput("--baseline-out needs at least one run")
        n, runs = io_.write_baseline([Run(p) for p in o.paths], o.paths, o.baseline_out)
        print("tpbal-compare: baseline of %d configs from %d runs written to %s" % (
            n, runs, clean(o.baseline_out)), file=sys.stderr)
        return 0
    if len(o.paths) != 2:
        raise BadInput("expected two results (A B), got %d: see tpbal-compare --help" %
                       len(o.paths))
    A, B = Run(o.paths[0]), Run(o.paths[1])
    if B.nccl_tests:
        raise BadInput("nccl-tests output is accepted as A (the reference), not as B")
    if A.nccl_tests:
        A.configs = io_.match_nccl_tests(A.configs, B.configs)
    elif str(A.schema) != str(B.schema):
        raise BadInput("A has schema version %s and B %s: compare results of the same tpbal "
                       "version" % (clean(A.schema), clean(B.schema)))
    rows, only_a, only_b = compare(A, B, o.tolerance, o.run_spread)
    if not rows:
        raise BadInput("A and B have no config in common (%d and %d configs): nothing to "
                       "compare" % (len(A.configs), len(B.configs)))
    failed = check_requires(B, o.require)
    sus = suspects(A, B, o.suspect_threshold)
    count = {v: len([r for r in rows if r["verdict"] == v]) for v in ORDER}
    new_sus = [x for x in sus if not x["known"]]
    status = 1 if count["regression"] or failed or new_sus else 3 if count["inconclusive"] else 0
    out = io_.render(o.format, A, B, rows, only_a, only_b, failed, sus, status, o.tolerance,
                     covers(A, B, o.run_spread), o.wide)
    if o.format == "table":  # md, csv, json and junit are for programs: whole
        tt.say(out, o.wide)
    else:
        print(out)
    diff = io_.differences(A.conditions, B.conditions)
    verdict = {0: "B holds against A", 1: "B is worse than A",
               3: "too noisy to tell for some configs"}[status]
    tt.say("tpbal-compare: %s: %d configs compared, %d regressed, %d improved, %d held, %d "
          "inconclusive; %d only in A, %d only in B; %d requirements failed; %d suspect nodes "
          "(%d as slow in A)%s%s"
          % (verdict, len(rows), count["regression"], count["improved"], count["ok"],
             count["inconclusive"], len(only_a), len(only_b), len(failed), len(sus),
             len(sus) - len(new_sus),
             "; A and B differ in: " + ", ".join(diff) if diff else "", noise(A, B)) +
          blind(A, B, rows, o.run_spread),
           o.wide, sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(tr.run_main("tpbal-compare", main, sys.argv[1:]))
