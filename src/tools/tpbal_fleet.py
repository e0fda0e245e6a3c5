"""tpbal_fleet: the tools' side of tpbal --fleet (fleet.json, schema tpbal-fleet/1).

  load(path)             a fleet.json (or a directory holding one), checked
  compare(old, new, tol, spread)
                         per node (by host): its slowest rank's GEMM rate and its all-reduce,
                         and per link (by its hosts), new over old with the 95 % interval of
                         the ratio (the two figures' half-widths and the spread between
                         identical runs in quadrature), and a verdict:
                         slower / faster beyond the tolerance, unchanged inside it,
                         inconclusive otherwise
  plot(fleets, ...)      tpbal-report's fleet view: every rank's score by node against the
                         threshold, the links' bus bandwidth, and with several runs the
                         history of every node's score
"""
import math
import os
import statistics

import tpbal_results as tr
import tpbal_stats as st
from tpbal_results import BadInput, clean, finite

SCHEMA = "tpbal-fleet/1"
MAX_FLEET = 256 << 20


def load(path):
    f = os.path.join(path, "fleet.json") if os.path.isdir(path) else path
    if not os.path.exists(f):
        raise BadInput("cannot read %s: no fleet.json (tpbal --fleet --out DIR writes one)"
                       % clean(f))
    doc = tr.load_json(f, "the fleet", MAX_FLEET,
                       "%s is not JSON: is it a tpbal fleet.json?" % clean(f))
    ok = isinstance(doc, dict) and doc.get("schema") == SCHEMA and \
        isinstance(doc.get("ranks"), list) and isinstance(doc.get("nodes"), list) and \
        isinstance(doc.get("links"), list) and finite(doc.get("threshold"))
    ok = ok and all(isinstance(r, dict) and isinstance(r.get("host"), str) and
                    isinstance(r.get("rank"), int) and not isinstance(r.get("rank"), bool) and
                    (r.get("gflops") is None or finite(r.get("gflops")))
                    for r in doc["ranks"])
    ok = ok and all(isinstance(x, dict) for x in doc["nodes"] + doc["links"])
    ok = ok and isinstance(doc.get("exclude", []), list) and \
        all(isinstance(h, str) for h in doc.get("exclude", []))
    if not ok:
        raise BadInput("%s is not a tpbal fleet.json (schema %s, with ranks, nodes, links and "
                       "a threshold)" % (clean(f), SCHEMA))
    _check_fields(doc, clean(f))
    doc["path"] = f
    return doc


def _integer(v):
    return isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2 ** 31


def _a_half(v):
    """A 95 % half-width as fleet.json holds it: a log ratio, 0 to 10 (e^10: 22,000x)."""
    return v is None or (finite(v) and 0 <= v <= 10)


def _check_fields(doc, where):
    """Every field the tools read, of its kind: one line naming the first that is not (a
    list where a node id belongs, a half-width of 1000, a link without its nodes)."""
    checks = [("ranks", r, "gflops_half", _a_half, "a half-width (a log ratio from 0 to 10)")
              for r in doc["ranks"]]
    for n in doc["nodes"]:
        checks += [("nodes", n, "node", _integer, "a node number"),
                   ("nodes", n, "host", lambda v: isinstance(v, str), "a host name"),
                   ("nodes", n, "allreduce_busbw_gbs", lambda v: v is None or finite(v),
                    "a bandwidth or null"),
                   ("nodes", n, "allreduce_busbw_half", _a_half,
                    "a half-width (a log ratio from 0 to 10)")]
    for ln in doc["links"]:
        checks += [("links", ln, "from", _integer, "a node number"),
                   ("links", ln, "to", _integer, "a node number"),
                   ("links", ln, "busbw_gbs", lambda v: v is None or finite(v),
                    "a bandwidth or null"),
                   ("links", ln, "busbw_half", _a_half, "a half-width (a log ratio from 0 to 10)")]
    for part, rec, key, ok, what in checks:
        required = key in ("node", "host", "from", "to")
        if (key not in rec and required) or (key in rec and not ok(rec[key])):
            raise BadInput("%s: an entry of '%s' whose '%s' is %s, not %s" % (
                where, part, key, clean(tr.json_dumps(rec.get(key)), 40) if key in rec
                else "missing", what))


def _half(v):
    return v if finite(v) and v >= 0 else 0.0


