"""tpbal_results: read and validate a tpbal result directory.

Shared by tpbal-report and tpbal-compare (and their tests): every file a tool
reads goes through here, so that every tool refuses the same bad input with the
same one-line message (BadInput, exit 2) and never with a traceback.

A result directory holds results.jsonl (a "run" record, one "config" record per
measured config, a "summary"), results.csv, ranks.csv and trace-NNN.json files.
"""
import argparse
import csv
import io
import json
import math
import os
import sys
import time

import tpbal_files as tf
import tpbal_schema as ts

SCHEMA = ts.VERSION  # the C record's TPB_SCHEMA_VERSION
MAX_JSONL = 1 << 30  # bytes read from a results.jsonl or baseline
MAX_CSV = 1 << 30
MAX_TRACE = 4 << 30
# values beyond this are no measurement of this world (a step of 1e300 us): refused; and a
# magnitude below MIN_VALUE but not 0 (1e-200 us) is no time either (its square underflows)
MAX_VALUE = 1e200
MIN_VALUE = 1e-100

# what identifies a config across runs, and what a record written before a field existed
# stands for (before --overlap: serial; --sequence-parallel: off; --block: position 0)
KEY_FIELDS = ts.IDENTITY
KEY_DEFAULTS = ts.IDENTITY_DEFAULTS
# a config record's fields and their kinds: int, num (number or null), str, list (of
# numbers or nulls), obj (object)
CONFIG_FIELDS = {
    "id": "int", "tp": "int", "world_size": "int", "m": "int", "n": "int", "k": "int",
    "iters": "int", "split": "str", "policy": "str", "dtype": "str", "backend": "str",
    "step_us": "obj",
    "comm_bytes": "num", "lb": "num", "u": "num", "e": "num", "e_het": "num", "r": "num",
    "tflops": "num", "pct_peak": "num", "algbw_gbs": "num", "busbw_gbs": "num",
    "predicted_speedup": "num", "speedup": "num", "xfer_us": "num", "xfer_free_us": "num",
    "whatif_step_us": "num", "slowdown": "num", "whatif_straggler_step_us": "num",
    "slowdown_straggler": "num", "t1_us": "num", "max_rel_err": "num",
    "straggler_rank": "num", "last_most_often": "num",
    "shards": "sizes", "speeds": "ratios", "compute_us": "list", "wait_us": "list",
    "comm_us": "list", "emulate_asked": "list", "emulate_achieved": "list",
    "marks_within_us": "list",
    "step_samples_us": "samples", "step_samples": "str",
    "block": "int", "block_pos": "int", "group_nodes": "int", "warmup": "int",
    "nspikes": "count", "causality_violations": "count", "trace": "str",
    "emulate_mode": "str", "host_s": "num", "inputs_s": "num", "device_shared": "num",
    "straggler": "numobj", "disturbed": "anyobj", "spikes": "objs",
    "emulate_switch_iter": "num", "interleave_set": "num", "interleave_rounds": "num",
    "budget_looks": "num",
    "placement": "str", "col_collective": "str", "comm_only": "str", "collective": "str",
    "shape": "str", "check": "str", "speed_source": "str", "sequence_parallel": "str",
    "world_ranks": "ranks", "overlap_figures": "numobj", "chunks": "count", "overlap": "str",
    "speed_spread": "list", "fractions": "list", "compute_p95_us": "list", "wait_free_us": "list",
}
REQUIRED = ("id", "tp", "m", "n", "k", "split", "policy", "dtype", "step_us")
STEP_KEYS = ("median", "p95", "min", "max")


BadInput, clean, regular_file = tf.BadInput, tf.clean, tf.regular_file
read_text, write_atomic = tf.read_text, tf.write_atomic


