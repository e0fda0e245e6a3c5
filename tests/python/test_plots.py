"""The numbers tpbal-report plots, on synthetic results (the MPI test checks real ones)."""
import math
import os
import tempfile
import unittest

import fixtures as fx

try:
    import tpbal_plots as plots
    import tpbal_speedup as sp
except ImportError:  # no matplotlib for this python3
    plots = sp = None
from tpbal_results import BadInput


@unittest.skipIf(plots is None, "matplotlib is missing")
class Plots(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.d = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def test_step_series(self):
        cfgs = [fx.config(0, tp=2, step=80.0), fx.config(1, tp=1, step=100.0, e=1.0),
                fx.config(2, tp=2, policy="weighted"), fx.config(3, comm_only="yes")]
        s = plots.step_series(cfgs)
        self.assertEqual(sorted(s), ["64x256x256 row even", "64x256x256 row weighted"])
        self.assertEqual([c["tp"] for c in s["64x256x256 row even"]], [1, 2])
        made = []
        data = plots.plot_step(cfgs, self.d, made)
        self.assertEqual(data["64x256x256 row even"]["step_us"], [100.0, 80.0])
        self.assertTrue(os.path.exists(os.path.join(self.d, "step.png")))

    def test_efficiency_not_clipped(self):
        """E = 1.22 (shards faster per FLOP) was drawn off a 0..1.1 axis."""
        import matplotlib.pyplot as plt
        cfgs = [fx.config(0, tp=1, step=100.0, e=1.0), fx.config(1, tp=2, step=41.0, e=1.22)]
        seen = {}
        orig = plots.save

        def keep(fig, outdir, name, made):
            seen[name] = [ax.get_ylim() for ax in fig.axes]
            orig(fig, outdir, name, made)
        plots.save = keep
        try:
            plots.plot_step(cfgs, self.d, [])
        finally:
            plots.save = orig
        (lo1, _), (lo2, hi2) = seen["step"]
        self.assertEqual((lo1, lo2), (0.0, 0.0))
        self.assertGreaterEqual(hi2, 1.22)
        plt.close("all")

    def test_weighted_bars_from_zero_with_their_intervals(self):
        import matplotlib.pyplot as plt
        cfgs = [fx.config(0, tp=2), fx.config(1, tp=2, policy="weighted")]
        cfgs[1].update(speedup=1.3, predicted_speedup=1.25)
        c = cfgs[1]
        summ = {"answer": [{"kind": "tp", "tp": 2, "placement": "packed", "m": c["m"],
                            "n": c["n"], "k": c["k"],
                            "policies": [{"split": c["split"], "sequence_parallel": "off",
                                          "policy": "weighted", "speedup": 1.3,
                                          "speedup_lo": 1.1, "speedup_hi": 1.5,
                                          "speedup_bound": 1.6,
                                          "verdict": "better"}]}]}
        seen = {}
        orig = plots.save

        def keep(fig, outdir, name, made):
            ax = fig.axes[0]
            seen[name] = (ax.get_ylim(), len(ax.lines) + len(ax.collections))
            orig(fig, outdir, name, made)
        plots.save = keep
        try:
            data = sp.plot_weighted(cfgs, self.d, [], summ)
        finally:
            plots.save = orig
        self.assertEqual(data["interval"], [[1.1, 1.5]])
        # the run's verdict, its bound and the draw band are drawn with it (issue 56)
        self.assertEqual((data["verdict"], data["bound"]), (["better"], [1.6]))
        self.assertAlmostEqual(data["band"][1], 1.05)
        (lo, hi), drawn = seen["weighted"]
        self.assertEqual(lo, 0.0)
        self.assertGreaterEqual(hi, 1.6)  # the interval's top and the bound are on the axis
        self.assertEqual(plots.LAYOUT["weighted"], {"legend_over_data": 0})
        self.assertGreater(drawn, 1)  # the error bar beside the line at 1
        plt.close("all")

    def test_names_are_text_not_tex(self):
        made = []
        cfg = fx.config(0, policy="$\\frac{$")
        plots.plot_step([cfg], self.d, made)
        self.assertEqual(made, ["step"])

    def test_decomposition_skips_broken_rows(self):
        row = {"split": "row", "policy": "even", "m": 1, "n": 2, "k": 3, "tp": 1, "comp_us": 5,
               "comm_us": 0, "idle_us": 1, "step_us": 6}
        summ = {"decomposition": [row, dict(row, policy="weighted"), dict(row),  # TP 1 twice
                                  dict(row, tp=2, comp_us="x")]}
        s = plots.decomposition_groups(summ)
        self.assertEqual(list(s), [1])
        self.assertEqual([d["policy"] for d in s[1]], ["even", "weighted"])

    def test_decomposition_keeps_every_series(self):
        """sorted(series)[:6] dropped a preset's panels: every row of every TP is drawn."""
        rows = [{"split": sp, "policy": po, "m": m, "n": 64, "k": 64, "tp": tp, "comp_us": 5,
                 "comm_us": 1, "idle_us": 1, "step_us": 7}
                for sp in ("row", "col") for po in ("even", "weighted") for m in range(1, 9)
                for tp in (2, 4)]
        made = []
        data = plots.plot_decomposition({"decomposition": rows}, self.d, made)
        self.assertEqual(made, ["decomposition"])
        self.assertEqual(sorted(data), ["tp2", "tp4"])
        self.assertEqual([len(v) for v in data.values()], [32, 32])

    def test_fit_drawn_only_where_it_means_something(self):
        cfgs = [fx.config(i, comm_bytes=b) for i, b in enumerate((4096, 65536, 1 << 20))]
        for c in cfgs:
            c["xfer_us"] = 10.0 + c["comm_bytes"] / 1e3
        key = list(plots.comm_series(cfgs))[0]
        fit = {"collective": key[0], "tp": key[1], "policy": key[2], "placement": key[3],
               "comm_only": key[4], "latency_us": 10.0, "bandwidth_gbs": 1.0}
        for quality, drawn in (("ok", True), ("exact", False), ("poor", False),
                               ("bandwidth not resolved", False)):
            made = []
            data = plots.plot_comm(cfgs, {"comm_model": [dict(fit, quality=quality)]}, self.d,
                                   made)
            self.assertEqual("fit" in list(data.values())[0], drawn, quality)

    def test_human_numbers(self):
        import tpbal_report as rep
        self.assertEqual(rep.fmt(48310.4), "48,310")
        self.assertEqual(rep.fmt(0.5104), "0.5104")
        self.assertEqual(plots.us_text(48310.4), "48.3 ms")
        self.assertEqual(plots.us_text(830.2), "830 us")
        self.assertEqual(rep.straggler_cell({"straggler": {"rank": -1}}), "-")

    def test_comm_series_needs_two_sizes(self):
        cfgs = [fx.config(0, comm_bytes=4096), fx.config(1, comm_bytes=65536),
                fx.config(2, split="col", comm_bytes=4096)]
        s = plots.comm_series(cfgs)
        self.assertEqual(len(s), 1)
        self.assertEqual([c["comm_bytes"] for c in list(s.values())[0]], [4096, 65536])

    def trace(self, **kw):
        p = fx.write_dir(os.path.join(self.d, "r"), [fx.config(0)], traces={0: fx.trace(**kw)})
        return plots.Trace(os.path.join(p, "trace-000.json"))

    def test_gantt_window_from_the_record(self):
        t = self.trace(slowest=1)
        self.assertEqual(plots.gantt_window(t, 1), (1, [1]))
        self.assertEqual(plots.gantt_window(t, 8), (1, [0, 1]))
        made = []
        g = plots.plot_gantt(fx.config(0), t, self.d, 2, made)
        self.assertEqual(g["gantt"]["rank 0"]["compute_us"], [10, 5])
        self.assertEqual(g["gantt"]["rank 1"]["wait_us"], [0, 0])

    def test_gantt_marks_the_interleaved_gaps(self):
        """Iteration 0 ends at 30 us and 1 starts at 100: a pause longer than any iteration
        (31 us) is another config's round where the config was measured side by side."""
        t = self.trace(slowest=1)
        self.assertEqual(plots.interleave_gaps(t, [0, 1]), [(30, 100)])
        self.assertEqual(plots.interleave_gaps(t, [1]), [])
        g = plots.plot_gantt(fx.config(0, interleave_rounds=3), t, self.d, 2, [])
        self.assertEqual(g["interleaved_us"], [[30, 100]])
        g = plots.plot_gantt(fx.config(0, interleave_rounds=0), t, self.d, 2, [])
        self.assertEqual(g["interleaved_us"], [])  # one after the other: a pause, unmarked
        self.assertEqual(plots.LAYOUT["gantt"], {"legend_over_data": 0})

    def test_legend_over_data_is_counted(self):
        """The layout check can fail: a legend laid over a line and a bar counts both."""
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(4, 3))
        ax.plot([0, 1], [0.5, 0.5], label="line")
        ax.bar([0.5], [0.9], width=1.0, label="bar")
        ax.set_xlim(0, 1)
        ax.legend(loc="center")
        self.assertEqual(plots.legend_over_data(fig), 2)  # tpbal_layout's
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))  # beside the axes
        self.assertEqual(plots.legend_over_data(fig), 0)
        ax.legend(loc="center")  # the report moves such a legend off the data itself
        self.assertEqual(plots.fit_legends(fig), 0)
        self.assertEqual(plots.legend_over_data(fig), 0)
        self.assertEqual([t.get_text() for t in ax.get_legend().get_texts()], ["line", "bar"])
        plt.close(fig)

    def test_gantt_pair_names_its_gaps(self):
        """Even above weighted: where one did not run (the other's round, side by side) the
        gap is hatched and named, and plots.json says where (issue 56: a 145-280 ms gap was
        neither)."""
        import tpbal_views as vw
        t = self.trace(slowest=1)
        pair = [fx.config(0, interleave_rounds=3), fx.config(1, policy="weighted",
                                                             interleave_rounds=3)]
        g = vw.plot_gantt_pair(pair, [t, t], self.d, 2, [])
        self.assertEqual(g["even"]["gaps_ms"], [[0.03, 0.1]])  # 30 to 100 us of the window
        self.assertEqual(plots.LAYOUT["gantt_pair"], {"legend_over_data": 0})
        pair = [fx.config(0), fx.config(1, policy="weighted")]  # one after the other
        self.assertEqual(vw.plot_gantt_pair(pair, [t, t], self.d, 2, [])["even"]["gaps_ms"], [])

    def test_arrival_offsets(self):
        t = self.trace(steps=[30.0, 31.0])
        rows = plots.arrival_offsets(t, 2)
        # iteration 0: arrivals 10 and 12, median 11: -1 and +1 us of a 30 us step
        self.assertAlmostEqual(rows[0][0], -100.0 / 30)
        self.assertAlmostEqual(rows[1][0], 100.0 / 30)
        # iteration 1: arrivals 105 and 115, median 110 of a 31 us step
        self.assertAlmostEqual(rows[1][1], 500.0 / 31)
        t = self.trace(steps=[30.0])  # steps that do not match the kept iterations: no scale
        self.assertTrue(math.isnan(plots.arrival_offsets(t, 2)[0][0]))

    def test_ten_thousand_configs(self):
        cfgs = [fx.config(i, m=1 + i, policy="weighted", speedup=1.1, predicted_speedup=1.2)
                for i in range(10000)]
        made = []
        self.assertEqual(len(plots.plot_step(cfgs, self.d, made)), plots.MAX_BARS)
        self.assertEqual(len(sp.plot_weighted(cfgs, self.d, made)["labels"]), plots.MAX_BARS)
        self.assertEqual(made, ["step", "weighted"])

    def test_unwritable_folder_is_one_line(self):
        with self.assertRaises(BadInput):
            plots.plot_step([fx.config(0)], os.path.join(self.d, "missing", "dir"), [])


if __name__ == "__main__":
    unittest.main()
