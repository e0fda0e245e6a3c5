"""check_fleet.py DIR [EXCLUDED] - a fleet.json recomputed from its own per-round figures (not
from tpbal's code): every rank's score is the median over the rounds of its GFLOP/s over the
median of its cohort's (the ranks timed with it) that round; a node's GEMM score its slowest
rank's, its all-reduce score the same over the nodes' all-reduces, its link score the worse
of its links' over the links'; a node is excluded exactly when one of its scores has its whole
interval below the threshold (never for its clock: a peak has no interval), suspect when a
score is below with the interval reaching above; the exclude list and the --exclude= line are
those nodes' hosts. The GEMM's rounds and level: 5 at 95 % without --budget; with it, 5 a look
at look k's level 1 - 0.05 / (k (k + 1)), and the looks consistent with why they stopped
(decided: no node suspect for its GEMM; budget spent or the most looks: the nodes left
suspect counted). EXCLUDED (comma-separated hosts, or
"none"): the nodes that must be excluded, with GEMM among the reasons."""
import json
import statistics
import sys


def scores(series, cohorts=None):
    """Each item's score: per round its figure over its cohort's median that round, the
    median of those ratios taken as times (1 / median of the inverse ratios)."""
    n = len(series)
    cohorts = cohorts or [0] * n
    out = []
    for i in range(n):
        inv = []
        for j, x in enumerate(series[i]):
            col = [series[q][j] for q in range(n) if cohorts[q] == cohorts[i]
                   and series[q][j] is not None and series[q][j] > 0]
            if x is not None and x > 0 and col:
                inv.append(statistics.median(col) / x)
        out.append(1.0 / statistics.median(inv) if inv else None)
    return out


def close(a, b):
    return (a is None and b is None) or (a is not None and b is not None and
                                         abs(a - b) <= 1e-9 * max(1.0, abs(b)))


def judge(sc, thr):
    s, lo, hi = sc["score"], sc["lo"], sc["hi"]
    if s is None or s >= thr:
        return "ok"
    assert lo is not None and lo <= s and (hi is None or s <= hi), sc
    return "exclude" if hi is not None and hi < thr else "suspect"


def check_budget(d, nodes, thr):
    """The GEMM's rounds and level against --budget's looks (see the module's text)."""
    g, b = d["gemm"], d.get("budget")
    looks = b["looks"] if b else 1
    assert all(len(r["gflops_rounds"]) == g["rounds"] for r in d["ranks"]), g
    assert g["rounds"] == 5 * looks, (g, b)
    level = 1.0 - 0.05 / (looks * (looks + 1)) if b else 0.95
    assert close(g["level"], level), (g, b)
    if not b:
        return 1
    gemm_suspect = sum(judge(n["gemm"], thr) == "suspect" for n in nodes)
    assert 1 <= looks <= 8 and b["open"] == gemm_suspect, (b, gemm_suspect)
    assert b["stopped"] == ("decided" if not gemm_suspect else b["stopped"]), b
    assert b["stopped"] in ("decided", "budget spent", "the most looks"), b
    assert b["stopped"] != "the most looks" or looks == 8, b
    assert (b["spent_s"] > 0) == (looks > 1) and b["spent_s"] <= b["seconds"] * 1.5 + 1, b
    return looks


def main():
    d = json.load(open(sys.argv[1] + "/fleet.json"))
    assert d["schema"] == "tpbal-fleet/1", d["schema"]
    thr = d["threshold"]
    ranks = d["ranks"]
    assert len(ranks) == d["world_size"]
    got = scores([r["gflops_rounds"] for r in ranks], [r["cohort"] for r in ranks])
    hosts = []
    for r, s in zip(ranks, got):
        assert close(r["score"]["score"], s), (r, s)
        assert close(r["gflops"], 1.0 / statistics.median(
            [1.0 / x for x in r["gflops_rounds"] if x])), r
        if r["host"] not in hosts:
            hosts.append(r["host"])
    nodes = d["nodes"]
    assert len(nodes) == len(hosts)
    colls = scores([n["allreduce_rounds"] for n in nodes])
    links = scores([ln["busbw_rounds"] for ln in d["links"]])
    excl = []
    for j, n in enumerate(nodes):
        mine = [r for r in ranks if r["host"] == hosts[j]]
        slow = min(mine, key=lambda r: r["score"]["score"])
        assert n["slowest_rank"] == slow["rank"] and n["host"] == hosts[j], (n, slow)
        assert close(n["gemm"]["score"], slow["score"]["score"]), n
        assert close(n["collective"]["score"], colls[j]), (n, colls[j])
        mine_links = [s for ln, s in zip(d["links"], links) if j in (ln["from"], ln["to"])
                      and s is not None]
        assert close(n["link"]["score"], min(mine_links) if mine_links else None), n
        verdicts = [judge(n[k], thr) for k in ("gemm", "collective", "link", "clock")]
        verdict = "exclude" if "exclude" in verdicts else "suspect" if "suspect" in verdicts \
            else "ok"
        assert judge(n["clock"], thr) != "exclude", n  # a peak has no interval: suspect at most
        assert n["verdict"] == verdict, (n, verdicts)
        if verdict == "exclude":
            excl.append(hosts[j])
    assert d["exclude"] == excl, (d["exclude"], excl)
    assert d["slurm_exclude"] == ("--exclude=" + ",".join(excl) if excl else None)
    looks = check_budget(d, nodes, thr)
    print("fleet: %d ranks on %d nodes, excluded: %s; GEMM in %d look%s" % (
        len(ranks), len(nodes), ",".join(excl) or "none", looks, "" if looks == 1 else "s"))
    if len(sys.argv) > 2:
        want = [] if sys.argv[2] == "none" else sys.argv[2].split(",")
        if excl != want:
            sys.exit(75)  # a timing verdict: the caller's attempts decide
        for n in nodes:
            if n["host"] in want:
                assert "GEMM" in n["reason"], n


if __name__ == "__main__":
    main()
