"""tpbal_model and tpbal-plan: fits that recover known models, ring scaling, shards, and
leave-one-out on synthetic results made from a known model (exact)."""
import os
import tempfile
import unittest

import fixtures as fx
import tpbal_model as tm
import tpbal_plan as plan
import tpbal_results as tr


def flops(m, n, k, split, shard):
    return tm.layer_flops(m, n, k, split, shard)


class Model(unittest.TestCase):
    def test_fit_recovers_fixed_cost_and_rate(self):
        pts = {0: [(f, 20.0 + f / 3e4) for f in (1e6, 4e6, 1.6e7)]}
        m = tm.ComputeModel(pts)
        c0, inv = m.fit[0]
        self.assertAlmostEqual(c0, 20.0, places=6)
        self.assertAlmostEqual(1 / inv, 3e4, delta=1e-3)
        self.assertFalse(m.extrapolates(0, 2e6))
        self.assertTrue(m.extrapolates(0, 1e8))

    def test_fixed_cost_never_negative(self):
        m = tm.ComputeModel({0: [(1e6, 10.0), (2e6, 30.0)]})  # a free fit says c0 = -10
        self.assertEqual(m.fit[0][0], 0.0)

    def test_ring_scaling_predicts_another_degree(self):
        lat, inv = 5.0, 1 / 2e3  # 5 us, 2 GB/s
        truth = lambda t, v: 2 * (t - 1) * lat + 2 * (t - 1) / t * v * inv
        pts = {("all-reduce", "intra-node"): [(2, v, truth(2, v)) for v in (4096, 65536, 1 << 20)]
               + [(4, 65536, truth(4, 65536))]}
        c = tm.CommModel(pts)
        key = ("all-reduce", "intra-node")
        self.assertAlmostEqual(c.time(key, 8, 1 << 20), truth(8, 1 << 20), places=6)
        self.assertTrue(c.extrapolates(key, 8, 1 << 20))
        self.assertFalse(c.extrapolates(key, 2, 65536))
        self.assertEqual(c.time(key, 1, 1 << 20), 0.0)

    def test_a_sweep_fits_a_shaped_links_burst(self):
        # tbf's burst: the first bytes pass at line rate, T = V / B - 2 ms over 256K..4M
        truth = lambda v: v / 25.0 - 2000.0  # 25 bytes a us: 200 Mbit/s
        key = ("all-reduce", "inter-node")
        sweep = [(2, v, 2 * 0.5 * truth(v)) for v in (1 << 18, 1 << 19, 1 << 20, 1 << 21, 1 << 22)]
        c = tm.CommModel({key: sweep})
        self.assertAlmostEqual(c.fit[key][0], -1000.0, places=6)  # L = -2 ms / (a (t - 1))
        self.assertAlmostEqual(c.time(key, 2, 1 << 20), truth(1 << 20), places=6)
        self.assertEqual(c.time(key, 2, 1024), 0.0)  # never below 0
        # three sizes (no sweep): L stays >= 0, fitted through the origin
        c = tm.CommModel({key: sweep[1:4]})
        self.assertEqual(c.fit[key][0], 0.0)

    def test_shards(self):
        self.assertEqual(tm.even_shards(10, 3, 1), [4, 3, 3])
        self.assertEqual(tm.even_shards(130, 2, 64), [64, 66])
        w = tm.weighted_shards(512, [2.0, 1.0], 1)
        self.assertEqual(sum(w), 512)
        self.assertEqual(w, [341, 171])
        self.assertTrue(all(s >= 64 for s in tm.weighted_shards(256, [100.0, 1.0], 64)))


