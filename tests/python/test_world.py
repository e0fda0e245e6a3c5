"""tpbal_world: the world plan's arithmetic (the 1F1B pipeline, the DP gradient all-reduce's
bytes, tokens/s per rank, the ranking) on a planner whose block and link are given, and the
leave-one-out sum of a block's GEMMs."""
import argparse
import unittest

import tpbal_model as tm
import tpbal_world as tw


class Comm:
    """A link whose all-reduce takes 1 us + 1 us per MB, intra-node only."""
    fit = {("all-reduce", "intra-node"): (0.0, 0.0)}

    @staticmethod
    def time(key, t, nbytes):
        return 1.0 + nbytes / 1e6

    @staticmethod
    def extrapolates(key, t, nbytes):
        return False


class Planner:
    """Every GEMM predicted at 1000 us / tp (even), weighted 10 % faster at tp > 1."""
    dtype, measured = "fp32", 16

    def __init__(self, world):
        self.hosts = ["n"] * world
        self.models = argparse.Namespace(comm=Comm())

    def predict(self, m, n, k, split, policy, tp, ranks, sp):
        f = 0.9 if policy == "weighted" else 1.0
        return {"step_us": 1000.0 / tp * f, "extrapolates": []}


GEMMS = [(512, 1000, 500, "col", "off"), (512, 500, 1000, "row", "off")]


def opts(**kw):
    base = dict(pp=[1, 2], dp=None, microbatches=4, layers=8, backward=2.0,
                ranks_per_node=None)
    base.update(kw)
    return argparse.Namespace(**base)


