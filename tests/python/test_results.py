"""tpbal_results: the one reader of result directories refuses bad input in one line."""
import io
import json
import os
import stat
import tempfile
import unittest
from contextlib import redirect_stderr

import fixtures as fx
import tpbal_results as tr


class Loader(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.d = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def refused(self, configs, needle, **kw):
        d = fx.write_dir(os.path.join(self.d, "r%d" % len(os.listdir(self.d))), configs, **kw)
        with self.assertRaises(tr.BadInput) as e:
            tr.load(d)
        self.assertIn(needle, str(e.exception))
        self.assertNotIn("\n", str(e.exception))

    def test_tampered_block_records(self):
        """A block record the tools cannot use is one line (they divided by a median of 0,
        compared a string rate, indexed a missing id)."""
        good = {"type": "block", "id": 0, "tp": 2, "tokens": 64, "configs": [0],
                "step_us": {"median": 100.0}, "steps_us": [100.0, 101.0],
                "tokens_per_s_rank": 320000.0, "tokens_per_s_rank_lo": 310000.0,
                "tokens_per_s_rank_hi": 330000.0}
        d = fx.write_dir(os.path.join(self.d, "good"), [fx.config(0), good])
        self.assertEqual(len(tr.load(d).blocks), 1)
        for change in ({"id": None}, {"tokens_per_s_rank_lo": "310000"},
                       {"step_us": {"median": 0}}, {"steps_us": [100.0, 0]},
                       {"tokens_per_s_rank": -1.0}):
            bad = dict(good, **change)
            if change == {"id": None}:
                del bad["id"]
            self.refused([fx.config(0), bad], "a block record without its id")

    def test_valid_directory_and_file(self):
        d = fx.write_dir(os.path.join(self.d, "ok"), [fx.config(0), fx.config(1, policy="weighted")],
                         summary={"type": "summary", "decomposition": []})
        r = tr.load(d)
        self.assertEqual(len(r.configs), 2)
        self.assertEqual(r.schema, 1)
        self.assertEqual(r.summary["type"], "summary")
        self.assertEqual(len(tr.load(os.path.join(d, "results.jsonl")).configs), 2)
        self.assertTrue(r.trace_path(3).endswith("trace-003.json"))
        # relative speeds of any finite magnitude are what tpbal accepts (--speeds 1e308,1e308)
        d = fx.write_dir(os.path.join(self.d, "huge"), [fx.config(0, speeds=[1e308, 1e308])])
        self.assertEqual(tr.load(d).configs[0]["speeds"], [1e308, 1e308])

    def test_torn_last_line_recovered(self):
        """A run killed while appending leaves whole records and at most a torn last line
        (no newline after it): the reader keeps the whole ones and says which it skipped;
        a bad line anywhere else, or a whole last line that is not JSON, is still refused."""
        d = fx.write_dir(os.path.join(self.d, "torn"), [fx.config(0), fx.config(1)],
                         ranks="world_rank,host\n0,a\n1,b\n")
        path = os.path.join(d, "results.jsonl")
        text = open(path).read()
        open(path, "w").write(text[:-40])  # config 1's line cut short
        r = tr.load(d)
        self.assertEqual([c["id"] for c in r.configs], [0])
        self.assertEqual(r.torn, 3)
        open(path, "w").write(text[:-40] + "\n")  # whole, and not JSON: not a torn append
        with self.assertRaises(tr.BadInput):
            tr.load(d)
        ranks = os.path.join(d, "ranks.csv")
        open(ranks, "w").write("world_rank,host\n0,a\n1,")  # a torn row
        self.assertEqual(tr.read_ranks(ranks), [{"world_rank": "0", "host": "a"}])
        self.assertEqual(tr.whole_lines("a\nb\n"), "a\nb\n")

    def test_refused_records(self):
        c = fx.config()
        del c["m"]
        self.refused([c], "without 'm'")
        self.refused([fx.config(n="512")], "'n' is \"512\", not an integer")
        self.refused([fx.config(lb="high")], "'lb'")
        self.refused([fx.config(tflops=1e308)], "'tflops' is 1e+308")
        self.refused(['{"type": "config", "id": 0, "tp": 2, "m": 1, "n": 1, "k": 1, "split": "row", '
                      '"policy": "even", "dtype": "fp32", "step_us": {}, "speeds": [1e999]}'],
                     "'speeds' is [Infinity], not a list of finite numbers")
        self.refused([fx.config(step_us={"median": None, "p95": 1.0})], "step_us.median")
        self.refused(["42"], "not a JSON object")
        self.refused(['{"type": "config", "lb": NaN}'], "is not JSON")
        # a key twice in one object: refused here as by tpbal's C reader (not the last taken)
        self.refused(['{"type": "config", "id": 0, "id": 1}'], "is not JSON")
        with self.assertRaises(ValueError):
            tr.json_loads('{"tp": 2, "tp": 4}')
        self.refused([fx.config(tp=0)], "must be positive")
        self.refused([], "no run record", run={"type": "summary"})

    def test_bad_files(self):
        with self.assertRaises(tr.BadInput) as e:
            tr.load(os.path.join(self.d, "none"))
        self.assertIn("no such file", str(e.exception))
        bad = os.path.join(self.d, "bad")
        os.makedirs(bad)
        with open(os.path.join(bad, "results.jsonl"), "wb") as fh:
            fh.write(b'{"type": "run", "schema": 1}\n{"type": "config", "x": "\xff\xfe"}\n')
        with self.assertRaises(tr.BadInput) as e:
            tr.load(bad)
        self.assertIn("not UTF-8", str(e.exception))
        fifo = os.path.join(self.d, "fifo")
        os.mkfifo(fifo)
        with self.assertRaises(tr.BadInput) as e:  # refused before it is opened: no hang
            tr.load(fifo)
        self.assertIn("not a regular file", str(e.exception))
        os.makedirs(os.path.join(self.d, "dir", "results.jsonl"))
        with self.assertRaises(tr.BadInput):
            tr.load(os.path.join(self.d, "dir"))

    def test_traces(self):
        p = os.path.join(self.d, "t.json")
        with open(p, "w") as fh:
            fh.write("[1, 2]")
        with self.assertRaises(tr.BadInput) as e:
            tr.read_trace(p)
        self.assertIn("not a tpbal trace", str(e.exception))
        with open(p, "w") as fh:
            json.dump(fx.trace(), fh)
        other, events = tr.read_trace(p)
        self.assertEqual(other["slowest_iter"], 0)
        self.assertTrue(all(isinstance(e, dict) for e in events))

    def test_ranks_csv_with_a_huge_field(self):
        p = os.path.join(self.d, "ranks.csv")
        with open(p, "w") as fh:
            fh.write("id,host,score\n0,%s,0.5\n" % ("h" * 200000))
        rows = tr.read_ranks(p)
        self.assertEqual(len(rows[0]["host"]), 200000)


class Output(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.d = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def test_clean(self):
        self.assertEqual(tr.clean("node\x1b[31m-a\r"), "node?[31m-a?")
        self.assertEqual(len(tr.clean("x" * 500, 100)), 100)
        # what XML 1.0, CSV readers and terminals cannot take: a lone surrogate, U+FFFE/F, BEL
        self.assertEqual(tr.clean("a\udc80b\ufffe\uffff\x07"), "a?b???")

    def test_size_label(self):
        self.assertEqual([tr.size_label(b) for b in (4096, 1 << 20, 3 << 30, 1000)],
                         ["4K", "1M", "3G", "1000B"])

    def test_write_atomic(self):
        target = os.path.join(self.d, "target.json")
        link = os.path.join(self.d, "link.json")
        with open(target, "w") as fh:
            fh.write("old")
        os.symlink(target, link)
        with self.assertRaises(tr.BadInput):  # a planted link: refused, left as it is
            tr.write_atomic(link, "new")
        self.assertTrue(os.path.islink(link))
        with open(target) as fh:
            self.assertEqual(fh.read(), "old")
        os.chmod(target, 0o640)  # a replaced file keeps its mode, a new one gets the umask's
        tr.write_atomic(target, "new")
        self.assertEqual(stat.S_IMODE(os.stat(target).st_mode), 0o640)
        old = os.umask(0o022)
        try:
            tr.write_atomic(os.path.join(self.d, "fresh.json"), b"bytes too")
        finally:
            os.umask(old)
        self.assertEqual(stat.S_IMODE(os.stat(os.path.join(self.d, "fresh.json")).st_mode),
                         0o644)
        self.assertEqual([f for f in os.listdir(self.d) if ".tpbal-" in f], [])
        # a file the tools read, in an input's folder: refused (tpbal-plan --plan-out D/x.csv)
        with open(os.path.join(self.d, "ranks.csv"), "w") as fh:
            fh.write("keep")
        with self.assertRaises(tr.BadInput):
            tr.write_atomic(os.path.join(self.d, "ranks.csv"), "x", inputs=[self.d])
        with self.assertRaises(tr.BadInput):
            tr.write_atomic(self.d, "x")  # a directory
        with self.assertRaises(tr.BadInput):
            tr.write_atomic(target, "x", inputs=[link])  # an input, by another name
        with open(target) as fh:
            self.assertEqual(fh.read(), "new")
        ro = os.path.join(self.d, "ro")
        os.makedirs(ro)
        os.chmod(ro, stat.S_IRUSR | stat.S_IXUSR)
        if os.geteuid() != 0:  # root writes anyway
            with self.assertRaises(tr.BadInput):
                tr.write_atomic(os.path.join(ro, "x.json"), "x")
        self.assertEqual([f for f in os.listdir(self.d) if f.startswith(".")], [])

    def test_json_is_strict(self):
        self.assertEqual(tr.json_dumps({"a": float("inf"), "b": [float("nan"), 1.5]}),
                         '{"a": null, "b": [null, 1.5]}')

    def test_run_main_one_line(self):
        def bad(argv):
            raise tr.BadInput("no \x1b good")

        def bug(argv):
            return {}["x"]

        for fn, needle in ((bad, "error: no ? good"), (bug, "internal error (KeyError")):
            err = io.StringIO()
            with redirect_stderr(err):
                self.assertEqual(tr.run_main("tool", fn, []), 2)
            self.assertIn(needle, err.getvalue())
            self.assertEqual(err.getvalue().count("\n"), 1)


if __name__ == "__main__":
    unittest.main()