def synthetic(d, runs=1):
    """Results made from a known model: rank 0 at 40 GFLOP/s, rank 1 at 20, 10 us fixed cost;
    all-reduce 4 us + V / 3 GB/s, all-gather 3 us + V / 6 GB/s, one group of two."""
    rate, c0 = [4e4, 2e4], 10.0
    t = lambda w, f: c0 + f / rate[w]
    cfgs, cid = [], 0
    for (m, n, k) in ((64, 512, 512), (128, 256, 256), (96, 384, 384)):
        for split in ("row", "col"):
            dim = k if split == "row" else n
            f1 = flops(m, n, k, split, dim)
            step = max(t(0, f1), t(1, f1))
            cfgs.append(fx.config(cid, tp=1, split=split, m=m, n=n, k=k, step=step,
                                  shards=[dim, dim], compute_us=[t(0, f1), t(1, f1)]))
            cid += 1
            for policy, shards in (("even", [dim // 2, dim - dim // 2]),
                                   ("weighted", tm.weighted_shards(dim, [2.0, 1.0], 1))):
                comp = [t(w, flops(m, n, k, split, s)) for w, s in enumerate(shards)]
                v = m * n * 4
                x = (2 * 4.0 + v / 3e3) if split == "row" else (3.0 + 0.5 * v / 6e3)
                cfgs.append(fx.config(cid, tp=2, split=split, policy=policy, m=m, n=n, k=k,
                                      step=max(comp) + x, shards=shards, compute_us=comp,
                                      xfer_us=x, comm_bytes=v))
                cid += 1
    run = fx.run_record(ranks=[{"host": "a"}, {"host": "a"}], granularity=1, dtype="fp32")
    return [fx.write_dir(os.path.join(d, "r%d" % i), cfgs, run=run) for i in range(runs)]


class Validation(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.d = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def test_leave_one_out_exact_on_a_known_model(self):
        res = tr.load(synthetic(self.d)[0])
        rows = tm.validate(res)
        self.assertEqual(len(rows), 18)
        s = tm.error_summary(rows)
        self.assertLess(s["max"], 1e-9, rows)

    def test_pooled_runs_give_one_row_per_config(self):
        dirs = synthetic(self.d, runs=3)
        res = tm.Pooled([tr.load(p) for p in dirs])
        rows = tm.validate(res)
        self.assertEqual(len(rows), 18)
        self.assertLess(tm.error_summary(rows)["max"], 1e-9)

    def test_pooled_runs_keep_their_hosts(self):
        """A packed run on one node pooled with a comm-only sweep across two: the sweep's
        groups are inter-node (its own run's hosts), so a spread world laid out one rank a
        node is predicted with that link: compute at the even shard + 2 L + V / B."""
        packed = synthetic(self.d)[0]
        lat, bw = 500.0, 25.0  # us, bytes/us
        link = [fx.config(i, comm_only="yes", m=1, n=v // 4, k=1, shards=[v // 8, v // 8],
                          comm_bytes=v, compute_us=[6000.0, 6000.0],  # a --comm-gap
                          step=6000.0 + 2 * lat + v / bw, xfer_us=2 * lat + v / bw)
                for i, v in enumerate((1 << 18, 1 << 19, 1 << 20, 1 << 21))]
        run = fx.run_record(ranks=[{"host": "a"}, {"host": "b"}], granularity=1,
                            dtype="fp32")
        across = fx.write_dir(os.path.join(self.d, "link"), link, run=run)
        out = os.path.join(self.d, "plan.json")
        res = tm.Pooled([tr.load(packed), tr.load(across)])
        self.assertEqual([c["run_hosts"] for c in res.configs][-1], ["a", "b"])
        argv = [packed, across, "--placement", "spread", "--ranks-per-node", "1", "--tp", "2",
                "--shape", "64x512x512", "--format", "json"]
        import contextlib
        import io
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            self.assertEqual(plan.main(argv), 0)
        rows = tr.json_loads(buf.getvalue())["predictions"]
        row = [r for r in rows if r["split"] == "row" and r["policy"] == "even"][0]
        comp = max(10.0 + flops(64, 512, 512, "row", 256) / r for r in (4e4, 2e4))
        want = comp + 2 * lat + 64 * 512 * 4 / bw
        self.assertAlmostEqual(row["prediction"]["step_us"], want, delta=1e-6 * want)

    def test_plan_text_json_and_shard_plan(self):
        d = synthetic(self.d)[0]
        out = os.path.join(self.d, "p.json")
        self.assertEqual(plan.main([d, "--plan-out", out, "--world", "2"]), 0)
        with open(out) as fh:
            p = tr.json_loads(fh.read())
        self.assertEqual(p["schema"], "tpbal-plan/1")
        rate = [4e4, 2e4]
        for c in p["configs"]:
            self.assertEqual(c["policy"], "weighted")  # the fastest at TP 2
            g = c["groups"][0]
            dim = c["n"] if c["split"] == "col" else c["k"]
            self.assertEqual(sum(g["shards"]), dim)
            self.assertGreater(g["shards"][0], g["shards"][1])
            # the speeds at the even shard, with the fixed cost: as the model has them
            f = flops(c["m"], c["n"], c["k"], c["split"], dim // 2)
            for w in (0, 1):
                self.assertAlmostEqual(g["speeds_gflops"][w], f / (10 + f / rate[w]) / 1e3)

    def test_bad_options(self):
        d = synthetic(self.d)[0]
        for argv in ([d, "--world", "0"], [d, "--tp", "x"], [d, "--shape", "1x2"],
                     [os.path.join(self.d, "none")]):
            with self.assertRaises(tr.BadInput):
                plan.main(argv)


if __name__ == "__main__":
    unittest.main()
