#!/usr/bin/env python3
"""toolscale.py - how tpbal-plan, tpbal-report and tpbal-compare scale with configs (issue 57:
plan and report were quadratic, 63 s and 75 s at 2,000 configs).

    bench/toolscale.py TEMPLATE_DIR BINDIR [N ...]

TEMPLATE_DIR is a real run's --out (its run line, configs, ranks.csv and traces are cloned);
BINDIR holds the built tools (build/src/tools). For each N (default 500 1000 2000 10000) it
writes a folder of N configs (the template's configs over and over, each with its own id and
M, so that every key differs; ranks.csv rows and a trace each), runs each tool on it
(tpbal-compare DIR against itself) and prints the wall seconds, the seconds per 1,000 configs
and whether a progress line reached stderr. Linear scaling keeps the seconds per 1,000 configs
flat across N.

Past 200 configs tpbal-plan validates its models in 10 folds instead of one config at a time
(leave-one-out refits the models once a config: quadratic). The reference for that choice is
leave-one-out itself: for N in (200, 400) it runs both on the same folder and prints their
error summaries and the largest difference of a config's prediction."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time


def clone(template, n, out):
    lines = [json.loads(l) for l in open(os.path.join(template, "results.jsonl")) if l.strip()]
    run = lines[0]
    cfgs = [r for r in lines if r.get("type") == "config"]
    summary = [r for r in lines if r.get("type") == "summary"]
    head, *rows = open(os.path.join(template, "ranks.csv")).read().splitlines()
    cols = head.split(",")
    os.makedirs(out)
    run["configs"] = n
    run["files"] = ["results.jsonl", "ranks.csv"]
    with open(os.path.join(out, "results.jsonl"), "w") as js, \
            open(os.path.join(out, "ranks.csv"), "w") as rk:
        js.write(json.dumps(run) + "\n")
        rk.write(head + "\n")
        for i in range(n):
            src = cfgs[i % len(cfgs)]
            c = dict(src, id=i, m=src["m"] + 8 * (i // len(cfgs)))
            c["trace"] = "trace-%03d.json" % i
            js.write(json.dumps(c) + "\n")
            for r in rows:
                f = r.split(",")
                if int(f[0]) != src["id"]:
                    continue
                f[0], f[cols.index("m")] = str(i), str(c["m"])
                rk.write(",".join(f) + "\n")
            shutil.copyfile(os.path.join(template, "trace-%03d.json" % src["id"]),
                            os.path.join(out, c["trace"]))
        for s in summary:
            js.write(json.dumps(s) + "\n")


def timed(cmd):
    t0 = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    dt = time.monotonic() - t0
    progress = any(re.match(r"tpbal-(plan|report|compare): .* of [0-9]+ .*, [0-9]+ s$", l)
                   for l in p.stderr.splitlines())
    return dt, p.returncode, progress, p.stderr.strip().splitlines()[-1:] if p.returncode > 1 else []


def folds_against_loo(template, tmp):
    """The 10-fold validation against leave-one-out on the same configs."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src",
                                    "tools"))
    import tpbal_model as tm
    import tpbal_results as tr
    print("%7s %-14s %9s %9s %9s %s" % ("configs", "validation", "median", "p90", "max",
                                        "largest |pred diff|"))
    for n in (200, 400):
        d = os.path.join(tmp, "v%d" % n)
        clone(template, n, d)
        res = tm.modelled(tr.load(d))
        t0 = time.monotonic()
        loo = tm.validate(res, folds=0)
        t1 = time.monotonic()
        kf = tm.validate(res, folds=10)
        t2 = time.monotonic()
        diff = max(abs(a["predicted_us"] / b["predicted_us"] - 1.0) for a, b in zip(loo, kf)
                   if a["predicted_us"] and b["predicted_us"])
        for name, rows, dt in (("leave-one-out", loo, t1 - t0), ("10-fold", kf, t2 - t1)):
            s = tm.error_summary(rows)
            print("%7d %-14s %8.2f%% %8.2f%% %8.2f%% %s (%.1f s)" % (
                n, name, 100 * s["median"], 100 * s["p90"], 100 * s["max"],
                "%.3f%%" % (100 * diff) if name == "10-fold" else "", dt))
        shutil.rmtree(d)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    template, bindir = sys.argv[1], sys.argv[2]
    sizes = [int(x) for x in sys.argv[3:]] or [500, 1000, 2000, 10000]
    tmp = tempfile.mkdtemp(prefix="toolscale.")
    try:
        folds_against_loo(template, tmp)
        print("%-14s %7s %9s %12s %4s %s" % ("tool", "configs", "wall s", "s / 1000 cfg",
                                            "rc", "progress line"))
        for n in sizes:
            d = os.path.join(tmp, "n%d" % n)
            clone(template, n, d)
            for name, cmd in (("tpbal-plan", [os.path.join(bindir, "tpbal-plan"), d]),
                              ("tpbal-report", [os.path.join(bindir, "tpbal-report"), "--out", d + ".rep", d]),
                              ("tpbal-compare", [os.path.join(bindir, "tpbal-compare"), d, d])):
                dt, rc, prog, err = timed(cmd)
                print("%-14s %7d %9.2f %12.2f %4d %s %s" % (name, n, dt, 1000.0 * dt / n, rc,
                                                          "yes" if prog else "no",
                                                          " ".join(err)))
                sys.stdout.flush()
            shutil.rmtree(d)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
