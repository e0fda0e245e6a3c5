"""tpbal_report_compare: the A-vs-B page of tpbal-report (--compare B).

tpbal-compare's decision, drawn: per config the step change B/A with its 95 % interval
against the tolerance band, the step distributions of both runs overlaid, the nodes'
relative scores side by side, and the verdict in the words tpbal-compare prints. The
decisions come from tpbal_compare itself (one implementation), not from a copy.
"""
import html
import os

import tpbal_compare as cmp
import tpbal_plots as pl
import tpbal_results as tr
import tpbal_views as vw
from tpbal_results import clean

plt = pl.plt
VERDICT_COLORS = {"regression": "#c44e52", "improved": "#55a868", "ok": "#4c72b0",
                  "inconclusive": "#8c8c8c"}
STATUS_WORDS = {0: "B holds against A", 1: "B is worse than A",
                3: "too noisy to tell for some configs"}


def decide(a_path, b_path, tol):
    """tpbal-compare's rows, one-sided configs, suspect nodes and exit status."""
    A, B = cmp.Run(a_path), cmp.Run(b_path)
    if str(A.schema) != str(B.schema):
        raise tr.BadInput("A has schema version %s and B %s: compare results of the same tpbal "
                          "version" % (clean(A.schema), clean(B.schema)))
    rows, only_a, only_b = cmp.compare(A, B, tol, cmp.RUN_SPREAD)
    if not rows:
        raise tr.BadInput("A and B have no config in common: nothing to compare")
    sus = cmp.suspects(A, B, 0.75)
    regressed = any(r["verdict"] == "regression" for r in rows)
    new_sus = [x for x in sus if not x["known"]]
    status = 1 if regressed or new_sus else 3 if any(
        r["verdict"] == "inconclusive" for r in rows) else 0
    return A, B, rows, only_a, only_b, sus, status


def plot_deltas(rows, tol, outdir, made):
    """Step change per config, B/A - 1 in %, with its interval, inside the tolerance band."""
    rows = rows[:pl.MAX_BARS]
    fig, ax = plt.subplots(figsize=(pl.inches(len(rows), 0.5, 3), 4))
    x = list(range(len(rows)))
    data = {"labels": [], "delta_pct": [], "lo_pct": [], "hi_pct": [], "verdict": []}
    for i, r in zip(x, rows):
        s = r["step"]
        if not s:
            continue
        d, lo, hi = (100 * (s[k] - 1) for k in ("ratio", "lo", "hi"))
        hi = min(hi, 1e4)
        ax.bar(i, d, 0.6, color=VERDICT_COLORS[r["verdict"]])
        ax.errorbar(i, d, yerr=[[d - lo], [hi - d]], fmt="none", ecolor="black", capsize=3)
        for k, v in (("labels", r["config"]), ("delta_pct", d), ("lo_pct", lo),
                     ("hi_pct", hi), ("verdict", r["verdict"])):
            data[k].append(v)
    ax.axhspan(-100 * tol / (1 + tol), 100 * tol, color="#ffd92f", alpha=0.3, lw=0, zorder=0,
               label="tolerance (%.0f %%)" % (100 * tol))
    ax.axhline(0, color="black", lw=0.8)
    ax.set_xticks(x)
    ax.set_xticklabels([clean(r["config"], 40) for r in rows], rotation=35, ha="right",
                       fontsize=7)
    ax.set(ylabel="step B / A - 1 (%), 95 % interval", title="Step change per config "
           "(red: regression, green: improved, blue: held, grey: inconclusive)")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3, axis="y")
    pl.save(fig, outdir, "cmp_deltas", made)
    return data


