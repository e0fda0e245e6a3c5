#!/usr/bin/env python3
"""Assertions on a tpbal result directory (results.jsonl, results.csv, ranks.csv).

usage: check_results.py DIR CHECK [ARGS...]
  fields                      schema and required fields of every record; CSV shapes
  all-pass                    every config's --check passed
  emulate                     2 ranks, factors 1,0.5: even LB <= 0.7, weighted LB >= 0.85
                              and a shorter step, per split
  straggler RANK FRAC LO HI   in every config with tp > 1: RANK is the straggler in >= FRAC
                              of the iterations, and every other rank of its group waits
                              LO..HI us (median)
  clock RANK OFFSET TOL       rank RANK's start offset is OFFSET +- TOL us; no causality
                              violations anywhere
  spikes RANK ITER...         every config with tp > 1 lists a spike at each ITER blamed
                              on RANK
  source NAME                 every config with tp > 1 has speed_source NAME
  count N                     N config records
"""
import csv
import json
import math
import os
import sys

REQUIRED = ["backend", "world_size", "tp", "split", "policy", "m", "n", "k", "dtype", "iters",
            "shards", "speeds", "step_us", "compute_us", "comm_us", "wait_us", "lb", "u", "e",
            "tflops", "busbw_gbs", "straggler_rank", "check"]


def load(d):
    recs = [json.loads(line) for line in open(os.path.join(d, "results.jsonl"))]
    run = [r for r in recs if r["type"] == "run"]
    cfgs = [r for r in recs if r["type"] == "config"]
    assert len(run) == 1, "one run-metadata object expected"
    return run[0], cfgs


def fields(d, run, cfgs):
    assert run["schema"] >= 1 and run["world_size"] >= 1
    assert run["configs"] == len(cfgs), (run["configs"], len(cfgs))
    for c in cfgs:
        for f in REQUIRED:
            assert f in c, "missing field %s in config %d" % (f, c["id"])
        w = c["world_size"]
        for f in ["shards", "speeds", "compute_us", "comm_us", "wait_us"]:
            assert len(c[f]) == w, (f, c[f])
        assert set(c["step_us"]) >= {"median", "p95", "min", "max"}
        assert c["check"] in ("pass", "fail", "off")
        assert c["step_us"]["min"] <= c["step_us"]["median"] <= c["step_us"]["max"]
        for g in range(w // c["tp"]):
            tot = sum(c["shards"][g * c["tp"]:(g + 1) * c["tp"]])
            dim = c["k"] if c["split"] == "row" else c["n"]
            assert tot == dim, ("shards do not add up", c["shards"], dim)
    rows = list(csv.DictReader(open(os.path.join(d, "results.csv"))))
    assert len(rows) == len(cfgs), (len(rows), len(cfgs))
    for row, c in zip(rows, cfgs):
        assert int(row["id"]) == c["id"] and row["policy"] == c["policy"]
        assert math.isclose(float(row["step_us_median"]), c["step_us"]["median"])
    ranks = list(csv.DictReader(open(os.path.join(d, "ranks.csv"))))
    assert len(ranks) == sum(c["world_size"] for c in cfgs)
    left = [f for f in os.listdir(d) if f.startswith(".")]
    assert not left, ("temporary files left", left)


def emulate(cfgs):
    seen = 0
    for split in ("row", "col"):
        by = {c["policy"]: c for c in cfgs if c["tp"] == 2 and c["split"] == split}
        if not by:
            continue
        ev, we = by["even"], by["weighted"]
        print("%s: even LB %.3f step %.1f us, weighted LB %.3f step %.1f us, speed-up %.2f "
              "(predicted %.2f)" % (split, ev["lb"], ev["step_us"]["median"], we["lb"],
                                    we["step_us"]["median"], we["speedup"],
                                    we["predicted_speedup"]))
        assert ev["lb"] <= 0.7, ev["lb"]
        assert we["lb"] >= 0.85, we["lb"]
        assert we["step_us"]["median"] < ev["step_us"]["median"]
        assert we["shards"][0] > we["shards"][1], we["shards"]
        seen += 1
    assert seen, "no tp=2 configs"


def straggler(cfgs, rank, frac, lo, hi):
    for c in cfgs:
        if c["tp"] < 2:
            continue
        s = c["straggler"]
        print("config %d tp %d %s %s: straggler %d last %.0f%% lateness %.0f us, waits %s" % (
            c["id"], c["tp"], c["split"], c["policy"], s["rank"], 100 * s["last_frac"],
            s["lateness_us"], [round(w) for w in c["wait_us"]]))
        assert s["rank"] == rank and s["last_frac"] >= frac, s
        g = rank // c["tp"]
        for r in range(g * c["tp"], (g + 1) * c["tp"]):
            if r != rank:
                assert lo <= c["wait_us"][r] <= hi, (r, c["wait_us"][r])


def clock(run, cfgs, rank, offset, tol):
    got = run["clock"]["start"][rank]["offset_us"]
    end = run["clock"]["end"][rank]["offset_us"]
    print("rank %d offset: start %.3f us, end %.3f us (expected %.0f +- %.0f)" % (
        rank, got, end, offset, tol))
    assert abs(got - offset) <= tol and abs(end - offset) <= tol
    for c in cfgs:
        assert c["causality_violations"] == 0, (c["id"], c["causality_violations"])


def spikes(cfgs, rank, iters):
    for c in cfgs:
        if c["tp"] < 2:
            continue
        found = {s["iter"]: s["rank"] for s in c["spikes"]}
        print("config %d: %d spikes %s" % (c["id"], c["nspikes"], sorted(found.items())))
        for it in iters:
            assert found.get(it) == rank, ("iteration", it, found)


def main():
    d, what, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    run, cfgs = load(d)
    if what == "fields":
        fields(d, run, cfgs)
    elif what == "all-pass":
        bad = [(c["id"], c["check"], c["max_rel_err"]) for c in cfgs if c["check"] != "pass"]
        assert cfgs and not bad, bad
    elif what == "emulate":
        emulate(cfgs)
    elif what == "straggler":
        straggler(cfgs, int(args[0]), float(args[1]), float(args[2]), float(args[3]))
    elif what == "clock":
        clock(run, cfgs, int(args[0]), float(args[1]), float(args[2]))
    elif what == "spikes":
        spikes(cfgs, int(args[0]), [int(a) for a in args[1:]])
    elif what == "source":
        bad = [c["id"] for c in cfgs if c["tp"] > 1 and c["speed_source"] != args[0]]
        assert not bad, bad
    elif what == "count":
        assert len(cfgs) == int(args[0]), (len(cfgs), args[0])
    else:
        sys.exit("unknown check " + what)


if __name__ == "__main__":
    main()
