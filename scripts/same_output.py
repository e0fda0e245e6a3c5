#!/usr/bin/env python3
"""Compare two snapshots made by scripts/same-output: everything but timings.

Exit 0 when the snapshots agree, 1 with one line per difference otherwise.
"""
import collections
import csv
import json
import os
import re
import sys

# Keys whose values are measured (they differ from run to run): only their type
# structure (number / null / list length / keys) is compared.
TIMING = {
    "step_us", "compute_us", "compute_p95_us", "wait_us", "comm_us", "wait_free_us", "xfer_us",
    "xfer_free_us", "lb", "u", "e", "e_het", "t1_us", "r", "tflops", "pct_peak_rank", "pct_peak",
    "algbw_gbs", "busbw_gbs", "speedup", "straggler_rank", "straggler", "nspikes", "spikes",
    "whatif_step_us", "slowdown", "whatif_straggler_step_us", "slowdown_straggler",
    "causality_violations", "max_rel_err", "emulate_achieved", "clock", "decomposition",
    "comm_model", "placement_effect", "rounds", "command_line", "fit", "comp_us", "idle_us",
}
# Values that follow from a measurement when the speeds were calibrated or adapted.
MEASURED_SPEEDS = {"shards", "speeds", "speed_spread", "speed_samples", "fractions",
                   "predicted_speedup"}
CSV_ID = {"id", "backend", "world_size", "tp", "split", "policy", "col_collective", "shape", "m",
          "n", "k", "dtype", "iters", "comm_only", "collective", "comm_bytes", "rank", "host",
          "device", "mem_bytes", "world_rank", "placement", "speed_source", "check"}
NUM = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


def shape(v):
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return v if not isinstance(v, str) else "str"
    if isinstance(v, (int, float)):
        return "num"
    if isinstance(v, list):
        return [shape(x) for x in v] if len(v) < 16 else "list"
    if isinstance(v, dict):
        return {k: shape(x) for k, x in v.items()}
    return type(v).__name__


VARIABLE_LISTS = {"spikes", "rounds"}


def masked(rec):
    measured = rec.get("speed_source") == "calibration" or rec.get("policy") == "adaptive"
    out = {}
    for k, v in rec.items():
        if k in VARIABLE_LISTS:
            out[k] = "list"
        elif k in TIMING or (measured and k in MEASURED_SPEEDS):
            out[k] = ("~", shape(v))
        elif rec.get("type") == "summary":
            out[k] = ("~", shape(v))
        else:
            out[k] = v
    return out


def text(path):
    with open(path, errors="replace") as f:
        lines = f.read().splitlines()
    keep = []
    for line in lines:
        if "did not settle" in line or line.startswith("tpbal: config "):
            continue  # timing-dependent warnings and progress lines
        keep.append(" ".join("#" if NUM.search(t) else t for t in line.split()))
    return keep


def csv_rows(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    head, body = rows[0], rows[1:]
    idx = [i for i, h in enumerate(head) if h in CSV_ID]
    pol = head.index("policy") if "policy" in head else None
    out = []
    for r in body:
        adaptive = pol is not None and r[pol] == "adaptive"
        out.append([r[i] for i in idx if not (adaptive and head[i] == "mem_bytes")])
    return head, out


def trace(path):
    with open(path) as f:
        t = json.load(f)
    ev = collections.Counter((e.get("name"), e.get("ph"), e.get("pid"), e.get("tid"))
                             for e in t.get("traceEvents", []))
    # measured: the slowest iteration and the steps (added by the plan-per-config change)
    other = {k: v for k, v in t.get("otherData", {}).items()
             if k not in ("slowest_iter", "steps_us")}
    return sorted(ev.items(), key=str), other


def compare(a, b, diffs):
    names = sorted(set(os.listdir(a)) | set(os.listdir(b)))
    for n in names:
        pa, pb = os.path.join(a, n), os.path.join(b, n)
        if os.path.isdir(pa) or os.path.isdir(pb):
            if not (os.path.isdir(pa) and os.path.isdir(pb)):
                diffs.append(f"{n}: a directory on one side only")
            else:
                compare(pa, pb, diffs)
            continue
        if not os.path.exists(pa) or not os.path.exists(pb):
            diffs.append(f"{pa if os.path.exists(pa) else pb}: on one side only")
            continue
        if n.endswith(".rc") or n.endswith("cal.csv"):
            va, vb = open(pa).read(), open(pb).read()
        elif n.endswith(".stdout") or n.endswith(".stderr"):
            va, vb = text(pa), text(pb)
        elif n == "results.jsonl":
            va = [masked(json.loads(x)) for x in open(pa)]
            vb = [masked(json.loads(x)) for x in open(pb)]
        elif n.endswith(".csv"):
            va, vb = csv_rows(pa), csv_rows(pb)
        elif n.startswith("trace") and n.endswith(".json"):
            va, vb = trace(pa), trace(pb)
        else:
            continue
        if va != vb:
            detail = ""
            if isinstance(va, list) and isinstance(vb, list):
                for i, (x, y) in enumerate(zip(va, vb)):
                    if x != y:
                        if isinstance(x, dict) and isinstance(y, dict):
                            ks = [k for k in set(x) | set(y) if x.get(k) != y.get(k)]
                            detail = f" (item {i}, keys {sorted(ks)[:6]})"
                        else:
                            detail = f" (item {i}: {str(x)[:160]!r} vs {str(y)[:160]!r})"
                        break
                else:
                    detail = f" (lengths {len(va)} vs {len(vb)})"
            diffs.append(f"{pa}: differs{detail}")


def main():
    if len(sys.argv) != 3:
        print("usage: same_output.py SNAP_A SNAP_B", file=sys.stderr)
        return 2
    diffs = []
    compare(sys.argv[1], sys.argv[2], diffs)
    for d in diffs:
        print(d)
    print(f"same-output: {len(diffs)} difference(s)")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
