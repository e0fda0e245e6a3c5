"""check_block.py DIR SHAPES [plan] - the --block records of a run, recomputed from what does
not share their code:
  - every block names its configs, in the preset's order (SHAPES, comma-separated), each
    config naming the block back (block, block_pos), on the block's TP degree and policy,
    all passing --check;
  - the block's step of every iteration recomputed from the configs' Perfetto traces (the
    slowest group's last x1 of the last GEMM less its first c0 of the first GEMM), its
    median the record's, tokens/s per rank = M / (tp x median step);
  - the block's steps over the sums of its GEMMs' steps printed (not asserted: a rank
    descheduled between two GEMMs lengthens the block alone);
  - the answer: a throughput and a latency use line, each the recommendable block (even, or
    a policy whose verdict is better) with the most tokens/s per rank and the shortest step;
  - plan: every weighted config took its shards from the plan (speed source "plan").
"""
import json
import math
import os
import statistics
import sys


def load(d):
    recs = [json.loads(line) for line in open(os.path.join(d, "results.jsonl"))]
    cfgs = {r["id"]: r for r in recs if r["type"] == "config"}
    blocks = [r for r in recs if r["type"] == "block"]
    summ = [r for r in recs if r["type"] == "summary"]
    return cfgs, blocks, summ[0] if summ else None


def trace_marks(d, cid):
    """(tid, iter) -> [c0, x1] of config cid from its trace."""
    tr = json.load(open(os.path.join(d, "trace-%03d.json" % cid)))
    marks = {}
    for e in tr["traceEvents"]:
        if e.get("ph") != "X":
            continue
        key = (e["tid"], e["args"]["iter"])
        m = marks.setdefault(key, [math.inf, -math.inf])
        if e["name"] == "compute":
            m[0] = e["ts"]
        m[1] = max(m[1], e["ts"] + e["dur"])
    return marks


def steps_from_traces(d, b):
    first, last = trace_marks(d, b["configs"][0]), trace_marks(d, b["configs"][-1])
    tp, world = b["tp"], b["world_size"]
    out = []
    for i in range(b["iters"]):
        out.append(max(max(last[(r, i)][1] for r in range(g, g + tp)) -
                       min(first[(r, i)][0] for r in range(g, g + tp))
                       for g in range(0, world, tp)))
    return out


def check_block(d, cfgs, b, shapes):
    ids = b["configs"]
    assert [cfgs[c]["shape"] for c in ids] == shapes, (b["id"], ids, shapes)
    for pos, c in enumerate(ids):
        cf = cfgs[c]
        assert (cf["block"], cf["block_pos"]) == (b["id"], pos), (b["id"], c)
        assert (cf["tp"], cf["policy"], cf["m"]) == (b["tp"], b["policy"], b["tokens"]), c
        assert cf["check"] == "pass", (c, cf["check"], cf["max_rel_err"])
    steps = b["steps_us"]
    again = steps_from_traces(d, b)
    worst = max(abs(a - r) for a, r in zip(steps, again))
    assert worst < 0.01, ("block %d: steps differ from the traces' by %.4f us" % (b["id"], worst))
    med = statistics.median(steps)
    assert abs(med - b["step_us"]["median"]) <= 1e-9 * med, (med, b["step_us"])
    tps = b["tokens"] / (b["tp"] * med * 1e-6)
    assert abs(tps - b["tokens_per_s_rank"]) <= 1e-9 * tps, (tps, b["tokens_per_s_rank"])
    assert b["tokens_per_s_rank_lo"] <= tps <= b["tokens_per_s_rank_hi"], b
    sums = [sum(cfgs[c]["step_samples_us"][i] for c in ids) for i in range(b["iters"])]
    over = max(s / t for s, t in zip(steps, sums))
    print("block %d tp %d %s: %.0f us a step, %.0f tokens/s per rank; the steps at most %.4f of "
          "the GEMMs' sums" % (b["id"], b["tp"], b["policy"], med, tps, over))
    gemm_sum = sum(cfgs[c]["step_us"]["median"] for c in ids)
    assert abs(gemm_sum - b["gemm_step_sum_us"]) <= 1e-6 * gemm_sum, (gemm_sum, b)


def recommendable(summ, b):
    if b["policy"] == "even":
        return True
    for a in summ["answer"]:
        if a.get("kind") == "block_policy" and a["tp"] == b["tp"] and a["policy"] == b["policy"]:
            return a["verdict"] == "better"
    return True


def check_answer(blocks, summ):
    use = {a["question"]: a for a in summ["answer"] if a.get("kind") == "block_use"}
    assert set(use) == {"throughput", "latency"}, use
    ok = [b for b in blocks if recommendable(summ, b)]
    thr = max(ok, key=lambda b: b["tokens_per_s_rank"])
    lat = min(ok, key=lambda b: b["step_us"]["median"])
    assert (use["throughput"]["tp"], use["throughput"]["policy"]) == (thr["tp"], thr["policy"])
    assert (use["latency"]["tp"], use["latency"]["policy"]) == (lat["tp"], lat["policy"])
    for q in use.values():
        if q["runner_up_tp"] is not None:
            assert q["over_runner_up_lo"] <= q["over_runner_up"] <= q["over_runner_up_hi"], q


def main():
    d, shapes = sys.argv[1], sys.argv[2].split(",")
    cfgs, blocks, summ = load(d)
    assert blocks, "no block records"
    for b in blocks:
        check_block(d, cfgs, b, shapes)
    in_blocks = {c for b in blocks for c in b["configs"]}
    assert in_blocks == set(cfgs), ("configs outside the blocks", set(cfgs) - in_blocks)
    check_answer(blocks, summ)
    if len(sys.argv) > 3 and sys.argv[3] == "plan":
        bad = [c["id"] for c in cfgs.values() if c["policy"] == "weighted" and
               c["speed_source"] != "plan"]
        assert not bad, ("weighted configs not from the plan", bad)


if __name__ == "__main__":
    main()
