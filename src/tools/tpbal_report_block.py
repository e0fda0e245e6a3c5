"""tpbal_report_block: the report's block view (tpbal --block): per TP degree and policy, a
stacked bar of the block's step made of its GEMMs' phases (each GEMM's median step: its
ranks' mean median compute, their mean wait, and the rest, the collective's transfer), and
the block's tokens per second per rank with its 95 % interval, even beside weighted."""
import html
import statistics

import tpbal_plots as pl
import tpbal_results as tr
from tpbal_results import finite

plt = pl.plt
SHADES = (1.0, 0.72, 0.5, 0.34)  # one GEMM after another: the phase's colour, lighter


def phases(cfg):
    """A GEMM config's step as compute, wait and the rest (us), adding up to its median."""
    step = cfg["step_us"]["median"]
    comp = [x for x in cfg.get("compute_us") or [] if finite(x)]
    wait = [x for x in cfg.get("wait_us") or [] if finite(x)]
    c = statistics.fmean(comp) if comp else 0.0
    w = min(statistics.fmean(wait) if wait else 0.0, max(0.0, step - c))
    return {"compute": min(c, step), "wait": w, "comm": max(0.0, step - c - w)}


def block_rows(res):
    by = {c["id"]: c for c in res.configs}
    rows = []
    for b in res.blocks:
        gemms = [by[c] for c in b["configs"] if c in by]
        if len(gemms) != len(b["configs"]):
            continue
        rows.append({"block": b["id"], "label": "tp %d %s%s" % (
            b["tp"], b.get("policy", "?"), " sp" if b.get("sequence_parallel") == "on" else ""),
            "tp": b["tp"], "policy": b.get("policy"), "step_us": b["step_us"]["median"],
            "tokens_per_s_rank": b.get("tokens_per_s_rank"),
            "lo": b.get("tokens_per_s_rank_lo"), "hi": b.get("tokens_per_s_rank_hi"),
            "gemms": [(g.get("shape") or tr.shape_label(g), phases(g)) for g in gemms]})
    return rows


def plot_blocks(rows, outdir, made):
    if not rows:
        return None
    unit, f = pl.time_unit(max(r["step_us"] for r in rows))
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, pl.inches(len(rows), 0.45, 1.6)))
    ys = list(range(len(rows)))
    spans = []  # (y, start, end, GEMM name): each GEMM labelled where its span has room
    for y, r in zip(ys, rows):
        left = 0.0
        for j, (name, ph) in enumerate(r["gemms"]):
            start = left
            for part in ("compute", "wait", "comm"):
                a1.barh(y, ph[part] / f, left=left, color=pl.COLORS[part],
                        alpha=SHADES[j % len(SHADES)], edgecolor="white", lw=0.5,
                        label=part if y == 0 and j == 0 else None)
                left += ph[part] / f
            spans.append((y, start, left, name))
        a1.plot([r["step_us"] / f], [y], "k|", ms=14, mew=2,
                label="block step" if y == 0 else None)
    right = max([s[2] for s in spans] + [r["step_us"] / f for r in rows] + [1e-9])
    for y, start, end, name in spans:
        if end - start >= 0.08 * right:
            a1.text(0.5 * (start + end), y, tr.clean(name, 14), ha="center", va="center",
                    fontsize=6, color="black")
    a1.set_yticks(ys)
    a1.set_yticklabels([tr.clean(r["label"], 30) for r in rows])
    a1.invert_yaxis()
    a1.set(xlabel="%s (each GEMM's median step; GEMMs in order, lighter after)" % unit,
           title="The block's phases")
    # below the bars, not over one
    a1.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=4)
    tps = [r["tokens_per_s_rank"] or 0.0 for r in rows]
    err = [[max(0.0, t - (r["lo"] or t)) for t, r in zip(tps, rows)],
           [max(0.0, (r["hi"] or t) - t) for t, r in zip(tps, rows)]]
    a2.barh(ys, tps, xerr=err, color=["#8c8c8c" if r["policy"] == "even" else "#4c72b0"
                                      for r in rows], capsize=3)
    a2.set_yticks(ys)
    a2.set_yticklabels([])
    a2.invert_yaxis()
    a2.set(xlabel="tokens/s per rank (95 % interval)", title="Throughput")
    pl.save(fig, outdir, "blocks", made)
    return {r["label"]: {"step_us": r["step_us"], "tokens_per_s_rank": r["tokens_per_s_rank"],
                         "gemms": [{"shape": n, **ph} for n, ph in r["gemms"]]} for r in rows}


def block_part(res, outdir, made, data, table):
    """The report's section; data["blocks"] gets the plotted numbers."""
    rows = block_rows(res) if getattr(res, "blocks", None) else []
    data["blocks"] = plot_blocks(rows, outdir, made)
    if not rows:
        return []
    head = ["block", "tp", "policy", "step", "its GEMMs' steps", "tokens/s per rank",
            "95 % interval"]
    body = [(r["block"], r["tp"], r["policy"], tr.us_text(r["step_us"]),
             tr.us_text(sum(sum(ph.values()) for _, ph in r["gemms"])),
             "%.0f" % r["tokens_per_s_rank"] if finite(r["tokens_per_s_rank"]) else "-",
             "[%.0f, %.0f]" % (r["lo"], r["hi"]) if finite(r["lo"]) and finite(r["hi"])
             else "-") for r in rows]
    name = res.blocks[0].get("name", "block")
    return ["<h2>Blocks (tpbal --block %s)</h2>" % html.escape(tr.clean(name, 64)),
            "<p>Each block's GEMMs ran back to back as one step; tokens/s per rank = M / "
            "(tp x median step). The plot is above, among the plots.</p>",
            table(head, body)]
