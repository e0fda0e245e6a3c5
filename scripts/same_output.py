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
    "algbw_gbs", "busbw_gbs", "speedup", "straggler_rank", "last_most_often", "straggler",
    "nspikes", "spikes",
    "whatif_step_us", "slowdown", "whatif_straggler_step_us", "slowdown_straggler",
    "causality_violations", "max_rel_err", "emulate_achieved", "clock", "decomposition",
    "comm_model", "placement_effect", "rounds", "command_line", "fit", "comp_us", "idle_us",
    "peak_tflops", "peak_basis",  # the host's peak from a measured clock (run record's ranks)
    "step_samples_us", "predicted_speedup",  # from the even config's measured compute
    "host_s", "inputs_s",  # host time
    "marks_within_us",  # the anchors' brackets (a GPU's)
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


# answer: its lines follow the timings; disturbed: whether the steps were one figure
VARIABLE_LISTS = {"spikes", "rounds", "answer", "disturbed"}


def masked(rec):
    measured = rec.get("speed_source") == "calibration" or rec.get("policy") == "adaptive"
    out = {}
    if rec.get("type") == "run":  # its per-rank facts hold measured clocks
        rec = dict(rec, ranks=[{k: v for k, v in r.items() if k not in TIMING}
                               for r in rec.get("ranks") or []])
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


# Words that name a config: which config an answer line picks depends on the timings.
CONFIG_WORDS = {"row", "col", "row+sp", "col+sp", "even", "weighted", "adaptive", "cost",
                "row:", "col:", "row+sp:", "col+sp:"}

# A table's step shown as how the steps looked (no one figure), or no straggler: timings.
DISTURBED = {"bimodal", "spiky", "bimodal,spiky", "-"}


def text(path):
    with open(path, errors="replace") as f:
        lines = f.read().splitlines()
    joined = []  # a line folded at 120 columns is one line again (numbers move the fold)
    for line in lines:
        if joined and joined[-1].startswith("#") and re.match(r"#\s{3,}\S", line) and \
                not re.match(r"#\s+disturbed:", line):
            joined[-1] += " " + line[1:].strip()
        else:
            joined.append(line)
    keep, answer = [], False
    for line in joined:
        if line.startswith("# answer"):  # its heading, its folds joined: the answer's lines
            answer, line = True, "# answer"
        elif answer and line.startswith("#"):
            continue  # which lines the answer has follows the timings (test_answer pins them)
        elif "did not settle" in line or line.startswith("tpbal: config ") or \
                re.match(r"#\s+disturbed:", line) or \
                (line.startswith("# warning:") and "is disturbed" in line):
            continue  # timing-dependent warnings and progress lines
        words = ["#" if NUM.search(t) or t in DISTURBED else t for t in line.split()]
        if "fastest" in line:
            words = ["?" if w in CONFIG_WORDS else w for w in words]
        keep.append(" ".join(words))
    return keep


def csv_rows(path, common=None):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    head, body = rows[0], rows[1:]
    if common is not None:  # columns added on one side are reported apart
        head_in = [h for h in head if h in common]
    else:
        head_in = head
    idx = [i for i, h in enumerate(head) if h in CSV_ID and h in head_in]
    pol = head.index("policy") if "policy" in head else None
    out = []
    for r in body:
        adaptive = pol is not None and r[pol] == "adaptive"
        out.append([r[i] for i in idx if not (adaptive and head[i] == "mem_bytes")])
    return head_in, out


def added(va, vb):
    """Keys (JSON records) or columns (CSV header) that only B has: new fields, which an
    additive change brings; the rest is compared without them."""
    return sorted(set(vb) - set(va))


def strip_new(a, b, new, at=""):
    """b without the dict keys that a lacks at the same place (recorded in new)."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = {}
        for k, v in b.items():
            if k in a:
                out[k] = strip_new(a[k], v, new, f"{at}.{k}")
            else:
                new.add(f"{at}.{k}".lstrip("."))
        return out
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b):
        return type(b)(strip_new(x, y, new, at) for x, y in zip(a, b))
    return b


def trace(path):
    with open(path) as f:
        t = json.load(f)
    # a wait span, and the flow arrow from the rank waited for, are drawn where a rank
    # waited at all: how many, and which way, is a timing
    ev = collections.Counter((e.get("name"), e.get("ph"), e.get("pid"), e.get("tid"))
                             for e in t.get("traceEvents", [])
                             if e.get("name") not in ("wait", "waited for"))
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
            new = set()
            vb = [strip_new(x, y, new) for x, y in zip(va, vb)] + vb[len(va):]
            if new:
                NEW.add(f"{n}: {', '.join(sorted(new))}")
        elif n.endswith(".csv"):
            with open(pa, newline="") as fa, open(pb, newline="") as fb:
                ha, hb = next(csv.reader(fa), []), next(csv.reader(fb), [])
            new = added(ha, hb)
            if new:
                NEW.add(f"{n}: {', '.join(new)}")
            va, vb = csv_rows(pa, set(ha) & set(hb)), csv_rows(pb, set(ha) & set(hb))
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


NEW = set()


def main():
    if len(sys.argv) != 3:
        print("usage: same_output.py SNAP_A SNAP_B", file=sys.stderr)
        return 2
    diffs = []
    compare(sys.argv[1], sys.argv[2], diffs)
    for d in diffs:
        print(d)
    for n in sorted(NEW):
        print(f"added in B (not a difference): {n}")
    print(f"same-output: {len(diffs)} difference(s)")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
