"""check_budget.py DIR ITERS [extended] - the records of a --budget run agree with themselves.

Every config of a set measured side by side has budget_looks L >= 1 (the same for the set),
iters = L x ITERS and interleave_rounds = L x the rounds of one look; the summary's budget
counts the sets, those measured more than once (for the persistent straggler alone among
them) and those left open; every verdict of the answer at the level its looks allow (1 - 0.05 /
(L (L + 1))); a --block's blocks take their set's looks, and each use line's interval is at
the level of the looks of the block measured later; every TP degree's straggler test held to
1 % spent over the extensions at that degree, 0.01 / (J (J + 1)) with J = 1 + the later looks
of its sets (each set once). With `extended`: at least one set took a second look (exit 75
otherwise: the test's attempt is retried)."""
import json
import sys

d, iters = sys.argv[1], int(sys.argv[2])
want_ext = len(sys.argv) > 3 and sys.argv[3] == "extended"
recs = [json.loads(line) for line in open(d + "/results.jsonl")]
cfgs = [r for r in recs if r.get("type") == "config"]
summary = [r for r in recs if r.get("type") == "summary"][-1]
sets = {}
for c in cfgs:
    s = c["interleave_set"]
    if s < 0:
        assert "budget_looks" not in c, f"config {c['id']} alone has budget_looks"
        continue
    looks = c["budget_looks"]
    assert 1 <= looks <= 8, f"config {c['id']}: {looks} looks"
    assert c["iters"] == looks * iters, f"config {c['id']}: iters {c['iters']}, {looks} looks"
    assert c["interleave_rounds"] % looks == 0, f"config {c['id']}: rounds {c['interleave_rounds']}"
    assert len(c["step_samples_us"]) == min(c["iters"], 1000), f"config {c['id']}: samples"
    sets.setdefault(s, set()).add(looks)
for s, looks in sets.items():
    assert len(looks) == 1, f"set {s}: configs with different looks {looks}"
ext_at = {}  # TP degree -> the later looks of its sets with blocks, each set once
seen = set()
for c in cfgs:
    if c["tp"] > 1 and c.get("comm_only") != "yes" and c["interleave_set"] >= 0 and \
            c["interleave_set"] not in seen:
        seen.add(c["interleave_set"])
        ext_at[c["tp"]] = ext_at.get(c["tp"], 0) + c["budget_looks"] - 1
cfg_by = {c["id"]: c for c in cfgs}
blocks = [r for r in recs if r.get("type") == "block"]
looks_of = {}  # (tp, policy) -> its block's looks, 0 without
for blk in blocks:
    gl = {cfg_by[i].get("budget_looks", 0) for i in blk["configs"]}
    assert gl == {blk.get("budget_looks", 0)}, \
        f"block {blk['id']}: looks {blk.get('budget_looks')}, its GEMMs {gl}"
    assert blk["iters"] == max(1, blk.get("budget_looks", 0)) * iters, blk["id"]
    assert len(blk["steps_us"]) == blk["iters"], blk["id"]
    looks_of[(blk["tp"], blk["policy"])] = blk.get("budget_looks", 0)
for a in summary["answer"]:  # the level is the later block's (its set measured after)
    if a.get("kind") != "block_use" or a.get("runner_up_tp") is None:
        continue
    lb = {l for (t, _), l in looks_of.items() if t == a["runner_up_tp"]}
    assert len(lb) == 1, (a, lb)  # a degree's blocks: one set, one count of looks
    later = max(a["tp"], a["runner_up_tp"], key=lambda t: min(
        blk["id"] for blk in blocks if blk["tp"] == t))
    lw = looks_of[(a["tp"], a["policy"])] if later == a["tp"] else lb.pop()
    if lw == 0:
        assert "confidence" not in a, a  # 95 %, said nowhere
        continue
    assert (a["budget_looks"], a["measured_after_tp"]) == (
        lw, a["runner_up_tp"] if later == a["tp"] else a["tp"]), (a, lw)
b = summary["budget"]
extended = sum(1 for l in sets.values() if max(l) > 1)
assert b["sets"] == len(sets), f"summary: {b['sets']} sets, the configs say {len(sets)}"
assert b["extended"] == extended, f"summary: {b['extended']} extended, configs {extended}"
assert b["spent_s"] >= 0.0 and b["most_looks"] == 8, b
assert 0 <= b["for_straggler"] and 0 <= b["for_ranking"], b
assert b["for_straggler"] + b["for_ranking"] <= b["extended"], b
assert b["for_ranking"] == 0 or blocks, b
open_n = b["open_budget_spent"] + b["open_most_looks"]
assert open_n <= len(sets), b
for a in summary["answer"]:
    if a.get("kind") == "stragglers":  # 1 % where no set took looks (--budget had nothing)
        j = 1 + ext_at.get(a["tp"], 0)
        want = 0.01 / (j * (j + 1)) if sets else 0.01
        assert abs(a["false_alarm"] - want) < 1e-12, (a, j)
    if "budget_looks" in a:
        l = a["budget_looks"]
        assert abs(a["confidence"] - (1 - 0.05 / (l * (l + 1)))) < 1e-9, a
print(f"check_budget: {len(cfgs)} configs, {len(sets)} sets, {extended} measured again, "
      f"{b['spent_s']:.2f} s of {b['seconds']} s")
if want_ext and extended == 0:
    print("check_budget: no set took a second look in this attempt")
    sys.exit(75)