def plot_dists(A, B, rows, outdir, made):
    """The step samples of A and B overlaid, for the configs that moved most."""
    moved = sorted([r for r in rows if r["step"]], key=lambda r: -abs(r["step"]["ratio"] - 1))
    moved = [r for r in moved if A.configs[tuple(r["key"].values())]["samples"] and
             B.configs[tuple(r["key"].values())]["samples"]][:6]
    if not moved:
        return None
    cols = min(3, len(moved))
    nrow = (len(moved) + cols - 1) // cols
    fig, axes = plt.subplots(nrow, cols, figsize=(4.2 * cols, 3.1 * nrow), squeeze=False)
    data = {}
    for ax, r in zip([a for row in axes for a in row], moved):
        key = tuple(r["key"].values())
        for side, run, col in (("A", A, "#8c8c8c"), ("B", B, "#4c72b0")):
            xs, ys = vw.ecdf(run.configs[key]["samples"])
            unit, f = pl.time_unit(max(A.configs[key]["samples"] + B.configs[key]["samples"]))
            ax.step([v / f for v in xs], ys, where="post", color=col, label=side)
            data.setdefault(r["config"], {})[side] = len(xs)
        ax.set(xlabel="step (%s)" % unit, ylabel="fraction of iterations")
        ax.set_title(clean(r["config"], 50), fontsize=8)
        ax.legend(fontsize=7)
        ax.grid(alpha=0.3)
    for ax in [a for row in axes for a in row][len(moved):]:
        ax.set_visible(False)
    fig.tight_layout()
    pl.save(fig, outdir, "cmp_dists", made)
    return data


def plot_nodes(A, B, outdir, made):
    """Each rank's median relative score in A beside B (even configs, TP > 1)."""
    sa, sb = cmp.rank_scores(A), cmp.rank_scores(B)
    keys = sorted(set(sa) | set(sb), key=lambda k: (k[0], k[1]))[:pl.MAX_BARS]
    if not keys:
        return None
    fig, ax = plt.subplots(figsize=(pl.inches(len(keys), 0.6, 3), 3.6))
    x = list(range(len(keys)))
    a = [sa.get(k, float("nan")) for k in keys]
    b = [sb.get(k, float("nan")) for k in keys]
    ax.bar([i - 0.2 for i in x], a, 0.4, color="#8c8c8c", label="A")
    ax.bar([i + 0.2 for i in x], b, 0.4, color="#4c72b0", label="B")
    ax.axhline(0.75, color="#c44e52", lw=1, ls="--", label="suspect below 0.75")
    ax.set_xticks(x)
    ax.set_xticklabels(["rank %d\n%s" % (w, clean(h, 20)) for h, w in keys], fontsize=7)
    ax.set(ylim=(0, 1.05), ylabel="relative score (min compute / own)",
           title="Node scores (even configs, TP > 1; ranks slowed on purpose left out)")
    ax.legend(fontsize=7, loc="lower right")
    pl.save(fig, outdir, "cmp_nodes", made)
    return {"ranks": ["%s:%d" % k for k in keys], "a": a, "b": b}


def rows_table(rows):
    head = ["config", "A step", "B step", "B / A", "95 % interval", "verdict",
            "smallest detectable change (undecided rows)"]
    out = []
    for r in rows:
        s, m = r["step"], r["metrics"]["step_us"]
        out.append((r["config"], tr.us_text(m["a"]), tr.us_text(m["b"]),
                    "%.3f" % s["ratio"] if s else "-",
                    "[%.3f, %.3f]" % (s["lo"], s["hi"]) if s else "-",
                    "can't tell" if r.get("cant_tell") else r["verdict"],
                    "%.1f %%" % (100 * s["detectable"]) if s and s.get("detectable")
                    and s["detectable"] < 1e3 and r["verdict"] not in ("regression", "improved")
                    else "-"))  # a decided row: its interval is the evidence
    return head, out


def warnings_html(A, B, rows):
    """Every warning the command line's verdict carries: the runs' noise, the configs that
    cannot be told (and why), what single runs cannot see."""
    said = [cmp.noise(A, B), cmp.blind(A, B, rows, cmp.RUN_SPREAD)]
    why = {}
    for r in rows:
        if r.get("cant_tell"):
            why.setdefault(r["cant_tell"], []).append(r["config"])
    items = ["<li>%s</li>" % html.escape(s.lstrip("; ")) for s in said if s]
    items += ["<li>can't tell (%d config%s, counted inconclusive): %s: %s</li>" % (
        len(c), "" if len(c) == 1 else "s", html.escape(w), html.escape(", ".join(c[:20])))
        for w, c in why.items()]
    return "<h2>Warnings</h2><ul>%s</ul>" % "".join(items) if items else ""


