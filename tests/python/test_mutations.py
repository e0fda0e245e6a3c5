"""The tools on hundreds of broken result directories: every one ends with exit 0, 1 or
2, never a traceback or an internal error, and JSON output stays strict JSON.

The directories are mutations of one well-formed result (fixtures): truncated files,
values of the wrong type or out of range, missing keys, invalid UTF-8, records that are
not objects, broken ranks.csv and traces, control characters in names. The mutations
are drawn from a fixed seed: the same ones every run.
"""
import contextlib
import io
import json
import os
import random
import shutil
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

import fixtures as fx
import tpbal_compare
import tpbal_plan
import tpbal_results as tr

try:
    import tpbal_report
    import tpbal_plots  # noqa: F401 (matplotlib present)
except ImportError:
    tpbal_report = None

WRONG = ["x", "", [], {}, None, True, 1e308, -1e308, -1, 0, 2 ** 70, [1, "a"], {"a": 1},
         "\x1b[2J", 1e-308, 10 ** 400, 5e-324, 1e-200, "\udc80", "a\ufffeb\uffff", [0.0, 1.0],
         "\x07bell"]

# (record: 0 the run, 2 a config; key; value) the hostile values a probe found to end in an
# internal error, a traceback or output that is not well formed
HOSTILE = [(0, "cost_profile", [1, 2]), (0, "cost_profile", "x"),
           (0, "cost_profile", {"source": 1, "costs": "x"}), (2, "overlap_figures", [1]),
           (2, "overlap_figures", "x"), (2, "overlap_figures", {"efficiency": "x"}),
           (2, "compute_us", [1e-200, 1e-200]), (2, "compute_us", [5e-324, 5e-324]),
           (2, "world_ranks", [0.0, 1.0]), (2, "shape", "\udc80"), (2, "shape", "a\uffffb"),
           (2, "policy", "\udc80"), (2, "tp", 10 ** 400), (2, "m", 10 ** 400),
           (2, "step_us", {"median": 10 ** 400}), (0, "world_size", 10 ** 400),
           (0, "ranks", [{"host": "\udc80"}]), (2, "speeds", [10 ** 400, 1]),
           (2, "shards", [10 ** 400, 1]), (2, "chunks", "x"), (2, "shape", "\x1b]0;t\x07"),
           (2, "backend", "h\x07st")]


def base_dir(d):
    cfgs = [fx.config(0, tp=1, step=200.0, e=1.0), fx.config(1, tp=2, step=120.0),
            fx.config(2, tp=2, policy="weighted", step=100.0, speedup=1.2,
                      predicted_speedup=1.3, speeds=[1.0, 2.0]),
            fx.config(3, tp=2, split="col", comm_bytes=4096),
            fx.config(4, tp=2, split="col", comm_bytes=65536)]
    summ = {"type": "summary",
            "decomposition": [{"split": "row", "policy": "even", "m": 64, "n": 256, "k": 256,
                               "tp": 1, "comp_us": 190.0, "comm_us": 0.0, "idle_us": 10.0,
                               "step_us": 200.0}],
            "comm_model": [{"collective": "all-gather", "tp": 2, "policy": "even",
                            "placement": "packed", "comm_only": "no", "latency_us": 5.0,
                            "bandwidth_gbs": 2.0, "r2": 0.99, "points": 2}]}
    ranks = ("id,tp,split,policy,m,n,k,dtype,rank,host,device,speed,shard,score,world_rank,"
             "placement\n1,2,row,even,64,256,256,fp32,0,node-a,cpu,,128,1,0,packed\n"
             "1,2,row,even,64,256,256,fp32,1,node-a,cpu,,128,0.8,1,packed\n")
    return fx.write_dir(d, cfgs, summary=summ, ranks=ranks, traces={1: fx.trace(), 2: fx.trace()})


def read(path):
    with open(path, "rb") as fh:
        return fh.read()


def write(path, data):
    with open(path, "wb" if isinstance(data, bytes) else "w") as fh:
        fh.write(data)


def mutate(rng, d):
    """One random mutation of the result directory d, in place; returns what it did."""
    files = sorted(f for f in os.listdir(d) if not f.startswith("."))
    path = os.path.join(d, rng.choice(files))
    raw = read(path)
    kind = rng.randrange(9)
    try:
        return mutate_file(rng, path, raw, kind)
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        # a file an earlier mutation already broke: flip a byte instead
        at = rng.randrange(len(raw)) if raw else 0
        write(path, raw[:at] + bytes([rng.randrange(256)]) + raw[at + 1:])
        return "byte " + path


