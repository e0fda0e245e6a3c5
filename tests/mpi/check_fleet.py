"""check_fleet.py DIR [EXCLUDED] - a fleet.json recomputed from its own raw figures (not from
tpbal's code): every rank's score is its GFLOP/s over the median of the ranks', its interval
the score times exp(-+half); a node's GEMM score its slowest rank's, its all-reduce score its
bus bandwidth over the median of the nodes', its link score the worse of its links' over the
median link; a node is excluded exactly when one of its scores has its whole interval below
the threshold, suspect when a score is below with the interval reaching above; the exclude
list and the --exclude= line are those nodes' hosts. EXCLUDED (comma-separated hosts, or
"none"): the nodes that must be excluded, with GEMM among the reasons."""
import json
import math
import statistics
import sys


def score(v, half, ref):
    if v is None or ref is None or not v > 0:
        return None
    s = v / ref
    h = half if half is not None and half >= 0 else 0.0
    return (s, s * math.exp(-h), s * math.exp(h))


def close(a, b):
    return (a is None and b is None) or abs(a - b) <= 1e-9 * max(1.0, abs(b))


def main():
    d = json.load(open(sys.argv[1] + "/fleet.json"))
    assert d["schema"] == "tpbal-fleet/1", d["schema"]
    thr = d["threshold"]
    ranks = d["ranks"]
    assert len(ranks) == d["world_size"]
    ref = statistics.median(r["gflops"] for r in ranks if r["gflops"])
    hosts = []
    for r in ranks:
        s = score(r["gflops"], r["gflops_half"], ref)
        got = r["score"]
        assert all(close(x, y) for x, y in zip(s, (got["score"], got["lo"], got["hi"]))), (r, s)
        if r["host"] not in hosts:
            hosts.append(r["host"])
    nodes = d["nodes"]
    assert len(nodes) == len(hosts)
    colls = [n["allreduce_busbw_gbs"] for n in nodes if n["allreduce_busbw_gbs"]]
    cref = statistics.median(colls) if colls else None
    links = [ln["busbw_gbs"] for ln in d["links"] if ln["busbw_gbs"]]
    lref = statistics.median(links) if links else None
    excl = []
    for j, n in enumerate(nodes):
        mine = [r for r in ranks if r["host"] == hosts[j]]
        slow = min(mine, key=lambda r: r["score"]["score"])
        assert n["slowest_rank"] == slow["rank"] and n["host"] == hosts[j], (n, slow)
        comps = {"GEMM": (slow["score"]["score"], slow["score"]["lo"], slow["score"]["hi"]),
                 "collective": score(n["allreduce_busbw_gbs"], n["allreduce_busbw_half"], cref)}
        ls = [score(ln["busbw_gbs"], ln["busbw_half"], lref) for ln in d["links"]
              if j in (ln["from"], ln["to"])]
        ls = [x for x in ls if x]
        comps["link"] = min(ls) if ls else None
        for k, key in (("collective", "collective"), ("link", "link")):
            got = n[key]
            want = comps[k]
            assert (want is None and got["score"] is None) or close(want[0], got["score"]), (
                n, k, want)
        verdict = "ok"
        for k, c in comps.items():
            if c and c[0] < thr:
                verdict = "exclude" if c[2] < thr else ("suspect" if verdict == "ok" else verdict)
        # the clock component comes from the devices' peaks: counted where tpbal says so
        if "clock" in n["reason"] and n["verdict"] == "exclude":
            verdict = "exclude"
        assert n["verdict"] == verdict, (n, comps, verdict)
        if verdict == "exclude":
            excl.append(hosts[j])
    assert d["exclude"] == excl, (d["exclude"], excl)
    assert d["slurm_exclude"] == ("--exclude=" + ",".join(excl) if excl else None)
    print("fleet: %d ranks on %d nodes, excluded: %s" % (len(ranks), len(nodes),
                                                         ",".join(excl) or "none"))
    if len(sys.argv) > 2:
        want = [] if sys.argv[2] == "none" else sys.argv[2].split(",")
        if excl != want:
            sys.exit(75)  # a timing verdict: the caller's attempts decide
        for n in nodes:
            if n["host"] in want:
                assert "GEMM" in n["reason"], n


if __name__ == "__main__":
    main()