def conditions_html(A, B):
    """A's and B's conditions side by side, the rows that differ in bold."""
    ca, cb = A.conditions, B.conditions
    if not ca or not cb:
        return ""
    diff = cmp.io_.differences(ca, cb)
    rows = "".join("<tr><th>%s</th><td style='text-align:left'>%s</td><td style='text-align:"
                   "left'>%s</td><td>%s</td></tr>" % (
                       k, html.escape(clean(str(ca[k]), 400)), html.escape(clean(str(cb[k]), 400)),
                       "<b>differs</b>" if k in diff else "") for k in ca)
    head = ("<p><b>A and B differ in: %s</b></p>" % html.escape(", ".join(diff)) if diff else
            "<p>A and B were measured alike.</p>")
    return head + "<table><tr><th></th><th>A</th><th>B</th><th></th></tr>%s</table>" % rows


def write(a_path, b_path, outdir, tol, table):
    """compare.html and compare.json in outdir; returns the page's name."""
    A, B, rows, only_a, only_b, sus, status = decide(a_path, b_path, tol)
    made, data = [], {"status": status, "verdict": STATUS_WORDS[status]}
    data["deltas"] = plot_deltas(rows, tol, outdir, made)
    data["dists"] = plot_dists(A, B, rows, outdir, made)
    data["nodes"] = plot_nodes(A, B, outdir, made)
    count = {v: len([r for r in rows if r["verdict"] == v]) for v in VERDICT_COLORS}
    parts = ["<!doctype html><html><head><meta charset='utf-8'><title>tpbal: B against A"
             "</title>", "<style>body{font-family:sans-serif;margin:2em;max-width:1300px}"
             "table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ccc;"
             "padding:2px 6px;text-align:right}th{background:#eee}img{max-width:100%}"
             ".headline{border:2px solid #4c72b0;background:#f3f6fb;padding:0.6em 1.2em}"
             "</style></head><body>", "<h1>B against A</h1>",
             "<div class='headline'><p><b>%s</b> (tpbal-compare's exit status %d): %d configs "
             "compared, %d regressed, %d improved, %d held, %d inconclusive; %d only in A, %d "
             "only in B; %d suspect nodes.</p><p>A: %s<br>B: %s<br>tolerance %.0f %%</p></div>"
             % (html.escape(STATUS_WORDS[status]), status, len(rows), count["regression"],
                count["improved"], count["ok"], count["inconclusive"], len(only_a),
                len(only_b), len(sus), html.escape(clean(a_path)), html.escape(clean(b_path)),
                100 * tol)]
    parts.append(warnings_html(A, B, rows))
    parts.append(conditions_html(A, B))
    parts.append("<h2>Configs</h2>" + table(*rows_table(rows)))
    for name in made:
        parts.append("<figure><img src='%s.png' alt='%s'></figure>" % (name, name))
    if sus:
        parts.append("<h2>Suspect nodes</h2><ul>%s</ul>" % "".join(
            "<li>%s: %s%s</li>" % (html.escape(x["node"]), html.escape(", ".join(x["ranks"])),
                                   " (as slow in A)" if x["known"] else "") for x in sus))
    for side, lst in (("A", only_a), ("B", only_b)):
        if lst:
            parts.append("<p>Only in %s: %s</p>" % (side, html.escape(", ".join(lst[:50]))))
    parts.append("</body></html>")
    tr.write_atomic(os.path.join(outdir, "compare.json"), tr.json_dumps(data, indent=1))
    tr.write_atomic(os.path.join(outdir, "compare.html"), "\n".join(parts))
    return made
