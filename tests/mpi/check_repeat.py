"""check_repeat.py DIR PASSES - a --repeat run's repeat.json agrees with its passes, and its
verdicts over the passes are recomputed here from the passes' own records by the rule of
doc/METRICS.md "Repeated passes" (its own code: the normal and t quantiles from the
standard library, Cochran's Q, the pooled and the by-pass intervals, the pooled straggler
blocks), not read back from tpbal."""
import json
import math
import os
import statistics
import sys

d, passes = sys.argv[1], int(sys.argv[2])
rep = json.load(open(os.path.join(d, "repeat.json")))
assert rep["type"] == "repeat" and rep["passes"] == passes, rep["passes"]
assert rep["passes_done"] == passes and rep["status"] == "finished", rep["status"]
assert rep["pass_dirs"] == ["pass-%d" % (i + 1) for i in range(passes)], rep["pass_dirs"]
KEY = ("shape", "m", "n", "k", "tp", "placement", "split", "sequence_parallel", "policy", "chunks")
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
        9: 2.262}


def key(c):
    return tuple(c.get(k) for k in KEY)


runs = []
for p in rep["pass_dirs"]:
    recs = [json.loads(line) for line in open(os.path.join(d, p, "results.jsonl"))]
    assert recs[0]["type"] == "run" and recs[0]["status"] == "finished", p
    cfgs = {key(c): c for c in recs if c.get("type") == "config"}
    summary = [r for r in recs if r.get("type") == "summary"][-1]
    runs.append((cfgs, summary["answer"]))

# each config's step per pass, and its spread
for c in rep["configs"]:
    if c["kind"] != "config":
        continue
    steps = [r[0][key(c)]["step_us"]["median"] for r in runs]
    for got, want in zip(c["step_us"], steps):
        assert abs(got - want) <= 1e-9 * want, (c, steps)
    logs = [math.log(s) for s in steps]
    sd = statistics.stdev(logs) if len(logs) > 1 else 0.0
    assert abs(c["spread"] - sd) < 1e-9, (c["spread"], sd)

# the run-to-run line: the median and the most of every config's (and block's) spread
spreads = [c["spread"] for c in rep["configs"] if c["spread"] is not None]
rr = rep["run_to_run"]
assert rr["configs"] == len(spreads), (rr, spreads)
if spreads:
    assert abs(rr["median_spread"] - statistics.median(spreads)) < 1e-12, (rr, spreads)
    assert rr["max_spread"] == max(spreads), (rr, spreads)

# every policy verdict: its passes' own, then the combination recomputed
z95 = statistics.NormalDist().inv_cdf(0.975)
checked = 0
for v in rep["verdicts"]:
    if v["kind"] != "config":
        continue
    ys, ws, disturbed = [], [], 0
    for pv, (cfgs, answer) in zip(v["per_pass"], runs):
        mine = [p for a in answer if a.get("kind") == "tp" and a["tp"] == v["tp"] and
                a["m"] == v["m"] and a["n"] == v["n"] and a["k"] == v["k"]
                for p in a["policies"] if p["split"] == v["split"] and p["policy"] == v["policy"]
                and p["sequence_parallel"] == v["sequence_parallel"]]
        assert len(mine) == 1, (v, mine)
        m = mine[0]
        for f, g in (("speedup", "speedup"), ("lo", "speedup_lo"), ("hi", "speedup_hi")):
            assert abs(pv[f] - m[g]) <= 1e-9 * m[g], (f, pv, m)
        assert pv["verdict"] == m["verdict"], (pv, m)
        if m["verdict"] == "disturbed":
            disturbed += 1
            continue
        conf = m.get("confidence", 0.95)
        sigma = 0.5 * math.log(m["speedup_hi"] / m["speedup_lo"]) / \
            statistics.NormalDist().inv_cdf(0.5 + conf / 2)
        ys.append(-math.log(m["speedup"]))
        ws.append(1.0 / max(sigma, 1e-12) ** 2)
    n = len(ys)
    assert v["passes_used"] == n and v["disturbed"] == disturbed, v
    if n == 0:
        continue
    # one pass is its own mean (w y / w can round an ulp off y: a Q above 0 = n - 1)
    ymw = ys[0] if n == 1 else sum(w * y for w, y in zip(ws, ys)) / sum(ws)
    q = sum(w * (y - ymw) ** 2 for w, y in zip(ws, ys))
    pooled_half = z95 / math.sqrt(sum(ws))
    if q <= n - 1:
        rule, centre, half = "pooled", ymw, pooled_half
    else:
        mean = sum(ys) / n
        sd = statistics.stdev(ys) if n > 1 else math.inf
        rule, centre = "by_pass", mean
        half = max(T975[n - 1] * sd / math.sqrt(n), pooled_half) if n > 1 else math.inf
    assert v["rule"] == rule, (v["rule"], rule, q)
    assert abs(v["q"] - q) <= 1e-6 * max(1.0, q), (v["q"], q)
    if math.isfinite(half):
        s = math.exp(-centre)
        assert abs(v["speedup"] - s) < 1e-9 * s, (v["speedup"], s)
        assert abs(v["lo"] - s * math.exp(-half)) < 2e-3 * s, (v["lo"], s * math.exp(-half))
        assert abs(v["hi"] - s * math.exp(half)) < 2e-3 * s, (v["hi"], s * math.exp(half))
        lo_t, hi_t = math.exp(centre - half), math.exp(centre + half)  # time ratio
        want = ("better" if hi_t < 1 / 1.05 else "worse" if lo_t > 1.05 else
                "draw" if lo_t >= 1 / 1.05 and hi_t <= 1.05 else "inconclusive")
        if 2 * disturbed > n + disturbed:
            want = "disturbed"
        near = min(abs(hi_t - 1 / 1.05), abs(lo_t - 1.05), abs(lo_t - 1 / 1.05), abs(hi_t - 1.05))
        assert v["verdict"] == want or near < 2e-3, (v, want)
    checked += 1

