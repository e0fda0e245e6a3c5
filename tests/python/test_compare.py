"""tpbal-compare's matching, verdicts, references and inputs on synthetic results."""
import io
import json
import os
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

import fixtures as fx
import tpbal_compare as cmp
import tpbal_compare_io as cio
import tpbal_results as tr
from tpbal_results import BadInput


def run_tool(argv):
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        rc = tr.run_main("tpbal-compare", cmp.main, argv)
    return rc, out.getvalue(), err.getvalue()


class Compare(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.d = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def dir_of(self, name, configs, **kw):
        return fx.write_dir(os.path.join(self.d, name), configs, **kw)

    def run_of(self, name, configs, **kw):
        return cmp.Run(self.dir_of(name, configs, **kw))

    def test_rows_matched_by_parameters(self):
        a = self.run_of("a", [fx.config(0), fx.config(1, policy="weighted")])
        b = self.run_of("b", [fx.config(0, step=150.0), fx.config(2, split="col")])
        rows, only_a, only_b = cmp.compare(a, b, 0.05)
        self.assertEqual(len(rows), 1)
        self.assertEqual(rows[0]["verdict"], "regression")
        self.assertAlmostEqual(rows[0]["step"]["ratio"], 1.5)
        self.assertEqual(only_a, ["tp2 row 64x256x256 weighted fp32"])
        self.assertEqual(only_b, ["tp2 col 64x256x256 even fp32"])

    def test_block_twins_kept_apart(self):
        """A block of two identical GEMMs: both compared, each with its own (one was lost)."""
        a = self.run_of("a", [fx.config(0, block=0, block_pos=0),
                              fx.config(1, block=0, block_pos=1, step=200.0)])
        b = self.run_of("b", [fx.config(0, block=0, block_pos=0),
                              fx.config(1, block=0, block_pos=1, step=300.0)])
        rows, only_a, only_b = cmp.compare(a, b, 0.05)
        self.assertEqual(len(rows), 2)
        self.assertEqual((only_a, only_b), ([], []))
        by = {r["config"]: r for r in rows}
        self.assertAlmostEqual(by["tp2 row 64x256x256 even fp32"]["step"]["ratio"], 1.0)
        self.assertAlmostEqual(by["tp2 row 64x256x256 even fp32 (block GEMM 1)"]["step"]["ratio"],
                               1.5)

    def test_exit_codes_and_inconclusive(self):
        a = self.dir_of("a", [fx.config(0)])
        self.assertEqual(run_tool([a, a])[0], 0)  # a run against itself holds
        noisy = self.dir_of("n", [fx.config(0, step_samples_us=fx.samples(104.0, 8, 0.5))])
        rc, out, err = run_tool([a, noisy])
        self.assertEqual(rc, 3)
        self.assertIn("inconclusive", out)
        self.assertIn("too noisy to tell", err)
        slow = self.dir_of("s", [fx.config(0, step=120.0)])
        self.assertEqual(run_tool(["--run-spread", "0", a, slow])[0], 1)  # the iterations alone
        self.assertEqual(run_tool([a, slow])[0], 3)  # 20 %: within two runs' spread here
        rc, out, _ = run_tool(["--run-spread", "0", "--format", "junit", a, slow])
        self.assertIn('<failure type="regression"', out)
        self.assertIn('tests="1" failures="1"', out)

    def test_run_to_run_spread(self):
        """Two single runs 7 % apart with tight iterations: a regression on their iterations
        alone, inconclusive once the between-run spread (8 %) is allowed for; a baseline of
        several runs brings its own spread; every output says what its intervals cover."""
        a = self.dir_of("a", [fx.config(0, step_samples_us=fx.samples(100.0, 60, 0.002))])
        b = self.dir_of("b", [fx.config(0, step_samples_us=fx.samples(107.0, 60, 0.002))])
        rc, out, _ = run_tool(["--run-spread", "0", a, b])
        self.assertEqual(rc, 1)
        self.assertIn("intervals cover the iterations only", out)
        rc, out, _ = run_tool([a, b])
        self.assertEqual(rc, 3)
        self.assertIn("the iterations and an assumed 8.0 % between runs for A and B (--run-spread",
                      out)
        far = self.dir_of("f", [fx.config(0, step_samples_us=fx.samples(160.0, 60, 0.002))])
        self.assertEqual(run_tool([a, far])[0], 1)  # a real change still fails
        self.assertEqual(run_tool([a, a])[0], 0)  # and a run against itself holds
        base = os.path.join(self.d, "base.json")
        self.assertEqual(run_tool(["--baseline-out", base, a, a])[0], 0)
        rc, out, _ = run_tool(["--format", "json", base, b])
        doc = json.loads(out)
        self.assertIn("the measured spread between the runs of A", doc["intervals_cover"])
        self.assertNotIn("assumed", doc["intervals_cover"])  # the baseline's covers one run
        for bad in ("-1", "x", "100%"):
            self.assertEqual(run_tool(["--run-spread", bad, a, b])[0], 2)
        out = io.StringIO()  # the help's own percentages (argparse formats them again)
        with redirect_stdout(out), self.assertRaises(SystemExit) as e:
            cmp.main(["--help"])
        self.assertEqual(e.exception.code, 0)
        self.assertIn("default 8%", out.getvalue())

    def test_noisy_or_disturbed_runs_cannot_tell(self):
        """A run whose own noise line says others took over a quarter of the CPUs makes every
        config "can't tell" (inconclusive, exit 3), never a regression: two identical runs on
        a busy machine were called 88 % worse (issue 56); a config its run marked disturbed
        is not judged either, and the table says why."""
        quiet = [fx.config(0, step_samples_us=fx.samples(100.0, 60, 0.002))]
        slow = [fx.config(0, step_samples_us=fx.samples(190.0, 60, 0.002))]
        busy = {"type": "summary", "cpu_others": {"share": 0.4, "host": "vm"}}
        a = self.dir_of("qa", quiet)
        b = self.dir_of("sb", slow)
        self.assertEqual(run_tool([a, b])[0], 1)  # quiet runs: a regression
        nb = self.dir_of("nb", slow, summary=busy)
        rc, out, err = run_tool([a, nb])
        self.assertEqual(rc, 3, out + err)
        self.assertIn("can't tell", out)
        self.assertIn("B's run: other processes took 40 % of vm's CPUs", out)
        self.assertNotIn("regress", out.split("deltas:")[0].lower())
        calm = {"type": "summary", "cpu_others": {"share": 0.1, "host": "vm"}}
        self.assertEqual(run_tool([a, self.dir_of("cb", slow, summary=calm)])[0], 1)
        dis = [fx.config(0, step_samples_us=fx.samples(190.0, 60, 0.002),
                         disturbed={"verdict": "disturbed", "why": "bimodal"})]
        rc, out, _ = run_tool([a, self.dir_of("db", dis)])
        self.assertEqual(rc, 3)
        self.assertIn("B's config disturbed (bimodal)", out)
        rc, out, _ = run_tool(["--format", "json", a, nb])
        row = json.loads(out)["rows"][0]
        self.assertEqual((row["verdict"], row["step"]["verdict"]), ("inconclusive", "regression"))
        self.assertIn("other processes took", row["cant_tell"])

    def repeat_of(self, name, centres):
        """A --repeat run: one pass folder per centre, repeat.json naming them."""
        d = os.path.join(self.d, name)
        for i, c in enumerate(centres):
            self.dir_of(os.path.join(name, "pass-%d" % (i + 1)),
                        [fx.config(0, step_samples_us=fx.samples(c, 60, 0.002))])
        with open(os.path.join(d, "repeat.json"), "w") as fh:
            json.dump({"type": "repeat", "pass_dirs": ["pass-%d" % (i + 1)
                                                       for i in range(len(centres))]}, fh)
        return d

    def test_repeat_runs_take_a_pass_as_the_unit(self):
        """Two --repeat runs of 3 passes: the ratio of the passes' geometric means with a
        Welch t interval on their logs (known answer: equal spreads, 4 df, t 2.776); a run
        against itself holds; a pass folder is a run of its own; a single-run pair says
        what it cannot see."""
        import math
        a = self.repeat_of("ra", [100.0, 102.0, 98.0])
        b = self.repeat_of("rb", [110.0, 112.2, 107.8])
        rc, out, _ = run_tool(["--format", "json", a, b])
        doc = json.loads(out)
        step = doc["rows"][0]["step"]
        la = [math.log(x) for x in (100.0, 102.0, 98.0)]
        lb = [math.log(x) for x in (110.0, 112.2, 107.8)]
        ma, mb = sum(la) / 3, sum(lb) / 3
        va = sum((x - ma) ** 2 for x in la) / 2
        vb = sum((x - mb) ** 2 for x in lb) / 2
        df = (va / 3 + vb / 3) ** 2 / ((va / 3) ** 2 / 2 + (vb / 3) ** 2 / 2)
        self.assertEqual(int(df), 4)
        half = 2.776 * math.sqrt(va / 3 + vb / 3)
        self.assertAlmostEqual(step["ratio"], math.exp(mb - ma), places=4)
        self.assertAlmostEqual(step["half"], half, places=3)
        self.assertEqual(rc, 1)  # 10 % slower, the interval [1.06, 1.14] beyond 5 %
        self.assertIn("a run as the unit", doc["intervals_cover"])
        self.assertEqual(run_tool([a, a])[0], 0)
        self.assertEqual(run_tool([os.path.join(a, "pass-1"), os.path.join(b, "pass-1")])[0], 3)
        _, _, err = run_tool(["--wide", os.path.join(a, "pass-1"), os.path.join(b, "pass-1")])
        self.assertIn("single runs on both sides: a change below", err)
        for bad in ("{", '{"type": "repeat", "pass_dirs": ["../x"]}',
                    '{"type": "repeat", "kind": "fleet", "pass_dirs": ["pass-1"]}'):
            with open(os.path.join(b, "repeat.json"), "w") as fh:
                fh.write(bad)
            rc, _, err = run_tool([a, b])
            self.assertEqual(rc, 2, bad)  # one line, no traceback
            self.assertIn("repeat", err)

    def test_derived_ratios_only_where_their_references_hold(self):
        # E of the TP-2 config: its TP-1 reference changed -4.5 % in B (the step of TP 2
        # did not): E is not judged, nor shown as a change
        a = self.run_of("a", [fx.config(0, tp=1, step=200.0), fx.config(1, tp=2, e=0.7)])
        b = self.run_of("b", [fx.config(0, tp=1, step=191.0), fx.config(1, tp=2, e=0.35)])
        rows, _, _ = cmp.compare(a, b, 0.05)
        tp2 = [r for r in rows if r["key"]["tp"] == 2][0]
        self.assertEqual(tp2["verdict"], "ok")
        self.assertIsNone(tp2["metrics"]["e"]["delta"])
        self.assertEqual(tp2["metrics"]["e"]["note"], "reference changed")

    def test_e_of_a_weighted_row_against_the_tp1_even_config(self):
        # TP 1 has no weighted config: a weighted row's E is judged when TP 1 even held
        a = self.run_of("a", [fx.config(0, tp=1, step=200.0),
                              fx.config(1, tp=2, policy="weighted", e=0.7)])
        b = self.run_of("b", [fx.config(0, tp=1, step=200.0),
                              fx.config(1, tp=2, policy="weighted", e=0.35)])
        rows, _, _ = cmp.compare(a, b, 0.05)
        w = [r for r in rows if r["key"]["policy"] == "weighted"][0]
        self.assertAlmostEqual(w["metrics"]["e"]["delta"], -0.5)  # (B - A) / |A|
        self.assertNotIn("note", w["metrics"]["e"])

    def test_delta_sign_is_the_tables(self):
        # a step 1.5x as long: delta +0.5 in the JSON, +50.0% in the table's step column
        a = self.run_of("a", [fx.config(0)])
        b = self.run_of("b", [fx.config(0, step=150.0)])
        rows, _, _ = cmp.compare(a, b, 0.05)
        self.assertAlmostEqual(rows[0]["metrics"]["step_us"]["delta"], 0.5)
        self.assertTrue(cmp.io_.fmt_ratio(rows[0]["step"]).startswith("+50.0%"))
        self.assertIn("+ means B is larger", cmp.io_.render("json", a, b, rows, [], [], [], [],
                                                            1, 0.05))

    def test_noise_carried_into_the_verdict(self):
        """A run whose calibration did not settle (spread 284 %) says so in the verdict's
        line; a settled one (4 %) does not."""
        a = self.dir_of("a", [fx.config(0, speed_spread=[0.04, 0.02])])
        noisy = self.dir_of("n", [fx.config(0, speed_spread=[2.84, 0.3])])
        _, _, err = run_tool([a, a])
        self.assertNotIn("noise:", err)
        _, _, err = run_tool([a, noisy])  # folded at 120 columns by default
        self.assertTrue(all(len(x) <= 120 for x in err.splitlines()), err)
        _, _, err = run_tool([a, noisy, "--wide"])  # whole, for grep
        self.assertIn("noise: B's calibration spread 284 % (the speeds did not settle", err)
        _, _, err = run_tool([noisy, noisy, "--wide"])
        self.assertIn("noise: A's calibration spread 284 % and B's calibration spread 284 %",
                      err)

    def test_long_labels_keep_the_table_in_120_columns(self):
        """A --block run's labels (issue 56: rows of 132 columns): piped, a label too long for
        120 columns goes on its own line above its figures, whole; --wide keeps one row."""
        cfgs = [fx.config(i, policy="weighted", m=512, n=3584, k=1792, block_pos=i, shape="q",
                          tflops=1.0, busbw_gbs=2.0, speedup=1.1, slowdown=1.0)
                for i in range(3)]
        a = self.dir_of("a", cfgs)
        rc, out, err = run_tool([a, a])
        lines = (out + err).splitlines()
        self.assertTrue(all(len(x) <= 120 for x in lines), [x for x in lines if len(x) > 120])
        self.assertTrue(any(x.strip().endswith("(block GEMM 2)") for x in lines), lines)
        rc, out, err = run_tool([a, a, "--wide"])
        self.assertTrue(any("(block GEMM 2)" in x and "ok" in x for x in (out + err).splitlines()))

    def test_conditions_differ(self):
        a = self.run_of("a", [fx.config(0)],
                        run=fx.run_record(command_line="/x/tpbal --tp 2 --out /r/a --force"))
        b = self.run_of("b", [fx.config(0)], run=fx.run_record(command_line="/y/tpbal --tp 2 -o /r/b"))
        self.assertEqual(a.conditions["command"], "tpbal --tp 2")
        self.assertEqual(cmp.io_.differences(a.conditions, b.conditions), [])
        c = self.run_of("c", [fx.config(0)], run=fx.run_record(
            command_line="tpbal --tp 2 --emulate-speed 1,0.5",
            ranks=[{"host": "vm", "emulate_speed": 1.0}, {"host": "vm", "emulate_speed": 0.5}]))
        self.assertEqual(cmp.io_.differences(a.conditions, c.conditions),
                         ["command", "ranks", "emulation"])
        line = cmp.io_.conditions_lines(a, c)[-1]
        self.assertTrue(line.startswith("# A and B differ in: command, ranks (2 on ? / 2 on vm), "
                                        "emulation (none / 1,0.5)"), line)

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
                    ["--tolerance", "abc"], ["--tolerance", "3"], ["--tolerance", "150%"],
                    ["--tolerance", "step_us=10%"], ["--tolerance", "nan"],
                    ["--format", "xml"], ["--bogus"]):
            with self.assertRaises(BadInput):
                cmp.parse_args(bad + ["a", "b"])
        self.assertEqual(cmp.parse_args(["--tolerance", "3%", "a", "b"]).tolerance, 0.03)
        self.assertEqual(cmp.parse_args(["--tolerance", "0.1", "a", "b"]).tolerance, 0.1)

    def test_emulated_ranks_are_never_suspect(self):
        ranks = ("id,tp,policy,rank,host,score,world_rank\n"
                 "0,2,even,0,node-a,1,0\n0,2,even,1,node-a,0.6,1\n")
        asked = fx.config(0, emulate_asked=[1, 0.6], world_ranks=[0, 1])
        a = self.run_of("a", [asked], ranks=ranks)
        self.assertEqual(cmp.suspects(a, a, 0.75), [])
        plain = self.run_of("p", [fx.config(0)], ranks=ranks)
        sus = cmp.suspects(plain, plain, 0.75)
        self.assertEqual((sus[0]["node"], sus[0]["known"]), ("node-a", True))  # as slow in A
        fine = self.run_of("f", [fx.config(0)], ranks=ranks.replace("node-a,0.6", "node-a,0.9"))
        self.assertFalse(cmp.suspects(fine, plain, 0.75)[0]["known"])  # it got slower
        delayed = self.run_of("d", [fx.config(0)], ranks=ranks,
                              run=fx.run_record(inject_delay_rank=1))
        self.assertEqual(cmp.suspects(delayed, delayed, 0.75), [])  # --inject-delay 1:...
        evil = ranks.replace("node-a,0.6", "evil\x1b[2J,0.6")
        self.assertEqual(cmp.suspects(*[self.run_of("e", [fx.config(0)], ranks=evil)] * 2,
                                      0.75)[0]["node"], "evil?[2J")

    def test_baseline_pools_runs_and_refuses_bad_targets(self):
        a = self.dir_of("a", [fx.config(0)])
        b = self.dir_of("b", [fx.config(0, step=103.0)])
        with open(os.path.join(a, "results.jsonl")) as fh:
            before = fh.read()
        for target in (os.path.join(a, "results.jsonl"), a):
            with self.assertRaises(BadInput):
                cio.write_baseline([cmp.Run(a), cmp.Run(b)], [a, b], target)
        with open(os.path.join(a, "results.jsonl")) as fh:
            self.assertEqual(fh.read(), before)
        self.assertFalse(os.path.exists(a + ".tmp"))
        out = os.path.join(self.d, "base.json")
        self.assertEqual(cio.write_baseline([cmp.Run(a), cmp.Run(b)], [a, b], out), (1, 2))
        base = cmp.Run(out)
        c = list(base.configs.values())[0]
        self.assertEqual((c["runs"], len(c["samples"])), (2, 82))
        self.assertGreater(c["spread"], 0.0)  # the 3 % between the runs counts
        s2 = self.dir_of("s2", [fx.config(0)], run=fx.run_record(schema="2.0-beta"))
        with self.assertRaises(BadInput) as e:
            cio.write_baseline([cmp.Run(a), cmp.Run(s2)], [a, s2], out)
        self.assertIn("different schema versions (1, 2.0-beta)", str(e.exception))

    def test_nccl_tests_as_the_reference(self):
        cfg = fx.config(0, comm_only="yes", collective="all-reduce", comm_bytes=1048576,
                        busbw_gbs=3.0, step=200.0)
        b = self.dir_of("b", [cfg])
        doc = {"version": 2, "args": ["/opt/nccl-tests/build/all_reduce_perf", "-b", "1M"],
               "config": {"devices": [{"rank": 0}, {"rank": 1}]},
               "results": [{"size": 1048576, "count": 262144, "type": "float",
                            "out_of_place": {"time": 150.0, "alg_bw": 7, "bus_bw": 7.0},
                            "out_of_place_per_iter": {"times_us": fx.samples(150.0)}},
                           {"size": 4096, "out_of_place": {"time": 10.0, "bus_bw": 0.4}}]}
        a = os.path.join(self.d, "nccl.json")
        with open(a, "w") as fh:
            json.dump(doc, fh)
        rc, out, _ = run_tool(["--format", "json", a, b])
        self.assertEqual(rc, 1)  # 200 us against nccl-tests' 150 us
        rows = json.loads(out)["rows"]
        self.assertEqual(len(rows), 1)
        self.assertEqual(rows[0]["verdict"], "regression")
        self.assertAlmostEqual(rows[0]["metrics"]["busbw_gbs"]["a"], 7.0)
        rc, _, err = run_tool([b, a])
        self.assertEqual(rc, 2)
        self.assertIn("accepted as A", err)