def node_figures(doc):
    """host -> {"gemm": (GFLOP/s of its slowest rank, half), "coll": (GB/s, half)}."""
    out = {}
    for r in doc["ranks"]:
        g = r.get("gflops")
        if not finite(g):
            continue
        if g <= 0:
            raise BadInput("fleet.json: rank %s has %s GFLOP/s: not a rate" % (
                clean(str(r.get("rank")), 20), g))
        cur = out.setdefault(clean(r["host"], 64), {"gemm": None, "coll": None})
        if cur["gemm"] is None or g < cur["gemm"][0]:
            cur["gemm"] = (g, _half(r.get("gflops_half")))
    for n in doc["nodes"]:
        host = clean(str(n.get("host")), 64)
        bw = n.get("allreduce_busbw_gbs")
        if finite(bw) and bw < 0:
            raise BadInput("fleet.json: node %s has %s GB/s: not a bandwidth" % (host, bw))
        if host in out and finite(bw):
            out[host]["coll"] = (bw, _half(n.get("allreduce_busbw_half")))
    return out


def link_figures(doc):
    """(host, host) -> (bus GB/s, half), the hosts of each link's two nodes."""
    host_of = {n.get("node"): clean(str(n.get("host")), 64) for n in doc["nodes"]}
    out = {}
    for ln in doc["links"]:
        bw = ln.get("busbw_gbs")
        if finite(bw) and bw < 0:
            raise BadInput("fleet.json: a link has %s GB/s: not a bandwidth" % bw)
        a, b = host_of.get(ln.get("from")), host_of.get(ln.get("to"))
        if a and b and finite(bw):
            out[(a, b)] = (bw, _half(ln.get("busbw_half")))
    return out


_NAMES = {"regression": "slower", "improved": "faster", "ok": "unchanged",
          "inconclusive": "inconclusive"}


def verdict(ratio, half, tol):
    """A rate's verdict (new / old, higher is better) on tpbal-compare's decision
    (tpbal_stats.decide, held to base/interval.c by test_golden), of the time ratio it
    inverts: slower, faster, unchanged or inconclusive."""
    if not (ratio > 0.0):
        return "inconclusive"
    return _NAMES[st.decide(1.0 / ratio, half, tol)]


def _row(what, key, old, new, tol, spread):
    """spread: each run's between-run spread (a standard deviation), its 95 % half-width
    Z95 x spread on each side, as tpbal-compare takes two single runs (tpbal_stats)."""
    r = new[0] / old[0]
    h = math.hypot(old[1], new[1], st.Z95 * spread, st.Z95 * spread)
    return {"what": what, "key": key, "old": old[0], "new": new[0], "ratio": r,
            "lo": r * math.exp(-h), "hi": r * math.exp(h), "verdict": verdict(r, h, tol)}


def compare(old, new, tol, spread):
    """Rows of (what, key, old, new, ratio, lo, hi, verdict), and the hosts on one side only.
    spread: a figure's spread between identical runs (tpbal-compare's --run-spread), added to
    the ratio's half-width in quadrature."""
    a, b = node_figures(old), node_figures(new)
    rows = []
    for host in sorted(set(a) & set(b)):
        for what in ("gemm", "coll"):
            if a[host][what] and b[host][what] and a[host][what][0] > 0:
                rows.append(_row(what, host, a[host][what], b[host][what], tol, spread))
    la, lb = link_figures(old), link_figures(new)
    for key in sorted(set(la) & set(lb)):
        if la[key][0] > 0:
            rows.append(_row("link", "%s-%s" % key, la[key], lb[key], tol, spread))
    return rows, sorted(set(a) - set(b)), sorted(set(b) - set(a))


def compare_text(old, new, rows, only_old, only_new, tol):
    names = {"gemm": "GEMM GFLOP/s (slowest rank)", "coll": "all-reduce GB/s",
             "link": "link GB/s"}
    lines = ["tpbal-compare --fleet: %s against %s (tolerance %.0f %%; 95 %% intervals, "
             "with the spread between identical runs)" % (
                 clean(new["path"]), clean(old["path"]), 100 * tol),
        "#  node/link            figure                          old        new   new/old "
        "[95 %]          verdict"]
    for r in rows:
        lines.append("  %-20s %-28s %10.3g %10.3g   %.2f [%.2f, %.2f]   %s" % (
            clean(r["key"], 20), names[r["what"]], r["old"], r["new"], r["ratio"], r["lo"],
            r["hi"], r["verdict"]))
    for h in only_old:
        lines.append("# %s: in the old fleet only" % clean(h))
    for h in only_new:
        lines.append("# %s: in the new fleet only" % clean(h))
    slower = sorted({r["key"] for r in rows if r["verdict"] == "slower"})
    lines.append("tpbal-compare --fleet: %s" % (
        "slower: " + ", ".join("%s (%s)" % (clean(k), ", ".join(
            "%s %.0f %%" % (r["what"], 100 * (r["ratio"] - 1)) for r in rows
            if r["key"] == k and r["verdict"] == "slower")) for k in slower)
        if slower else "no node or link got slower beyond the tolerance"))
    return "\n".join(lines), 1 if slower else 0


