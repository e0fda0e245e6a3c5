#!/usr/bin/env python3
"""check_standin.py - checks of tests/mpi/standin.sh on what the GPU stand-in and tpbal left.

  check_standin.py stats DIR KEY OP VALUE   the sum over DIR/stats.* of KEY compared (eq, le,
                                            ge) with VALUE; prints the sum
  check_standin.py sum DIR KEY              prints the sum over DIR/stats.* of KEY
  check_standin.py slow DIR RANK            RANK (a device at half speed) is every even
                                            config's straggler and the weighted split beats
                                            even by at least 15 % (timing: exit 75)
"""
import glob
import json
import sys


def stat_sum(d, key):
    files = glob.glob(d + "/stats.*")
    if not files:
        sys.exit("no stand-in statistics in %s (TPBAL_STANDIN_STATS)" % d)
    total = 0
    for f in files:
        for line in open(f):
            k, v = line.split()
            if k == key:
                total += int(v)
    return total


def configs(d):
    out = []
    for line in open(d + "/results.jsonl"):
        r = json.loads(line)
        if "step_us" in r and r.get("type", "config") == "config":
            out.append(r)
    return out


def slow(d, rank):
    rs = configs(d)
    even = {r["split"]: r for r in rs if r["policy"] == "even"}
    weighted = {r["split"]: r for r in rs if r["policy"] == "weighted"}
    if not even or even.keys() != weighted.keys():
        sys.exit("expected even and weighted configs of the same splits in %s" % d)
    for split, r in even.items():
        if r["straggler_rank"] != rank:
            print("%s even: straggler %s, expected rank %d" % (split, r["straggler_rank"], rank))
            sys.exit(75)
        gain = r["step_us"]["median"] / weighted[split]["step_us"]["median"]
        print("%s: straggler %d, weighted %.2fx over even" % (split, rank, gain))
        if gain < 1.15:
            sys.exit(75)


def main():
    what = sys.argv[1]
    if what == "stats":
        d, key, op, want = sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
        got = stat_sum(d, key)
        ok = {"eq": got == want, "le": got <= want, "ge": got >= want}[op]
        print("%s %d (%s %d)" % (key, got, op, want))
        sys.exit(0 if ok else 1)
    elif what == "sum":
        print(stat_sum(sys.argv[2], sys.argv[3]))
    elif what == "slow":
        slow(sys.argv[2], int(sys.argv[3]))
    else:
        sys.exit("unknown check " + what)


if __name__ == "__main__":
    main()
