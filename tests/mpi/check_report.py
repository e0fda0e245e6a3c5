#!/usr/bin/env python3
"""The numbers tpbal-report plotted (report/plots.json) against the result files they came
from (results.jsonl and the trace, read here independently).

usage: check_report.py RESULT_DIR REPORT_DIR
"""
import json
import math
import os
import sys



def trace_spans(d, config):
    """A trace read on its own: the trace, every span (tid, iter, phase) -> (ts, dur), and the
    thread names."""
    tr = json.load(open(os.path.join(d, "trace-%03d.json" % config)))
    span = {}
    for e in tr["traceEvents"]:
        if e.get("ph") == "X":
            span[(e["tid"], e["args"]["iter"], e["name"])] = (e["ts"], e["dur"])
    names = {e["tid"]: e["args"]["name"] for e in tr["traceEvents"]
             if e.get("name") == "thread_name"}
    return tr, span, names

def close(a, b, what):
    if a is None or b is None or (isinstance(b, float) and not math.isfinite(b)):
        assert a is None and (b is None or not math.isfinite(b)), (what, a, b)
        return
    assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9), (what, a, b)


def main():
    d, rep = sys.argv[1], sys.argv[2]
    recs = [json.loads(line) for line in open(os.path.join(d, "results.jsonl"))]
    cfgs = [r for r in recs if r["type"] == "config"]
    summ = [r for r in recs if r["type"] == "summary"][0]
    plots = json.load(open(os.path.join(rep, "plots.json")))
    n = 0
    for key, s in (plots.get("step") or {}).items():  # step and E per TP degree
        for tp, step, e in zip(s["tp"], s["step_us"], s["e"]):
            # a weighted series starts at the TP 1 config of its shape and split (even)
            c = [c for c in cfgs if c["tp"] == tp and (key.endswith(" %s %s" % (
                c["split"], c["policy"])) or (tp == 1 and key.rsplit(" ", 1)[0].endswith(
                    " " + c["split"]))) and key.startswith("%dx%dx%d" % (c["m"], c["n"], c["k"]))]
            assert len(c) == 1, (key, tp)
            close(step, c[0]["step_us"]["median"], "step")
            close(e, c[0]["e"], "e")
            n += 2
    w = plots.get("weighted")
    if w:
        rows = [c for c in cfgs if c["policy"] == "weighted" and c["speedup"] is not None]
        assert len(rows) == len(w["measured"])
        for c, m, p in zip(rows, w["measured"], w["predicted"]):
            close(m, c["speedup"], "speedup")
            close(p, c["predicted_speedup"], "predicted")
            n += 2
    for tp, rows in (plots.get("decomposition") or {}).items():  # every row of the summary
        want = {(x["split"], x["policy"], x["m"], x["n"], x["k"]): x for x in summ["decomposition"]
                if "tp%d" % x["tp"] == tp and x["comp_us"] is not None}  # TP 1 is in every series
        want = list(want.values())
        assert len(rows) == len(want), ("a decomposition row left out", tp, len(rows), len(want))
        for r in rows:
            d0 = [x for x in want if (x["split"], x["policy"], x["m"], x["n"], x["k"]) ==
                  (r["split"], r["policy"], r["m"], r["n"], r["k"])][0]
            for f in ("comp_us", "comm_us", "idle_us", "step_us"):
                close(r[f], d0[f], f)
                n += 1
            assert math.isclose(r["comp_us"] + r["comm_us"] + r["idle_us"], r["step_us"],
                                rel_tol=1e-9), ("bars do not add up to T", r)
    for label, s in (plots.get("comm") or {}).items():
        coll, tp = label.split()[0], int(label.split()[1][2:])
        pol = label.split()[2]
        cs = sorted([c for c in cfgs if c["collective"] == coll and c["tp"] == tp and
                     c["policy"] == pol], key=lambda c: c["comm_bytes"])
        assert [c["comm_bytes"] for c in cs] == s["bytes"], (label, s["bytes"])
        for c, t, bw in zip(cs, s["xfer_us"], s["busbw_gbs"]):
            close(t, c["xfer_us"], "xfer")
            close(bw, c["busbw_gbs"], "busbw")
            n += 2
        fit = [f for f in summ["comm_model"] if (f["collective"], f["tp"], f["policy"]) ==
               (coll, tp, pol)]
        meaningful = fit and fit[0]["quality"] in ("ok", "latency not resolved") and \
            fit[0]["bandwidth_gbs"] is not None
        assert bool(meaningful) == ("fit" in s), ("fit drawn where it means nothing, or not "
                                                 "drawn where it does", label, fit)
        if not meaningful:
            continue
        close(s["fit"]["latency_us"], fit[0]["latency_us"], "L")
        close(s["fit"]["bandwidth_gbs"], fit[0]["bandwidth_gbs"], "B")
        n += 2
    tl = plots.get("timeline")
    if tl:  # on the config the answer talks about, said in words
        assert tl["why"].startswith(("the straggler the answer names", "the shortest step the "
                                     "answer recommends", "the largest what-if")), tl["why"]
    if tl:  # the Gantt bars and the lateness map against the trace itself
        tr, span, names = trace_spans(d, tl["config"])
        for tid, name in names.items():
            for phase in ("compute", "wait", "comm"):
                want = [span[(tid, i, phase)][1] for i in tl["window"]]
                got = tl["gantt"][name][phase + "_us"]
                assert len(got) == len(want)
                for a, b in zip(got, want):
                    assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-6), (name, phase, a, b)
                    n += 1
    ar = plots.get("arrivals")
    if ar:  # the heat map: arrival after the group's median arrival, % of the trace's step
        tr, span, names = trace_spans(d, ar["config"])
        tp = tr["otherData"]["tp"]
        iters = sorted({k[1] for k in span})
        assert iters == ar["iters"], "iterations"
        steps = dict(zip(iters, tr["otherData"]["steps_us"]))
        for i in iters:  # the trace's steps against its own spans: largest group step
            grp_step = {}
            for t in names:
                c0 = span[(t, i, "compute")][0]
                x1 = span[(t, i, "comm")][0] + span[(t, i, "comm")][1]
                lo, hi = grp_step.get(t // tp, (c0, x1))
                grp_step[t // tp] = (min(lo, c0), max(hi, x1))
            want = max(hi - lo for lo, hi in grp_step.values())
            assert abs(steps[i] - want) <= 5e-3, ("steps_us", i, steps[i], want)
            n += 1
        v = sorted(abs(x) for row in ar["offset_pct"] for x in row if x == x)
        top = max([2.0] + v)  # the 99th percentile of |offset|, at least 2 %: within the data
        assert 2.0 <= ar["scale_pct"] <= top and (not v or ar["scale_pct"] >= min(top, v[len(v) // 2])), \
            ("the heat map's scale is not from the data", ar["scale_pct"], top)
        for row, name in enumerate(ar["ranks"]):
            tid = [t for t, nm in names.items() if nm == name][0]
            for col, i in enumerate(iters):
                arrive = lambda q: span[(q, i, "compute")][0] + span[(q, i, "compute")][1]
                grp = sorted(arrive(q) for q in names if q // tp == tid // tp)
                med = grp[len(grp) // 2] if len(grp) % 2 else \
                    (grp[len(grp) // 2 - 1] + grp[len(grp) // 2]) / 2
                off = arrive(tid) - med  # under 1 us: jitter, drawn as 0
                close(ar["offset_pct"][row][col], 0.0 if abs(off) < 1.0 else 100 * off / steps[i],
                      "arrival offset")
                n += 1
    rk = plots.get("ranks")
    if rk:  # per-rank bars against ranks.csv
        import csv
        rows = list(csv.DictReader(open(os.path.join(d, "ranks.csv"))))
        for cid in rk["configs"]:
            pol = [c for c in cfgs if c["id"] == cid][0]["policy"]
            mine = [r for r in rows if int(r["id"]) == cid]
            for f in ("speed", "shard", "compute_med_us", "wait_med_us", "comm_med_us"):
                for got, r in zip(rk[pol][f], mine):
                    close(got, float(r[f]), "ranks.csv " + f)
                    n += 1
    for cid, st in (plots.get("steps") or {}).items():  # distributions: the record's samples
        c = [c for c in cfgs if c["id"] == int(cid)][0]
        assert st["samples"] == len(c["step_samples_us"]), (cid, st)
        close(st["median_us"], c["step_us"]["median"], "median step")
        n += 2
    for pol, g in (plots.get("gantt_pair") or {}).items():  # the windows and slowest steps
        tr, span, names = trace_spans(d, g["config"])
        kept = sorted({k[1] for k in span})
        assert set(g["window"]) <= set(kept), (pol, g["window"])
        assert g["slowest_iter"] == tr["otherData"]["slowest_iter"], (pol, g)
        n += 2
    pp = plots.get("plan")
    if pp:  # the leave-one-out plot: measured steps are the records'
        for cid, meas in zip(pp["configs"], pp["measured_us"]):
            close(meas, [c for c in cfgs if c["id"] == cid][0]["step_us"]["median"], "plan")
            n += 1
    page = open(os.path.join(rep, "index.html")).read()
    for a in summ.get("answer", []):  # the headline says what the terminal's answer says
        if a["kind"] == "use":
            want = "Use %s %s at TP %d" % (a["split"], a["policy"], a["tp"])
            assert want in page, ("the headline lacks", want)
            n += 1
    assert "images:" not in page, "a test hook in the page"
    assert n > 0, "nothing plotted"
    print("report: %d plotted numbers match the result files" % n)


if __name__ == "__main__":
    main()