def finite(v):
    """v is a number (not a bool), finite, within MAX_VALUE and 0 or at least MIN_VALUE in
    magnitude. An integer beyond float range is no number here (and never raises)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return False
    if isinstance(v, int):
        return -MAX_VALUE <= v <= MAX_VALUE
    return math.isfinite(v) and (v == 0 or MIN_VALUE <= abs(v) <= MAX_VALUE)


def num(v):
    """v as a float if it is a usable number, else None."""
    return float(v) if finite(v) else None


def _no_constant(name):
    raise ValueError("%s is not JSON" % name)


def _int(text):
    """A JSON integer: one of more than 200 digits is no measurement (and would not convert
    to a float): refused as not JSON tpbal writes."""
    if len(text) > 200:
        raise ValueError("an integer of %d digits" % len(text))
    return int(text)


def _object(pairs):
    """A JSON object without a key given twice (tpbal's C reader would take the first, Python
    the last: both refuse it)."""
    obj = {}
    for key, value in pairs:
        if key in obj:
            raise ValueError("the key %r given twice in one object" % key[:100])
        obj[key] = value
    return obj


def json_loads(text):
    """Strict JSON: NaN and Infinity (which tpbal never writes), integers of more than 200
    digits and a key given twice in one object are refused."""
    return json.loads(text, parse_constant=_no_constant, parse_int=_int, object_pairs_hook=_object)


def load_json(path, what, limit, not_json):
    """One strict JSON document (json_loads) from path, read as read_text reads `what` (at
    most limit bytes); BadInput(not_json) where it does not parse."""
    text = read_text(path, what, limit)
    try:
        return json_loads(text)
    except (ValueError, RecursionError):
        raise BadInput(not_json)


def _check_kind(rec, key, kind, where):
    v = rec[key]
    ok = {"int": lambda x: isinstance(x, int) and not isinstance(x, bool) and abs(x) < 2 ** 62,
          "num": lambda x: x is None or finite(x),
          "str": lambda x: isinstance(x, str),
          "obj": lambda x: isinstance(x, dict),
          "list": lambda x: isinstance(x, list) and all(y is None or finite(y) for y in x),
          # relative speeds: only their ratios mean something, any finite magnitude
          "ratios": lambda x: isinstance(x, list) and all(
              y is None or (isinstance(y, (int, float)) and not isinstance(y, bool) and
                            math.isfinite(y)) for y in x),
          "ranks": lambda x: isinstance(x, list) and all(
              isinstance(y, int) and not isinstance(y, bool) and 0 <= y < 2 ** 31 for y in x),
          "count": lambda x: isinstance(x, int) and not isinstance(x, bool) and 0 <= x < 2 ** 31,
          "numobj": lambda x: x is None or (isinstance(x, dict) and all(
              y is None or finite(y) for y in x.values())),
          "anyobj": lambda x: x is None or isinstance(x, dict),
          "objs": lambda x: isinstance(x, list) and all(isinstance(y, dict) for y in x),
          # shards: sizes, never negative; step samples: microseconds a run can hold (below
          # 1e15 us, 31 years: 1e200 overflowed the statistics' squares)
          "sizes": lambda x: isinstance(x, list) and all(y is None or (finite(y) and y >= 0)
                                                         for y in x),
          "samples": lambda x: isinstance(x, list) and all(
              y is None or (finite(y) and 0 <= y < 1e15) for y in x)}[kind]
    if not ok(v):
        raise BadInput("%s: '%s' is %s, not %s" % (where, key, clean(json.dumps(v), 60), {
            "int": "an integer", "num": "a finite number or null", "str": "a string",
            "obj": "an object", "list": "a list of finite numbers",
            "ratios": "a list of finite numbers", "ranks": "a list of world ranks",
            "count": "a count", "numobj": "an object of numbers, or null",
            "anyobj": "an object or null", "objs": "a list of objects",
            "sizes": "a list of sizes (finite, not negative)",
            "samples": "a list of times from 0 to 1e15 us"}[kind]))


def check_config(rec, where):
    """Refuse a config record whose fields are missing or of the wrong kind."""
    for key in REQUIRED:
        if key not in rec:
            raise BadInput("%s: a config record without '%s': is it a tpbal result?"
                           % (where, key))
    for key, kind in CONFIG_FIELDS.items():
        if key in rec:
            _check_kind(rec, key, kind, where)
    for key, v in rec.items():  # labels a terminal, a plot's font and XML can all show
        if isinstance(v, str):
            rec[key] = clean(v, 100000)
    step = rec["step_us"]
    for key in STEP_KEYS:
        if key in step and not (step[key] is None or finite(step[key])):
            raise BadInput("%s: 'step_us.%s' is not a finite number" % (where, key))
    if not finite(step.get("median")):
        raise BadInput("%s: a config record without a finite 'step_us.median'" % where)
    if rec["tp"] < 1 or min(rec["m"], rec["n"], rec["k"]) < 1:
        raise BadInput("%s: tp, m, n and k must be positive" % where)


def check_block(rec, where):
    """A --block record as the tools read it: its configs (ids), tp, tokens, steps, or one
    line saying what is wrong."""
    num = ("gemm_step_sum_us", "tokens_per_s_rank", "tokens_per_s_rank_lo",
           "tokens_per_s_rank_hi")
    ok = isinstance(rec.get("id"), int) and not isinstance(rec.get("id"), bool) and \
        all(rec.get(k) is None or (finite(rec[k]) and rec[k] >= 0) for k in num) and \
        isinstance(rec.get("configs"), list) and rec["configs"] and \
        all(isinstance(c, int) and not isinstance(c, bool) for c in rec["configs"]) and \
        isinstance(rec.get("tp"), int) and rec["tp"] >= 1 and \
        isinstance(rec.get("tokens"), int) and rec["tokens"] >= 1 and \
        isinstance(rec.get("step_us"), dict) and finite(rec["step_us"].get("median")) and \
        rec["step_us"]["median"] > 0 and isinstance(rec.get("steps_us"), list) and \
        all(finite(v) and v > 0 for v in rec["steps_us"])
    if not ok:  # a median of 0 or a string rate: the tools divided by it or compared it
        raise BadInput("%s: a block record without its id, configs, tp, tokens, positive steps "
                       "or numeric rates: is it a tpbal result?" % where)
    for key, v in rec.items():
        if isinstance(v, str):
            rec[key] = clean(v, 200)
    return rec


def check_run(run, where):
    """Refuse a run record whose structured fields are of the wrong kind (the tools read
    them as such): the cost profile, the per-rank facts."""
    prof = run.get("cost_profile")
    if prof is not None and not (isinstance(prof, dict) and isinstance(prof.get("source"), str)
                                 and isinstance(prof.get("costs"), list)
                                 and all(finite(c) for c in prof["costs"])):
        raise BadInput("%s: 'cost_profile' is %s, not null or an object with a source and "
                       "costs" % (where, clean(json.dumps(prof), 60)))
    if "ranks" in run and not isinstance(run["ranks"], list):
        raise BadInput("%s: 'ranks' is not a list" % where)
    for key in ("dtype", "backend"):  # names the tools look up
        if run.get(key) is not None and not isinstance(run[key], str):
            raise BadInput("%s: '%s' is not a name" % (where, key))
    for r in records(run.get("ranks")):  # host and device names, shown as labels
        for key, v in r.items():
            if isinstance(v, str):
                r[key] = clean(v, 1000)


class Results:
    """One result directory (or a bare results.jsonl): its records, checked."""

    def __init__(self, path):
        self.path = path
        self.dir = path if os.path.isdir(path) else os.path.dirname(path) or "."
        self.jsonl = os.path.join(path, "results.jsonl") if os.path.isdir(path) else path
        self.run, self.configs, self.summary, self.blocks = None, [], {}, []
        ranks = os.path.join(self.dir, "ranks.csv")
        self.ranks_csv = ranks if os.path.isdir(path) and os.path.exists(ranks) else None
        self._parse(read_text(self.jsonl, "the results", MAX_JSONL))

    def _parse(self, text):
        # records end at "\n" alone: str.splitlines() also splits at U+0085, U+2028 and U+2029,
        # which a name in a record may hold (the C writer escapes them; other writers may not)
        lines = text.split("\n")
        self.torn = None  # a last line cut short (a run killed while appending): skipped
        prog = Progress("reading %s" % clean(self.jsonl), len(lines), "lines")
        ids = {}
        for n, line in enumerate(lines, 1):
            if not line.strip():
                continue
            if n % 500 == 0:
                prog.step(n)
            where = "%s line %d" % (clean(self.jsonl), n)
            try:
                rec = json_loads(line)
            except (ValueError, RecursionError):
                if n == len(lines) and not text.endswith("\n") and n > 1:
                    self.torn = n  # tpbal appends whole lines: only the last can be torn
                    continue
                raise BadInput("%s is not JSON: is it a tpbal results.jsonl?" % where)
            if not isinstance(rec, dict):
                raise BadInput("%s is not a JSON object: is it a tpbal results.jsonl?" % where)
            kind = rec.get("type")
            if kind == "run":
                self.run = rec
            elif kind == "config":
                check_config(rec, where)
                if rec["id"] in ids:  # the tools key configs by id: one would hide the other
                    raise BadInput("%s: config id %d is given twice (line %d too): is it one "
                                   "tpbal run's results.jsonl?" % (where, rec["id"],
                                                                   ids[rec["id"]]))
                ids[rec["id"]] = n
                self.configs.append(rec)
            elif kind == "summary":
                self.summary = rec
            elif kind == "block":
                self.blocks.append(check_block(rec, where))
        if self.run is None:
            raise BadInput("%s has no run record: is it a tpbal results.jsonl?"
                           % clean(self.jsonl))
        check_run(self.run, "%s's run record" % clean(self.jsonl))

    @property
    def schema(self):
        return self.run.get("schema")

    def trace_path(self, cid):
        """Config cid's trace: its trace-NNN.json, else the run's trace.json (--trace-per
        run), which holds every config."""
        own = os.path.join(self.dir, "trace-%03d.json" % cid)
        run = os.path.join(self.dir, "trace.json")
        return run if not os.path.exists(own) and os.path.exists(run) else own


def is_repeat(path):
    """path is a --repeat run's folder: its repeat.json and no results.jsonl of its own."""
    return (os.path.isdir(path) and os.path.exists(os.path.join(path, "repeat.json")) and
            not os.path.exists(os.path.join(path, "results.jsonl")))