def mutate_file(rng, path, raw, kind):
    if kind == 0 and raw:  # truncated
        write(path, raw[:rng.randrange(len(raw))])
        return "truncate " + path
    if kind == 1:  # invalid UTF-8
        at = rng.randrange(len(raw) + 1)
        write(path, raw[:at] + b"\xff\xfe\xc3" + raw[at:])
        return "utf8 " + path
    if path.endswith(".csv"):
        lines = raw.decode().splitlines()
        i = rng.randrange(len(lines))
        cells = lines[i].split(",")
        j = rng.randrange(len(cells))
        cells[j] = rng.choice(["", "nan", "-1", "x" * 200000, "1e999", "\x1b]0;evil\x07",
                               '"', "1,2"])
        lines[i] = ",".join(cells)
        write(path, "\n".join(lines) + "\n")
        return "csv " + path
    if path.endswith(".json"):  # a trace
        t = json.loads(raw)
        if kind == 2:
            t = rng.choice([[1, 2], "trace", None, {"traceEvents": 5}])
        else:
            ev = rng.choice(t["traceEvents"])
            key = rng.choice(list(ev.keys()) + ["args"])
            ev[key] = rng.choice(WRONG)
            if rng.random() < 0.3:
                t["otherData"][rng.choice(["slowest_iter", "steps_us", "tp", "iters"])] = \
                    rng.choice(WRONG)
        write(path, json.dumps(t))
        return "trace " + path
    lines = raw.decode().splitlines()  # results.jsonl
    i = rng.randrange(len(lines))
    if kind == 2:
        lines[i] = rng.choice(["42", "[]", "null", '"x"', "{", "NaN", '{"type": "config"}'])
    elif kind == 3:
        lines.insert(i, lines[i])
    else:
        rec = json.loads(lines[i])
        key = rng.choice(list(rec.keys()))
        if kind == 4:
            del rec[key]
        elif kind == 5 and isinstance(rec[key], dict) and rec[key]:
            rec[key][rng.choice(list(rec[key]))] = rng.choice(WRONG)
        else:
            rec[key] = rng.choice(WRONG)
        lines[i] = json.dumps(rec)
    write(path, "\n".join(lines) + "\n")
    return "jsonl " + path


@contextlib.contextmanager
def figures_not_rendered():
    """The report's figures made and closed, not written (what is checked is the reading and
    the numbers; report.sh renders)."""
    real = tpbal_plots.save

    def made_only(fig, outdir, name, made):
        tpbal_plots.plt.close(fig)
        made.append(name)

    tpbal_plots.save = made_only
    try:
        yield
    finally:
        tpbal_plots.save = real


def call(main, argv):
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        rc = tr.run_main("tool", main, argv)
    return rc, out.getvalue(), err.getvalue()


