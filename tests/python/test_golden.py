"""The rules the C code and the Python tools both need, held together: tests/golden_model
(built from the C tables: the partitions, the orientations' FLOPs, the collectives' factors
and bytes, the spread placement) prints them on a grid of cases, and tpbal_model.py and
tpbal_plan.py must give the same numbers. Set TPBAL_GOLDEN to the program (the build's
tests/python.sh does); without it the comparison is skipped, said so."""
import json
import math
import os
import subprocess
import unittest

import tpbal_model as tm
import tpbal_plan as plan

GOLDEN = os.environ.get("TPBAL_GOLDEN")


def golden():
    out = subprocess.run([GOLDEN], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


@unittest.skipUnless(GOLDEN, "TPBAL_GOLDEN is not set: run tests/python.sh from a build")
class Golden(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.g = golden()

    def test_even_shards(self):
        self.assertGreater(len(self.g["even"]), 100)
        for dim, t, g, shards in self.g["even"]:
            self.assertEqual(tm.even_shards(dim, t, g), shards, (dim, t, g))

    def test_weighted_shards_round_as_the_c_does(self):
        """Largest remainder at the granularity; a shard over its quota gives a unit back,
        the one most over it first (ties: the first rank), never below one unit."""
        self.assertGreater(len(self.g["weighted"]), 100)
        for dim, gran, speeds, shards in self.g["weighted"]:
            self.assertEqual(tm.weighted_shards(dim, speeds, gran), shards, (dim, gran, speeds))

    def test_layer_flops(self):
        for m, n, k, split, shard, flop in self.g["flops"]:
            self.assertEqual(tm.layer_flops(m, n, k, split, shard), flop, (m, n, k, split))

    def test_bus_bandwidth_factors(self):
        for coll, t, factor in self.g["factor"]:
            a = tm.COLL_FACTOR[coll]  # T = a (t-1) L + a (t-1)/t V / B
            self.assertAlmostEqual(a * (t - 1) / t, factor, places=12, msg=(coll, t))

    def test_collective_choice(self):
        """tpbal_results.collective_of (the tools' labels, the model) is tpb_coll_of."""
        import tpbal_results as tr
        self.assertEqual(len(self.g["collective"]), 8)
        for split, col, sp, coll in self.g["collective"]:
            self.assertEqual(tr.collective_of(split, col, sp), coll, (split, col, sp))

    def test_collective_bytes(self):
        mdl = tm.Models([], ["h"])
        for m, n, k, dtype, split, sp, nbytes in self.g["bytes"]:
            self.assertEqual(mdl.comm_bytes(m, n, k, dtype, split, sp), nbytes,
                             (m, n, k, dtype, split, sp))

    def test_intervals_are_the_cs(self):
        """tpbal_stats (tpbal-compare's decisions) and base/interval.c (the run's answer)
        give the same interval and verdict on the same series; the paired one too."""
        import tpbal_stats as st
        names = {"regression": "worse", "improved": "better", "ok": "draw",
                 "inconclusive": "inconclusive"}
        self.assertEqual(len(self.g["intervals"]), 70)
        seen = set()
        for a, b, rounds, ratio, lo, hi, half, verdict, phalf, pverdict in self.g["intervals"]:
            r = st.compare_samples(a, b, 0.05)
            self.assertAlmostEqual(r["ratio"], ratio, places=12)
            self.assertAlmostEqual(r["lo"], lo, places=9)
            self.assertAlmostEqual(r["hi"] if math.isfinite(r["hi"]) else -1.0, hi, places=9)
            self.assertAlmostEqual(r["half"] if math.isfinite(r["half"]) else -1.0, half,
                                   places=12)
            self.assertEqual(names[r["verdict"]], verdict, (a, b))
            p = st.paired(a, b, rounds)
            self.assertAlmostEqual(p["half"] if math.isfinite(p["half"]) else -1.0, phalf,
                                   places=12)
            self.assertEqual(names[st.decide(p["ratio"], p["half"], 0.05)], pverdict)
            seen |= {verdict, pverdict}
        self.assertEqual(seen, {"better", "worse", "draw", "inconclusive"})
        for df, t in self.g["t975"]:
            self.assertAlmostEqual(st.t975(df), t, places=12)

    def test_spread_placement(self):
        for hosts, order in self.g["spread"]:
            self.assertEqual(plan.placement_ranks(hosts, "spread"), order, hosts)


if __name__ == "__main__":
    unittest.main()