def load(path):
    """The results at path (a directory or a results.jsonl)."""
    if not os.path.exists(path):
        raise BadInput("cannot read %s: no such file or directory" % clean(path))
    if is_repeat(path):
        raise BadInput("%s is a tpbal --repeat run: each pass is a run of its own (%s/pass-1, "
                       "...): give one of them; its answer over the passes is in repeat.json, "
                       "and tpbal-compare reads the whole run" % (clean(path), clean(path)))
    refuse_bare_passes(path)
    return Results(path)


def refuse_bare_passes(path):
    """A folder of a --repeat run's passes without its repeat.json: said as that, not as a
    missing results.jsonl."""
    if (os.path.isdir(path) and os.path.isdir(os.path.join(path, "pass-1")) and
            not os.path.exists(os.path.join(path, "results.jsonl"))):
        raise BadInput("%s holds a --repeat run's passes but no repeat.json (a run killed "
                       "before it wrote it?): give one pass, %s/pass-1, ..." %
                       (clean(path), clean(path)))


def whole_lines(text):
    """text without a last line cut short (no newline after it: a run killed while it was
    appending its rows), which is dropped; whole lines as they are."""
    return text if not text or text.endswith("\n") else text[:text.rfind("\n") + 1]


def read_ranks(path):
    """The rows of a ranks.csv as dicts of strings (a torn last row dropped)."""
    text = whole_lines(read_text(path, "the rank table", MAX_CSV))
    csv.field_size_limit(MAX_CSV)
    try:
        rows = list(csv.DictReader(io.StringIO(text, newline="")))  # rows end at "\n" alone
    except csv.Error as e:
        raise BadInput("%s is not CSV: %s" % (clean(path), e))
    seen = {}
    for n, r in enumerate(rows, 2):  # a config's rank twice: its per-rank views mismatched
        key = (r.get("id"), r.get("world_rank") or r.get("rank"))
        if key in seen:
            raise BadInput("%s line %d repeats config %s's rank %s (line %d): is it one tpbal "
                           "run's rank table?" % (clean(path), n, clean(str(key[0]), 20),
                                                  clean(str(key[1]), 20), seen[key]))
        seen[key] = n
    return rows


