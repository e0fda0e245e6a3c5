"""tpbal-compare's matching, noise and verdict logic on synthetic results."""
import json
import os
import tempfile
import unittest

import fixtures as fx
import tpbal_compare as cmp
from tpbal_results import BadInput


class Compare(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.d = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def run_of(self, name, configs, **kw):
        return cmp.Run(fx.write_dir(os.path.join(self.d, name), configs, **kw))

    def test_judge_directions(self):
        self.assertEqual(cmp.judge("step_us", 100, 110, 0.05, 0.0)[0], "regression")
        self.assertEqual(cmp.judge("step_us", 100, 110, 0.05, 0.2)[0], "noise")
        self.assertEqual(cmp.judge("step_us", 100, 80, 0.05, 0.0)[0], "improved")
        self.assertEqual(cmp.judge("busbw_gbs", 10, 8, 0.05, 0.0)[0], "regression")
        self.assertEqual(cmp.judge("busbw_gbs", 10, 10.2, 0.05, 0.0)[0], "ok")
        self.assertAlmostEqual(cmp.judge("step_us", 100, 150, 0.05, 0)[1], -0.5)
        self.assertEqual(cmp.judge("lb", None, 1, 0.05, 0)[0], "ok")

    def test_rows_matched_by_parameters(self):
        a = self.run_of("a", [fx.config(0), fx.config(1, policy="weighted")])
        b = self.run_of("b", [fx.config(0, step=150.0), fx.config(2, split="col")])
        rows, only_a, only_b = cmp.compare(a, b, {None: 0.05})
        self.assertEqual(len(rows), 1)
        self.assertEqual(rows[0]["verdict"], "regression")
        self.assertEqual(only_a, ["tp2 row 64x256x256 weighted fp32"])
        self.assertEqual(only_b, ["tp2 col 64x256x256 even fp32"])

    def test_requirements(self):
        b = self.run_of("b", [fx.config(0, busbw_gbs=3.0)])
        self.assertEqual(cmp.check_requires(b, [cmp.parse_require("busbw_gbs>=2")]), [])
        self.assertEqual(len(cmp.check_requires(b, [cmp.parse_require("busbw_gbs>=4@tp=2")])), 1)
        with self.assertRaises(BadInput) as e:  # a gate that checks nothing
            cmp.check_requires(b, [cmp.parse_require("busbw_gbs>=4@tp=8")])
        self.assertIn("no config of B", str(e.exception))
        for bad in ("step_us<=nan", "step_us<=inf", "lbx>=1", "lb>>1", "lb>=1@tpx=2"):
            with self.assertRaises(BadInput):
                cmp.parse_require(bad)

    def test_flags(self):
        for bad in (["--suspect-threshold", "nan"], ["--suspect-threshold", "2"],
                    ["--tolerance", "abc"], ["--format", "xml"], ["--bogus"]):
            with self.assertRaises(BadInput):
                cmp.parse_args(bad + ["a", "b"])
        o = cmp.parse_args(["--tolerance", "3%", "--tolerance", "lb=10%", "a", "b"])
        self.assertEqual(o.tol, {None: 0.03, "lb": 0.1})

    def test_baseline_of_mixed_schemas_is_one_line(self):
        self.run_of("s1", [fx.config(0)])
        self.run_of("s2", [fx.config(0)], run=fx.run_record(schema="2.0-beta"))
        with self.assertRaises(BadInput) as e:
            cmp.write_baseline([os.path.join(self.d, "s1"), os.path.join(self.d, "s2")],
                               os.path.join(self.d, "base.json"))
        self.assertIn("different schema versions (1, 2.0-beta)", str(e.exception))

    def test_baseline_never_overwrites_an_input(self):
        self.run_of("a", [fx.config(0)])
        a = os.path.join(self.d, "a")
        before = open(os.path.join(a, "results.jsonl")).read()
        with self.assertRaises(BadInput):
            cmp.write_baseline([a], os.path.join(a, "results.jsonl"))
        with self.assertRaises(BadInput):
            cmp.write_baseline([a], a)
        self.assertEqual(open(os.path.join(a, "results.jsonl")).read(), before)
        self.assertFalse(os.path.exists(a + ".tmp"))
        n, runs = cmp.write_baseline([a], os.path.join(self.d, "base.json"))
        self.assertEqual((n, runs), (1, 1))
        base = json.load(open(os.path.join(self.d, "base.json")))
        self.assertEqual(base["type"], "baseline")

    def test_suspect_names_are_clean(self):
        ranks = "id,tp,policy,rank,host,score,world_rank\n0,2,even,1,evil\x1b[2J,0.5,1\n"
        a = self.run_of("a", [fx.config(0)], ranks=ranks)
        sus = cmp.suspects(a, a, 0.75)
        self.assertEqual(sus[0]["node"], "evil?[2J")


if __name__ == "__main__":
    unittest.main()