class WorldPlan(unittest.TestCase):
    def test_arithmetic(self):
        plan = tw.world_plan(Planner(4), lambda t: list(range(t)), GEMMS, 4, [1, 2], opts())
        rows = {(r["tp"], r["pp"], r["dp"]): r for r in plan["rows"]}
        self.assertEqual(set(rows), {(1, 1, 4), (1, 2, 2), (2, 1, 2), (2, 2, 1)})
        r = rows[(2, 2, 1)]  # weighted: 2 GEMMs x 1000 / 2 x 0.9 = 900 us a block
        self.assertEqual(r["policy"], "weighted")
        p = r["prediction"]
        self.assertAlmostEqual(p["stage_us"], 4 * 900.0 * 3)  # 8 blocks / 2 stages, fwd + 2 bwd
        self.assertAlmostEqual(p["pipeline_us"], (4 + 2 - 1) * p["stage_us"])
        self.assertAlmostEqual(p["bubble"], 1 / 5)
        self.assertEqual(p["dp_us"], 0.0)  # one replica: nothing to reduce
        self.assertAlmostEqual(p["tokens_per_s_rank"], 1 * 4 * 512 / (p["step_us"] * 1e-6) / 4)
        r = rows[(1, 1, 4)]  # tp 1: even, 2000 us a block; 4 replicas all-reduce 8 layers
        p = r["prediction"]
        nbytes = (1000 * 500 + 500 * 1000) * 4 * 8
        self.assertEqual(p["dp_bytes"], nbytes)
        self.assertAlmostEqual(p["dp_us"], 1.0 + nbytes / 1e6)
        self.assertAlmostEqual(p["step_us"], 4 * 8 * 2000.0 * 3 + p["dp_us"])
        self.assertEqual(p["extrapolates"], [])  # 4 ranks of the 16 measured
        tps = [x["prediction"]["tokens_per_s_rank"] for x in plan["rows"]]
        self.assertEqual(tps, sorted(tps, reverse=True))  # ranked, best first

    def test_pick_says_how_sure(self):
        """The world plan's pick against the next layout: sure only beyond the blocks'
        largest leave-one-out error on both; not sure within it; not enough data without a
        validated block or a second layout."""
        def lay(tp, rate):
            return {"tp": tp, "pp": 1, "dp": 8 // tp, "prediction": {"tokens_per_s_rank": rate}}
        best = [lay(1, 110.0), lay(2, 100.0)]  # 1.10x
        val = [{"error": -0.03}, {"error": 0.02}]
        self.assertIn("sure by the models", tw.world_sureness(best, val))  # 1.10 > 1.0609
        line = tw.world_sureness(best, [{"error": 0.06}])  # 1.10 < 1.1236
        self.assertIn("not sure, within the blocks' largest leave-one-out error (6.0 %)", line)
        self.assertIn("1.10x the next, TP 2 x PP 1 x DP 4", line)
        self.assertIn("not enough data", tw.world_sureness(best, [{"error": None}]))
        self.assertIn("not enough data", tw.world_sureness(best[:1], val))

    def test_backward_refused(self):
        for bad in (float("inf"), float("nan"), -1.0, 101.0):
            with self.assertRaises(tw.BadInput):
                tw.world_plan(Planner(4), lambda t: list(range(t)), GEMMS, 4, [1, 2],
                              opts(backward=bad))

    def test_no_layout_says_why(self):
        # --pp 3 on 64 ranks (or a DP no layout has): one line, not an empty table
        with self.assertRaises(tw.BadInput) as cm:
            tw.world_plan(Planner(4), lambda t: list(range(t)), GEMMS, 64, [1, 2], opts(pp=[3]))
        self.assertIn("TP 1,2 x PP 3 must divide them", str(cm.exception))
        with self.assertRaises(tw.BadInput):
            tw.world_plan(Planner(4), lambda t: list(range(t)), GEMMS, 4, [1, 2], opts(dp=[3]))

    def test_dp_list_and_no_link(self):
        plan = tw.world_plan(Planner(4), lambda t: list(range(t)), GEMMS, 4, [1, 2],
                             opts(dp=[2]))
        self.assertEqual({(r["tp"], r["pp"], r["dp"]) for r in plan["rows"]},
                         {(1, 2, 2), (2, 1, 2)})
        pl = Planner(4)
        pl.models.comm.fit = {}
        try:  # no all-reduce fit: no DP figure, no prediction
            plan = tw.world_plan(pl, lambda t: list(range(t)), GEMMS, 4, [1], opts(pp=[1]))
        finally:
            pl.models.comm.fit = Comm.fit
        self.assertIsNone(plan["rows"][0]["prediction"])


class BlockLeaveOneOut(unittest.TestCase):
    def test_sum_of_gemms(self):
        """A block of two configs: the models fitted without them predict each, summed."""
        res = argparse.Namespace(configs=[], blocks=[])
        cfg = dict(world_size=2, dtype="fp32", sequence_parallel="off", world_ranks=[0, 1],
                   speed_source="none", speeds=[None, None])
        cid = 0
        for tp, m, n, k, split in [(1, 64, 256, 128, "col"), (1, 64, 128, 256, "row"),
                                   (1, 64, 512, 128, "col"), (2, 64, 256, 128, "col"),
                                   (2, 64, 128, 256, "row")]:
            flops = 2.0 * m * n * k / tp
            comp = 10.0 + flops / 1e3  # c0 = 10 us, 1 GFLOP/s
            shard = (n if split == "col" else k) // tp
            xfer = 50.0 if tp == 2 else 0.0
            res.configs.append(dict(cfg, id=cid, tp=tp, m=m, n=n, k=k, split=split,
                                    policy="even", shards=[shard, shard],
                                    compute_us=[comp, comp], collective="all-gather"
                                    if split == "col" else "all-reduce", comm_bytes=m * n * 4,
                                    xfer_us=xfer, wait_us=[0, 0], comm_us=[xfer, xfer],
                                    step_us={"median": comp + xfer}))
            cid += 1
        res.blocks = [{"id": 0, "name": "b", "tp": 1, "policy": "even", "configs": [0, 1],
                       "step_us": {"median": sum(c["step_us"]["median"]
                                                 for c in res.configs[:2])}}]
        rows = tw.validate_blocks(res, ["h", "h"], 1)
        self.assertEqual(len(rows), 1)
        self.assertAlmostEqual(rows[0]["error"], 0.0, places=6)
        self.assertEqual(tm.layer_flops(64, 256, 128, "col", 256), 2.0 * 64 * 128 * 256)


if __name__ == "__main__":
    unittest.main()
