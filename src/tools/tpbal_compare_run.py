"""tpbal_compare_run: one side of tpbal-compare: a result directory (or results.jsonl), a
--repeat run (its passes as a baseline of runs: each pass's median, their samples pooled),
a baseline written by --baseline-out, or nccl-tests' JSON output; per config its metrics
and step samples (entry)."""
import os

import tpbal_results as tr
import tpbal_repeat as trp  # after tpbal_results: a built tool sets its path there
from tpbal_results import BadInput, clean
import tpbal_compare_io as io_

METRICS = io_.METRICS


def metric_value(c, m):
    if m == "step_us":
        return tr.num(c["step_us"].get("median"))
    if m == "overlap_efficiency":  # --overlap chunked: the share of the communication hidden
        return tr.num((c.get("overlap_figures") or {}).get("efficiency"))
    return tr.num(c.get(m))


class Run:
    """One side of a comparison: configs by key, each with its metrics and step samples."""

    def __init__(self, path):
        self.path = path
        self.configs = {}  # key -> config entry (see entry())
        self.schema = None
        self.ranks_csv = None
        self.emulated = set()  # world ranks slowed on purpose (emulated or delayed)
        self.conditions = None  # io_.conditions of a tpbal run (None: baseline, nccl-tests)
        self.cal_spread = None  # its calibrations' worst speed spread (None: none recorded)
        self.busy = None  # (share, host): other processes' CPU share on its busiest machine
        if os.path.isdir(path) and os.path.exists(os.path.join(path, "repeat.json")):
            self._load_repeat(path)
            return
        jsonl = os.path.join(path, "results.jsonl") if os.path.isdir(path) else path
        tr.refuse_bare_passes(path)
        if not os.path.exists(jsonl):
            raise BadInput("cannot read %s: no such file or directory" % clean(jsonl))
        text = tr.read_text(jsonl, "the results", tr.MAX_JSONL)
        try:  # a baseline or an nccl-tests output is one JSON document
            doc = tr.json_loads(text)
        except (ValueError, RecursionError):
            doc = None
        if isinstance(doc, dict) and doc.get("type") == "baseline":
            self.schema, self.configs, self.nccl_tests = io_.load_baseline(jsonl, doc)
        elif isinstance(doc, dict) and isinstance(doc.get("results"), list):
            self.schema, self.configs = io_.load_nccl_tests(jsonl, doc)
            self.nccl_tests = True
        else:
            self._load_results(path)

    nccl_tests = False
    passes = 0  # a --repeat run's passes (0: not one)
    command_line = None  # a tpbal run's, as its record says

    def _load_repeat(self, path):
        """A --repeat run: its passes (repeat.json's pass_dirs, each a run of its own) as a
        baseline of runs: per config the pooled samples and each pass's median; what the
        verdicts need of the run (conditions, ranks, noise) from its passes."""
        doc, dirs = trp.repeat_doc(path)
        runs = [Run(os.path.join(path, d)) for d in dirs]
        want = doc.get("command_line")  # the passes' own, where repeat.json does not say
        want = want if isinstance(want, str) else runs[0].command_line
        for d, r in zip(dirs, runs):
            if r.command_line != want:
                raise BadInput("%s/%s was run by another command line than the run's: the "
                               "passes of different runs are not pooled (use one run's passes, "
                               "or compare the runs as runs)" % (clean(path), clean(d)))
        self.schema, self.configs, _ = io_.load_baseline(
            path, io_.pooled(runs, [os.path.join(path, d) for d in dirs], "a --repeat run"))
        self.passes = len(runs)
        first = runs[0]
        self.ranks_csv, self.conditions = first.ranks_csv, first.conditions
        for r in runs:
            self.emulated |= r.emulated
            if r.cal_spread is not None:
                self.cal_spread = max(self.cal_spread or 0.0, r.cal_spread)
            if r.busy and (not self.busy or r.busy[0] > self.busy[0]):
                self.busy = r.busy

    def _load_results(self, path):
        res = tr.load(path)
        self.schema, self.ranks_csv = res.schema, res.ranks_csv
        self.command_line = res.run.get("command_line")
        self.conditions = io_.conditions(res.run)
        inj = res.run.get("inject_delay_rank")
        if isinstance(inj, int) and not isinstance(inj, bool) and inj >= 0:
            self.emulated.add(inj)  # a delay injected on purpose
        spread = [s for c in res.configs for s in (c.get("speed_spread") or []) if tr.finite(s)]
        self.cal_spread = max(spread) if spread else None
        load = res.summary.get("cpu_others") if isinstance(res.summary, dict) else None
        if isinstance(load, dict) and tr.finite(load.get("share")):
            self.busy = (float(load["share"]), tr.clean(str(load.get("host", "?")), 60))
        for c in res.configs:
            self.configs[tr.config_key(c)] = entry(c)
            asked, ranks = c.get("emulate_asked") or [], c.get("world_ranks") or []
            for w, f in zip(ranks, asked):
                if isinstance(w, int) and tr.finite(f) and f < 1.0:
                    self.emulated.add(w)


def entry(c):
    """What a comparison needs of one config record."""
    key = tr.config_key(c)
    samples = [x for x in c.get("step_samples_us") or [] if tr.finite(x) and x > 0]
    return {"metrics": {m: metric_value(c, m) for m in METRICS}, "label": tr.key_label(key),
            "samples": samples or None, "ordered": c.get("step_samples") == "all",
            "spread": 0.0, "runs": 1, "record": c}