def read_trace(path, config=None):
    """A trace file's otherData and events (each a dict). A run's trace (--trace-per run)
    is cut to one config's view: its entry of otherData.configs, the names and that
    config's spans and arrows, with each rank's tid mapped from its world rank to its
    position in the config (as a config's own trace has it)."""
    tr = load_json(path, "the trace", MAX_TRACE, "the trace %s is not JSON" % clean(path))
    if not isinstance(tr, dict) or not isinstance(tr.get("traceEvents"), list):
        raise BadInput("the trace %s is not a tpbal trace (an object with traceEvents)"
                       % clean(path))
    other = tr.get("otherData") if isinstance(tr.get("otherData"), dict) else {}
    events = [e for e in tr["traceEvents"] if isinstance(e, dict)]
    if other.get("trace_per") != "run":
        return other, events
    info = [c for c in records(other.get("configs")) if c.get("config") == config]
    if not info:
        raise BadInput("the run's trace %s has no config %s" % (clean(path), config))
    info = info[0]
    ranks = info.get("world_ranks") if isinstance(info.get("world_ranks"), list) else []
    pos = {w: p for p, w in enumerate(ranks)}
    view = []
    for e in events:
        args = e.get("args") if isinstance(e.get("args"), dict) else {}
        if e.get("ph") != "M" and args.get("config", config) != config:
            continue
        if e.get("tid") in pos and not isinstance(e.get("tid"), bool):
            e = dict(e, tid=pos[e["tid"]])
        elif e.get("ph") in ("M", "X"):
            continue  # a rank this config did not run on
        view.append(e)
    return info, view


