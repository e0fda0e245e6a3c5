#!/usr/bin/env python3
"""Doctored copies of a real tpbal result directory, for the tpbal-compare tests.

usage: doctor.py SRC DST KIND [ARGS]
  copy                   the same files
  tight                  every config's step samples replaced by 60 spread over a known
                         +-1 % of the median (min 0.99 x, p95 1.01 x), every rank's
                         score set to 1, no config disturbed and no other process's
                         share of the CPUs: a quiet run, so that the other doctored changes
                         are judged against known noise
  scale ID F             config ID's step times (samples, median, p95, min, max) times F,
                         its TFLOP/s, busbw and efficiency divided by F (a slower or faster run)
  noisy ID F W           config ID's step samples: 6 of them, median F times the old, spread
                         over W times (a short noisy run: too few samples to tell)
  drop ID                config ID removed (and the run record's count)
  schema N               the run record's schema version set to N
  shapes                 every config's M changed (nothing in common)
  node RANK NAME SCORE   ranks.csv: world rank RANK on host NAME (a second node), with
                         relative score SCORE in the even configs with TP > 1 (a slow node)
"""
import csv
import json
import os
import shutil
import sys


def write_csv(path, rows):
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0].keys()), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


def main():
    src, dst, kind, args = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    shutil.copytree(src, dst)
    path = os.path.join(dst, "results.jsonl")
    recs = [json.loads(line) for line in open(path)]
    out = []
    for r in recs:
        if r["type"] == "config":
            cid = r["id"]
            if kind == "scale" and cid == int(args[0]):
                f = float(args[1])
                for q in ("median", "p95", "min", "max"):
                    r["step_us"][q] *= f
                r["step_samples_us"] = [x * f for x in r["step_samples_us"]]
                for m in ("tflops", "busbw_gbs", "algbw_gbs", "e"):
                    if r.get(m) is not None:
                        r[m] /= f
            elif kind == "noisy" and cid == int(args[0]):
                f, w = float(args[1]), float(args[2])
                med = r["step_us"]["median"] * f
                r["step_samples_us"] = [med * w ** (k / 5.0 - 0.5) for k in (0, 1, 2, 3, 4, 5)]
                r["step_us"]["median"] = med
                if r.get("tflops") is not None:
                    r["tflops"] /= f
            elif kind == "drop" and cid == int(args[0]):
                continue
            elif kind == "tight":
                med = r["step_us"]["median"]
                r["step_samples_us"] = [med * (1 + 0.01 * (((i * 8) % 21) - 10) / 10.0)
                                        for i in range(61)]
                r["step_samples"] = "all"
                r["step_us"]["min"], r["step_us"]["p95"] = 0.99 * med, 1.01 * med
                r["step_us"]["max"] = 1.01 * med
                if isinstance(r.get("disturbed"), dict):  # what the run saw, replaced
                    r["disturbed"].update(verdict="steady", why=None, p95_ratio=1.01,
                                          modes_us=None)
            elif kind == "shapes":
                r["m"] += 1
        elif r["type"] == "summary" and kind == "tight":
            if isinstance(r.get("cpu_others"), dict):  # nobody else on the machine
                r["cpu_others"]["share"] = 0.0
        elif r["type"] == "run":
            if kind == "schema":
                r["schema"] = int(args[0])
            if kind == "drop":
                r["configs"] -= 1
        out.append(r)
    with open(path, "w") as fh:
        for r in out:
            fh.write(json.dumps(r) + "\n")
    if kind == "tight":
        p = os.path.join(dst, "ranks.csv")
        rows = list(csv.DictReader(open(p)))
        for row in rows:
            row["score"] = "1"
        write_csv(p, rows)
    if kind == "node":
        p = os.path.join(dst, "ranks.csv")
        rows = list(csv.DictReader(open(p)))
        for row in rows:
            if int(row["world_rank"]) == int(args[0]):
                row["host"] = args[1]
                if row["policy"] == "even" and int(row["tp"]) > 1:
                    row["score"] = args[2]
        write_csv(p, rows)


if __name__ == "__main__":
    main()