class Mutations(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.base = base_dir(os.path.join(self.tmp.name, "base"))

    def tearDown(self):
        self.tmp.cleanup()

    def check(self, rc, out, err, what):
        self.assertIn(rc, (0, 1, 2), what)
        self.assertNotIn("Traceback", out + err, what)
        self.assertNotIn("internal error", err, what + ": " + err)
        self.assertNotIn("\x1b", out + err, what)
        # one message at most: its line, folded at 120 columns (tpbal_text) where it is
        # tpbal-compare's closing line, continues indented, never as a second message
        self.assertLessEqual(len([x for x in err.splitlines() if not x.startswith("    ")]), 1,
                             what + ": " + err)

    def test_compare_on_300_mutations(self):
        rng = random.Random(20261201)
        counts = {0: 0, 1: 0, 2: 0}
        for n in range(300):
            d = os.path.join(self.tmp.name, "m%d" % n)
            shutil.copytree(self.base, d)
            what = "; ".join(mutate(rng, d) for _ in range(rng.randint(1, 3)))
            rc, out, err = call(tpbal_compare.main, ["--format", "json", self.base, d])
            self.check(rc, out, err, what)
            if rc in (0, 1):
                json.loads(out, parse_constant=tr._no_constant)  # strict JSON
            counts[rc] += 1
            shutil.rmtree(d)
        # the mutations reach every verdict: some are refused, some compared
        self.assertGreater(counts[2], 30)
        self.assertGreater(counts[0] + counts[1], 30)

    def test_plan_on_150_mutations(self):
        """tpbal-plan: validation, predictions for another world and a shard plan."""
        rng = random.Random(31337)
        counts = {0: 0, 1: 0, 2: 0}
        for n in range(150):
            d = os.path.join(self.tmp.name, "p%d" % n)
            shutil.copytree(self.base, d)
            what = "; ".join(mutate(rng, d) for _ in range(rng.randint(1, 3)))
            out_plan = os.path.join(self.tmp.name, "plan%d.json" % n)
            argv = [d, "--format", "json"] if n % 2 else [d, "--world", "8", "--plan-out",
                                                          out_plan]
            rc, out, err = call(tpbal_plan.main, argv)
            self.check(rc, out, err, what)
            self.assertNotEqual(rc, 1, what)
            if rc == 0 and n % 2:
                json.loads(out, parse_constant=tr._no_constant)  # strict JSON
            if rc == 0 and not n % 2:
                json.loads(read(out_plan), parse_constant=tr._no_constant)
            counts[rc] += 1
            shutil.rmtree(d)
        self.assertGreater(counts[2], 15)
        self.assertGreater(counts[0], 15)

    def test_hostile_values(self):
        """Every tool on the values a probe found: exit 0-2 with at most one line, never an
        internal error; junit well-formed XML 1.0, csv without a control character."""
        import xml.dom.minidom
        for n, (line, key, value) in enumerate(HOSTILE):
            d = os.path.join(self.tmp.name, "h%d" % n)
            shutil.copytree(self.base, d)
            path = os.path.join(d, "results.jsonl")
            lines = read(path).decode().splitlines()
            rec = json.loads(lines[line])
            rec[key] = value
            lines[line] = json.dumps(rec)
            write(path, "\n".join(lines) + "\n")
            what = "%s = %r" % (key, value)
            for fmt in ("json", "junit", "csv"):
                rc, out, err = call(tpbal_compare.main, ["--format", fmt, self.base, d])
                self.check(rc, out, err, what + " compare " + fmt)
                if rc in (0, 1) and fmt == "junit":
                    xml.dom.minidom.parseString(out.encode("utf-8"))
                if rc in (0, 1) and fmt == "csv":
                    self.assertFalse(any(ord(c) < 32 and c != "\n" for c in out), what)
            rc, out, err = call(tpbal_plan.main, [d, "--format", "json"])
            self.check(rc, out, err, what + " plan")
            if tpbal_report is not None:
                with figures_not_rendered():
                    rc, out, err = call(tpbal_report.main, [d, "--out",
                                                            os.path.join(self.tmp.name, "hr")])
                self.check(rc, out, err, what + " report")
            shutil.rmtree(d)

    @unittest.skipIf(tpbal_report is None, "matplotlib is missing")
    def test_report_compare_on_15_mutations(self):
        """tpbal-report A --compare B with B broken: a page or one line, exit 0 or 2."""
        rng = random.Random(99)
        with figures_not_rendered():
            for n in range(15):
                d = os.path.join(self.tmp.name, "c%d" % n)
                shutil.copytree(self.base, d)
                what = "; ".join(mutate(rng, d) for _ in range(rng.randint(1, 2)))
                rc, out, err = call(tpbal_report.main, [self.base, "--compare", d, "--out",
                                                        os.path.join(self.tmp.name, "rep")])
                self.check(rc, out, err, what)
                self.assertNotEqual(rc, 1, what)
                shutil.rmtree(d)

    def report_on(self, seed, n):
        rng = random.Random(seed)
        written = 0
        for i in range(n):
            d = os.path.join(self.tmp.name, "r%d" % i)
            shutil.copytree(self.base, d)
            what = "; ".join(mutate(rng, d) for _ in range(rng.randint(1, 2)))
            rc, out, err = call(tpbal_report.main, [d])
            self.check(rc, out, err, what)
            if rc == 0:
                written += 1
                json.loads(read(os.path.join(d, "report", "plots.json")),
                           parse_constant=tr._no_constant)
            shutil.rmtree(d)
        return written

    @unittest.skipIf(tpbal_report is None, "matplotlib is missing")
    def test_report_on_60_mutations(self):
        """Reading, checking and the numbers of every plot on 60 mutations; the figures
        are made but not rendered (rendering is the next test's, and report.sh's)."""
        with figures_not_rendered():
            written = self.report_on(4242, 60)
        self.assertGreater(written, 6)

    @unittest.skipIf(tpbal_report is None, "matplotlib is missing")
    def test_report_rendered_on_6_mutations(self):
        self.assertGreater(self.report_on(77, 6), 1)


if __name__ == "__main__":
    unittest.main()
