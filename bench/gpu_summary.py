#!/usr/bin/env python3
"""The figures of a tpbal result directory for bench/gpu-check.sh, from named fields of
results.jsonl (never from table columns), and their verdict: two lines, the figures, then
"verdict pass" or "verdict FAIL: why; why". Exit 0 when the figures pass, 3 when they miss
a goal (every goal is a timing: bench/gpu-check.sh's GPU_CHECK_LOADED=1 prints them unjudged),
1 when the directory cannot be read or holds no config.

usage: gpu_summary.py DIR [--bare TFLOPS] [--timed]
  figures: configs N, check C (max_rel_err E), compute TFLOP/s T (%peak P), emulation
           asked/achieved, comm path, host time, how far the marks may lie from their events
           (a GPU's anchors: marks_within_us); with --bare also the ratio tpbal/bare.
  judged:  --bare: tpbal's per-GEMM median against the bare loop's (gpu_bare: per-GEMM event
           pairs, the median: the same statistic) within [0.97, 1.10]; --timed: no config
           disturbed (steps bimodal or spiky: base/disturb.h).
       gpu_summary.py --versus FULL EMULATED
  figures: the emulated run's asked factor, the SMs its green context was granted over the
           SM count, the probe's achieved factor, and the factor measured as FULL's compute
           time over EMULATED's (the same shape and dtype).
  judged:  the measured factor within 10 % of the one asked, neither run disturbed.
"""
import json
import os
import re
import sys

RATIO_LO, RATIO_HI = 0.97, 1.10  # tpbal's GEMM rate against the bare loop's
EMULATION_MISS = 0.10  # the measured factor against the one asked


def load(d):
    recs = [json.loads(line) for line in open(os.path.join(d, "results.jsonl"))]
    return ([r for r in recs if r["type"] == "run"][0], [r for r in recs if r["type"] == "config"])


def disturbed(cfgs):
    """Why each disturbed config is (empty when none is)."""
    out = []
    for c in cfgs:
        d = c.get("disturbed") or {}
        if d.get("verdict") == "disturbed":
            modes = d.get("modes_us")
            out.append("config %d disturbed (%s%s)" % (
                c["id"], d.get("why"),
                ": %.0f and %.0f us" % tuple(modes) if modes else ""))
    return out


def nothing_measured():
    """No figures at all: as unreadable (exit 1), never a timing goal missed (3)."""
    print("no config measured")
    print("verdict FAIL: no config measured")
    return 1


def report(figures, failures):
    print(figures)
    print("verdict " + ("FAIL: " + "; ".join(failures) if failures else "pass"))
    return 3 if failures else 0


def versus(full, emulated):
    _, fc = load(full)
    run, ec = load(emulated)
    if not fc or not ec:
        return nothing_measured()
    f, e = fc[0], ec[0]
    how = run["ranks"][0]["emulation"]
    granted = re.search(r"(\d+)/(\d+) SMs", how)
    measured = max(f["compute_us"]) / max(e["compute_us"])
    asked = e["emulate_asked"][0]
    failures = disturbed(fc) + disturbed(ec)
    if abs(measured / asked - 1.0) > EMULATION_MISS:
        failures.append("measured %.2f misses the %.2f asked by more than %.0f %%" % (
            measured, asked, 100 * EMULATION_MISS))
    return report("asked %.2f, %s%s, probe achieved %.2f, measured %.2f (compute %.0f us against "
                  "%.0f us at full speed)" % (
                      asked, how,
                      " = %.2f of the SMs" % (int(granted.group(1)) / int(granted.group(2)))
                      if granted else "", e["emulate_achieved"][0], measured,
                      max(e["compute_us"]), max(f["compute_us"])), failures)


def figures(d, bare, timed):
    run, cfgs = load(d)
    if not cfgs:
        return nothing_measured()
    c = cfgs[0]
    failures = disturbed(cfgs) if timed else []
    if c.get("comm_only") == "yes":  # collectives alone: the largest message's figures
        big = max(cfgs, key=lambda x: x["comm_bytes"])
        return report("configs %d, comm-only up to %d B: xfer %.1f us, busbw %.1f GB/s" % (
            len(cfgs), big["comm_bytes"], big["xfer_us"], big["busbw_gbs"]), failures)
    # the compute phase alone: the layer's FLOP on the slowest rank's median compute time
    comp = max(t for t in c["compute_us"] if t is not None)
    flop = 2.0 * c["m"] * c["n"] * c["k"] / c["tp"]
    tflops = flop / (comp * 1e6)
    peak = c["peak_tflops"][0]
    parts = ["configs %d" % len(cfgs),
             "check %s%s" % (c["check"], "" if c["max_rel_err"] is None
                             else " (max rel err %.1e)" % c["max_rel_err"]),
             "compute %.3g TFLOP/s (%.1f us a GEMM)" % (tflops, comp)]
    if peak:
        parts.append("%.0f%% of the peak %.3g TFLOP/s" % (100.0 * tflops / peak, peak))
    if (c.get("device_shared") or 1) > 1:
        parts.append("%d ranks share a GPU: correctness only, not speed" % c["device_shared"])
    if any(a != 1.0 for a in c["emulate_asked"]):
        parts.append("emulation %s asked %s achieved %s" % (
            run["ranks"][1]["emulation"] if len(run["ranks"]) > 1 else run["ranks"][0]["emulation"],
            c["emulate_asked"], ["%.2f" % x for x in c["emulate_achieved"]]))
    if c["tp"] > 1 and c["busbw_gbs"] is not None:
        parts.append("busbw %.1f GB/s" % c["busbw_gbs"])
    if c.get("host_s") is not None:
        parts.append("host %.2f s" % c["host_s"])
    within = [w for w in c.get("marks_within_us") or [] if w is not None]
    if within and max(within) > 0:  # a GPU's marks: how far from their events (the anchors)
        parts.append("marks within %.2g us" % max(within))
    if bare:
        ratio = tflops / bare
        parts.append("bare %.3g TFLOP/s, tpbal/bare %.3f (goal %.2f-%.2f)" % (
            bare, ratio, RATIO_LO, RATIO_HI))
        if not RATIO_LO <= ratio <= RATIO_HI:
            failures.append("tpbal/bare %.3f outside [%.2f, %.2f]" % (ratio, RATIO_LO, RATIO_HI))
    return report(", ".join(parts), failures)


def main(argv):
    try:
        if len(argv) == 3 and argv[0] == "--versus":
            return versus(argv[1], argv[2])
        if not argv or argv[0].startswith("-"):
            raise ValueError("give a result directory")
        bare, timed, rest = None, False, argv[1:]
        while rest:
            if rest[0] == "--bare" and len(rest) > 1:
                bare, rest = float(rest[1]), rest[2:]
            elif rest[0] == "--timed":
                timed, rest = True, rest[1:]
            else:
                raise ValueError("unknown argument %r" % rest[0])
        return figures(argv[0], bare, timed)
    except (OSError, ValueError, KeyError, IndexError) as e:
        print("cannot read the result: %s" % e)
        print("verdict FAIL: no figures")
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
