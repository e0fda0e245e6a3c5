#!/usr/bin/env python3
"""One summary line of a tpbal result directory for bench/gpu-check.sh, from named fields
of results.jsonl (never from table columns).

usage: gpu_summary.py DIR [bare_tflops]
  prints: configs N, check C (max_rel_err E), compute TFLOP/s T (%peak P), emulation
          asked/achieved, comm path; with bare_tflops also the ratio tpbal/bare.
       gpu_summary.py --versus FULL EMULATED
  prints: the emulated run's asked factor, the SMs its green context was granted over the
          SM count, the probe's achieved factor, and the factor measured as FULL's compute
          time over EMULATED's (the same shape and dtype).
"""
import json
import os
import re
import sys


def load(d):
    recs = [json.loads(line) for line in open(os.path.join(d, "results.jsonl"))]
    return ([r for r in recs if r["type"] == "run"][0], [r for r in recs if r["type"] == "config"])


def versus(full, emulated):
    _, fc = load(full)
    run, ec = load(emulated)
    if not fc or not ec:
        print("no config measured")
        return 1
    f, e = fc[0], ec[0]
    how = run["ranks"][0]["emulation"]
    granted = re.search(r"(\d+)/(\d+) SMs", how)
    measured = max(f["compute_us"]) / max(e["compute_us"])
    print("asked %.2f, %s%s, probe achieved %.2f, measured %.2f (compute %.0f us against %.0f "
          "us at full speed)" % (
              e["emulate_asked"][0], how,
              " = %.2f of the SMs" % (int(granted.group(1)) / int(granted.group(2)))
              if granted else "", e["emulate_achieved"][0], measured, max(e["compute_us"]),
              max(f["compute_us"])))
    return 0


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--versus":
        return versus(sys.argv[2], sys.argv[3])
    d = sys.argv[1]
    bare = float(sys.argv[2]) if len(sys.argv) > 2 else None
    recs = [json.loads(line) for line in open(os.path.join(d, "results.jsonl"))]
    run = [r for r in recs if r["type"] == "run"][0]
    cfgs = [r for r in recs if r["type"] == "config"]
    if not cfgs:
        print("no config measured")
        return 1
    c = cfgs[0]
    if c.get("comm_only") == "yes":  # collectives alone: the largest message's figures
        big = max(cfgs, key=lambda x: x["comm_bytes"])
        print("configs %d, comm-only up to %d B: xfer %.1f us, busbw %.1f GB/s" % (
            len(cfgs), big["comm_bytes"], big["xfer_us"], big["busbw_gbs"]))
        return 0
    # the compute phase alone: the layer's FLOP on the slowest rank's median compute time
    comp = max(t for t in c["compute_us"] if t is not None)
    flop = 2.0 * c["m"] * c["n"] * c["k"] / c["tp"]
    tflops = flop / (comp * 1e6)
    peak = c["peak_tflops"][0]
    parts = ["configs %d" % len(cfgs),
             "check %s%s" % (c["check"], "" if c["max_rel_err"] is None
                             else " (max rel err %.1e)" % c["max_rel_err"]),
             "compute %.3g TFLOP/s" % tflops]
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
    if bare:
        ratio = tflops / bare
        parts.append("bare %.1f TFLOP/s, ratio %.3f (goal >= 0.97) %s" % (
            bare, ratio, "pass" if ratio >= 0.97 else "FAIL"))
    print(", ".join(parts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