def records(x):
    """The objects of a list that a record holds (a summary's decomposition, say): []
    for anything else, so that a broken summary draws nothing instead of failing."""
    return [r for r in x if isinstance(r, dict)] if isinstance(x, list) else []


def config_key(c):
    return tuple(c.get(f, KEY_DEFAULTS.get(f)) for f in KEY_FIELDS)


def shape_label(c):
    if c.get("comm_only") == "yes":
        return "%s %s" % (c.get("collective"), size_label(c.get("comm_bytes")))
    return "%dx%dx%d" % (c["m"], c["n"], c["k"])


def time_unit(us):
    """The unit a time of this size reads best in, and its size in us."""
    if finite(us) and us >= 1e6:
        return "s", 1e6
    if finite(us) and us >= 1e3:
        return "ms", 1e3
    return "us", 1.0


def us_text(us):
    """A time as people read it: 830 us, 12.3 ms, 1.25 s; '-' when unknown."""
    if not finite(us):
        return "-"
    unit, f = time_unit(us)
    return ("%.0f %s" if unit == "us" else "%.3g %s") % (us / f, unit)


def size_label(b):
    """Bytes as nccl-tests and people write them: 4K, 1M, 256M (1024-based)."""
    if not finite(b):
        return "?"
    for unit, scale in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if b >= scale and b % scale == 0:
            return "%d%s" % (b // scale, unit)
    return "%dB" % b


def collective_of(split, col_collective="allgather", sequence_parallel="off"):
    """The collective a config runs (run/coll.c's tpb_coll_of): row all-reduces (with
    sequence parallelism: reduce-scatters), col all-gathers (or all-reduces with
    --col-collective allreduce; with sequence parallelism it all-gathers X)."""
    if split == "row":
        return "reduce-scatter" if sequence_parallel == "on" else "all-reduce"
    if sequence_parallel != "on" and col_collective == "allreduce":
        return "all-reduce"
    return "all-gather"


def key_label(key):
    k = dict(zip(KEY_FIELDS, key))
    if k.get("comm_only") == "yes":
        coll = collective_of(k["split"], k["col_collective"], k.get("sequence_parallel"))
        what = "comm %s %s" % (coll, size_label(k["comm_bytes"]))
    else:
        what = "%s %sx%sx%s" % (ts.split_label(k), k["m"], k["n"], k["k"])
    label = "tp%s %s %s %s%s%s" % (k["tp"], what, k["policy"], k["dtype"],
                                   "" if k["placement"] in (None, "packed")
                                   else " " + str(k["placement"]),
                                   " %s chunks" % k["chunks"] if k.get("chunks") else "")
    if k.get("block_pos"):
        label += " (block GEMM %s)" % k["block_pos"]
    return clean(label)


def no_nan(x):
    """NaN and infinities as null: output stays strict JSON."""
    if isinstance(x, dict):
        return {k: no_nan(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [no_nan(v) for v in x]
    return x if not isinstance(x, float) or math.isfinite(x) else None


def json_dumps(x, **kw):
    return json.dumps(no_nan(x), allow_nan=False, **kw)


class ArgumentParser(argparse.ArgumentParser):
    """The tools' argument parser: a usage error is BadInput (one line, exit 2, the tool's
    --help named), and the description keeps its lines as written."""

    def __init__(self, prog, doc, **kw):
        super().__init__(prog=prog, description=doc.split("\n", 1)[1],
                         formatter_class=argparse.RawDescriptionHelpFormatter, **kw)

    def error(self, message):
        raise BadInput("%s: see %s --help" % (message, self.prog))


TOOL, Progress = tf.TOOL, tf.Progress  # progress lines of a long run (tpbal_files)


def run_main(tool, main, argv):
    """Run a tool's main; every error is one line on stderr: 2 for bad input, 130 on ^C.
    Returns the exit status."""
    TOOL[:] = [tool, time.monotonic(), 5.0]
    try:
        return main(argv)
    except BadInput as e:
        print("%s: error: %s" % (tool, clean(e, 2000)), file=sys.stderr)
    except KeyboardInterrupt:
        print("%s: interrupted" % tool, file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except (OSError, MemoryError, RecursionError) as e:
        print("%s: error: %s" % (tool, clean(e, 2000)), file=sys.stderr)
    except Exception as e:  # a bug: still one line, with what to report
        if os.environ.get("TPBAL_DEBUG"):
            raise
        print("%s: error: internal error (%s: %s): please report it with the input "
              "(TPBAL_DEBUG=1 shows where)" % (tool, type(e).__name__, clean(e)),
              file=sys.stderr)
    return 2