# the straggler at each TP degree: the passes' own, and the pooled blocks
for s in rep["stragglers"]:
    per = []
    for pv, (cfgs, answer) in zip(s["per_pass"], runs):
        a = [x for x in answer if x.get("kind") == "stragglers" and x["tp"] == s["tp"]]
        assert len(a) == 1, a
        a = a[0]
        rank = a["most_often_slowest"]
        assert (pv["rank"] if pv["rank"] is not None else -1) == rank, (pv, a)
        assert pv["slowest_blocks"] == a["slowest_blocks"] and pv["blocks"] == a["blocks"], (pv, a)
        eff = a["effective_blocks"] if rank >= 0 and a["effective_blocks"] > 0 else a["blocks"]
        per.append((rank, a["slowest_blocks"], a["blocks"], eff))
    blocks = int(math.floor(sum(p[3] for p in per)))
    best = max(({r: sum(p[1] * p[3] / p[2] for p in per if p[0] == r and p[2] > 0)
                 for r, _, _, _ in per if r >= 0} or {-1: 0.0}).items(),
               key=lambda kv: kv[1])
    assert s["blocks"] == blocks, (s, blocks)
    if best[0] >= 0:
        assert s["rank"] == best[0] and s["slowest_blocks"] == int(math.floor(best[1])), (s, best)
        named = sum(1 for p in per if p[0] == best[0])
        assert s["named_in"] == named, (s, named)
        if s["verdict"] == "persistent":
            assert 2 * named > passes and s["slowest_blocks"] >= s["blocks_needed"], s
    assert s["verdict"] in ("none", "persistent", "transient", "not enough data"), s
# the use lines over the passes: per shape (block) and question the recommendable config
# (even, TP 1, or a policy whose verdict over the passes is better) with the lowest median of
# its passes' medians (throughput: x tp); the runner-up the next, at TP 1 another TP
# degree; how sure: sure (a GEMM) only where the whole interval favours the pick
better = {(v["kind"],) + key(v) for v in rep["verdicts"] if v["verdict"] == "better"}
cands = {}
for c in rep["configs"]:
    if c.get("comm_only") == "yes":
        continue
    steps = [s for s in c["step_us"] if s is not None and s > 0]
    if not steps or not (c["policy"] == "even" or c["tp"] == 1 or
                        (c["kind"],) + key(c) in better or
                        not any(v["kind"] == c["kind"] and key(v) == key(c)
                                for v in rep["verdicts"])):
        continue
    group = (c["kind"], c["m"], c["n"], c["k"], c.get("shape"))
    cands.setdefault(group, []).append((statistics.median(steps), c))
uses = 0
for group, cs in cands.items():
    for q in ("latency", "throughput"):
        cost = (lambda gc: gc[0] * gc[1]["tp"]) if q == "throughput" else (lambda gc: gc[0])
        order = sorted(cs, key=cost)
        pick = order[0][1]
        rest = [gc for gc in order[1:] if not (pick["tp"] == 1 and gc[1]["tp"] == 1)]
        got = [u for u in rep["use"] if u["question"] == q and u["kind"] ==
               ("block_use" if group[0] == "block" else "use") and
               (u["m"], u["n"], u["k"], u.get("shape")) == group[1:]]
        assert len(got) == 1, (group, q, got)
        u = got[0]
        assert key(u) == key(pick), (q, key(u), key(pick))
        assert abs(u["step_us"] - order[0][0]) <= 1e-9 * order[0][0], (u, order[0])
        if rest:
            assert u["runner_up_tp"] == rest[0][1]["tp"], (u, rest[0][1])
            if u["sure"] != "not enough data":
                assert u["margin_lo"] <= u["margin"] <= u["margin_hi"], u
                if group[0] == "config":
                    assert (u["sure"] == "sure") == (u["margin_lo"] > 1.0), u
        uses += 1
assert uses == len(rep["use"]), (uses, rep["use"])
print("check_repeat: %d passes, %d configs, %d verdicts recomputed, %d straggler degrees, "
      "%d use picks" % (passes, len(rep["configs"]), checked, len(rep["stragglers"]), uses))