if __name__ == "__main__":
    unittest.main()


class FleetCompare(unittest.TestCase):
    """tpbal-compare --fleet: the run spread as for a sweep's two single runs (1.96 x it on
    each side), and rates that are not rates refused."""

    @staticmethod
    def doc(gflops, busbw=10.0):
        return {"ranks": [{"rank": 0, "host": "n1", "gflops": gflops, "gflops_half": 0.0}],
                "nodes": [{"node": 0, "host": "n1", "allreduce_busbw_gbs": busbw,
                           "allreduce_busbw_half": 0.0}],
                "links": []}

    def test_spread_as_in_a_sweep(self):
        import math
        import tpbal_fleet as tf
        import tpbal_stats as st
        rows, _, _ = tf.compare(self.doc(100.0), self.doc(100.0), 0.05, 0.08)
        gemm = [r for r in rows if r["what"] == "gemm"][0]
        h = math.log(gemm["hi"])
        self.assertAlmostEqual(h, math.hypot(st.Z95 * 0.08, st.Z95 * 0.08))
        # what a sweep's two single runs get from the same spread (no iteration noise)
        s = st.compare_samples([100.0] * 9, [100.0 + 1e-9] * 9, 0.05, a_spread=st.Z95 * 0.08,
                               b_spread=st.Z95 * 0.08)
        self.assertAlmostEqual(h, s["half"], places=6)
        self.assertEqual(gemm["verdict"], "inconclusive")  # +-25 % reaches past 5 %

    def test_fleet_verdict_is_the_sweeps_decision(self):
        """A rate's verdict is tpbal_stats.decide on the inverted (time) ratio, at the
        edges of the tolerance band too."""
        import tpbal_fleet as tf
        tol = 0.05
        cases = [(0.90, 0.01, "slower"), (1.10, 0.01, "faster"), (1.0, 0.01, "unchanged"),
                 (1.0, 0.2, "inconclusive"), (0.0, 0.01, "inconclusive"),
                 (1.0 / 1.05 * 0.999, 0.0, "slower"), (1.05 * 1.001, 0.0, "faster"),
                 (1.049, 0.0, "unchanged")]
        for ratio, half, want in cases:
            self.assertEqual(tf.verdict(ratio, half, tol), want, (ratio, half))

    def test_negative_rates_refused(self):
        import tpbal_fleet as tf
        with self.assertRaises(BadInput):
            tf.compare(self.doc(-5.0), self.doc(100.0), 0.05, 0.08)
        with self.assertRaises(BadInput):
            tf.compare(self.doc(100.0, busbw=-1.0), self.doc(100.0), 0.05, 0.08)

    def test_options_a_fleet_does_not_use_refused(self):
        for extra, says in [(["--baseline-out", "b.json"], "--baseline-out"),
                            (["--require", "step_us<=5"], "--require"),
                            (["--format", "junit"], "--format junit")]:
            with self.assertRaises(BadInput) as cm:
                cmp.main(["--fleet", "A", "B"] + extra)
            self.assertIn(says, str(cm.exception))
            self.assertIn("has no effect there", str(cm.exception))

    def test_tampered_fleet_json_refused(self):
        import tpbal_fleet as tf
        good = dict(self.doc(100.0), schema=tf.SCHEMA, threshold=0.9, exclude=[])
        tampered = [("ranks", [{"host": "n1", "gflops": 1.0}]),             # no rank
                    ("ranks", [{"rank": "0", "host": "n1", "gflops": 1.0}]),  # a string
                    ("nodes", [5]), ("links", ["x"]), ("exclude", 5), ("exclude", [1])]
        with tempfile.TemporaryDirectory() as d:
            for key, value in [(None, None)] + tampered:
                doc = dict(good)
                if key:
                    doc[key] = value
                with open(os.path.join(d, "fleet.json"), "w") as f:
                    json.dump(doc, f)
                if key is None:
                    tf.load(d)  # the untampered one loads
                    continue
                with self.assertRaises(BadInput, msg=(key, value)):
                    tf.load(d)
