"""tpbal_report_plan: tpbal-plan's leave-one-out check in the report: each measured config
against the step predicted from models fitted without it (tpbal_model), as a plot and a
table, with the median, p90 and largest |error|."""
import html

import tpbal_model as tm
import tpbal_plots as pl
import tpbal_results as tr

plt = pl.plt


def plot_plan(rows, outdir, made):
    got = [r for r in rows if r["predicted_us"] is not None]
    if not got:
        return None
    unit, f = pl.time_unit(max(r["measured_us"] for r in got))
    fig, ax = plt.subplots(figsize=(5.5, 5))
    xs = [r["measured_us"] / f for r in got]
    ys = [r["predicted_us"] / f for r in got]
    lo, hi = min(xs + ys) * 0.9, max(xs + ys) * 1.1
    ax.fill_between([lo, hi], [lo * 0.85, hi * 0.85], [lo * 1.15, hi * 1.15], color="#ffd92f",
                    alpha=0.3, lw=0, label="within 15 %")
    ax.plot([lo, hi], [lo, hi], color="black", lw=0.8)
    for tp in sorted({r["tp"] for r in got}):
        sel = [r for r in got if r["tp"] == tp]
        ax.plot([r["measured_us"] / f for r in sel], [r["predicted_us"] / f for r in sel], "o",
                label="tp %d" % tp)
    ax.set(xlabel="measured step (%s)" % unit, ylabel="predicted, cross-validated (%s)" % unit,
           xlim=(lo, hi), ylim=(lo, hi), title="tpbal-plan's models against the measurements")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    pl.save(fig, outdir, "plan", made)
    return {"configs": [r["config"] for r in got], "measured_us": [r["measured_us"] for r in got],
            "predicted_us": [r["predicted_us"] for r in got]}


def plan_part(res, outdir, made, data, table):
    """The report's section; data["plan"] gets the plotted numbers."""
    if not [c for c in res.configs if c.get("comm_only") != "yes"]:
        return []
    try:
        rows = tm.validate(tm.modelled(res))
    except tr.BadInput as e:  # the report stands without its predictions
        data["plan"] = None
        return ["<h2>Predictions (tpbal-plan)</h2>", "<p>No predictions: %s</p>" % (
            html.escape(tr.clean(str(e))))]
    data["plan"] = plot_plan(rows, outdir, made)
    s = tm.error_summary(rows)
    head = ["id", "tp", "split", "policy", "shape", "measured", "predicted", "error",
            "extrapolates"]
    body = [(r["config"], r["tp"], r["split"], r["policy"], r["shape"],
             tr.us_text(r["measured_us"]), tr.us_text(r["predicted_us"]),
             "%+.1f %%" % (100 * r["error"]) if r["error"] is not None else "-",
             ", ".join(r["extrapolates"]) or "-") for r in rows]
    words = ("median |error| %.1f %%, p90 %.1f %%, largest %.1f %% over %d configs" % (
        100 * s["median"], 100 * s["p90"], 100 * s["max"], s["configs"])) if s else \
        "no config could be predicted"
    method = rows[0]["method"] if rows else "leave-one-out"
    return ["<h2>Predictions (tpbal-plan): %s</h2>" % method,
            "<p>Every config predicted from models fitted without it%s: %s. "
            "<code>tpbal-plan DIR</code> predicts what was not run.</p>" % (
                "" if method == "leave-one-out" else " and the others of its fold", words),
            "<p>The plot is above, among the plots.</p>" if data["plan"] else "",
            table(head, body)]