def plot(fleets, outdir, made, plt, save):
    """The fleet view of the last of fleets (several: the history too); numbers drawn."""
    doc = fleets[-1]
    thr = doc["threshold"]
    ranks = [r for r in doc["ranks"] if isinstance(r.get("score"), dict)]
    if not ranks:
        return None
    hosts = []
    for r in ranks:
        if r["host"] not in hosts:
            hosts.append(r["host"])
    ex = set(doc.get("exclude") or [])
    links = [ln for ln in doc["links"] if finite(ln.get("busbw_gbs"))]
    # a panel per view that has something to draw: no links panel on one node
    ncols = 1 + bool(links) + (len(fleets) > 1)
    fig, axes = plt.subplots(1, ncols, figsize=(5.5 * ncols, 3.8), squeeze=False)
    axes = list(axes[0])
    a1 = axes.pop(0)
    a2 = axes.pop(0) if links else None
    a3 = axes.pop(0) if len(fleets) > 1 else None
    xs, ys, lo, hi, colors = [], [], [], [], []
    for i, r in enumerate(sorted(ranks, key=lambda r: (hosts.index(r["host"]), r["rank"]))):
        s = r["score"]
        xs.append(i)
        ys.append(s.get("score") if finite(s.get("score")) else float("nan"))
        lo.append(max(0.0, ys[-1] - s["lo"]) if finite(s.get("lo")) else 0.0)
        hi.append(max(0.0, s["hi"] - ys[-1]) if finite(s.get("hi")) else 0.0)
        colors.append("#c44e52" if r["host"] in ex else "#4c72b0")
    a1.bar(xs, ys, yerr=[lo, hi], color=colors, capsize=2)
    a1.axhline(thr, color="black", ls="--", lw=0.8, label="threshold %.2f" % thr)
    a1.axhline(1.0, color="grey", lw=0.6)
    a1.set_xticks(xs)
    a1.set_xticklabels(["%s:%d" % (clean(r["host"], 12), r["rank"]) for r in
                        sorted(ranks, key=lambda r: (hosts.index(r["host"]), r["rank"]))],
                       rotation=90, fontsize=6)
    a1.set(ylabel="GEMM rate / fleet median", title="Ranks by node (red: excluded)")
    a1.legend(fontsize=7)
    if a2 is not None:
        a2.bar(range(len(links)), [ln["busbw_gbs"] for ln in links], color="#55a868")
        a2.set_xticks(range(len(links)))
        a2.set_xticklabels(["%s-%s" % (ln["from"], ln["to"]) for ln in links], fontsize=7)
        a2.set(ylabel="bus GB/s (2-rank all-reduce)", title="Links between neighbouring nodes")
    history = {}
    if a3 is not None:
        figs = [node_figures(f) for f in fleets]
        meds = [statistics.median([v["gemm"][0] for v in nf.values() if v["gemm"]] or [math.nan])
                for nf in figs]
        for h in hosts:
            vals = [nf[h]["gemm"][0] / m if h in nf and nf[h]["gemm"] and m > 0 else math.nan
                    for nf, m in zip(figs, meds)]
            a3.plot(range(1, len(vals) + 1), vals, marker="o", label=clean(h, 16))
            history[h] = vals
        a3.axhline(thr, color="black", ls="--", lw=0.8)
        a3.set_xticks(range(1, len(fleets) + 1))
        a3.set(xlabel="run", ylabel="slowest rank / the median node's",
                title="History of the nodes' GEMM")
        a3.legend(fontsize=6)
    save(fig, outdir, "fleet", made)
    return {"scores": ys, "hosts": [r["host"] for r in ranks],
            "links_gbs": [ln["busbw_gbs"] for ln in links], "history": history}
