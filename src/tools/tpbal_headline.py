"""tpbal_headline: the answers at the top of a report, in words, from the records alone.

What the terminal's closing answer says (the summary record's "answer" array: the fastest
config per shape and TP degree, what weighting bought, stragglers beyond noise), and what a
reader must know before trusting the numbers: a weighted split that lost, a calibration that
did not settle, ranks slowed or delayed on purpose, a shared GPU, a failed check, a run that
did not finish. Each item is (kind, text) with kind "use" (what to run), "warning", "answer" or "note".
"""
import tpbal_glossary as tg
import tpbal_results as tr
from tpbal_results import clean, finite


human_us = tr.us_text


def host_of(run, rank):
    ranks = tr.records(run.get("ranks"))
    if isinstance(rank, int) and 0 <= rank < len(ranks):
        return clean(ranks[rank].get("host", "?"), 64)
    return "?"


def shape_text(a):
    name = a.get("shape") or ""
    return "%sx%sx%s%s" % (a.get("m"), a.get("n"), a.get("k"), " " + clean(name, 48) if name else "")


def block_answers(summ):
    """A --block run's answer: the block's TP degree and policy, one per question."""
    items = []
    for a in tr.records(summ.get("answer")):
        if a.get("kind") != "block_use":
            continue
        thr = a.get("question") == "throughput"
        tps = tr.num(a.get("tokens_per_s_rank"))
        items.append(("use", "Use TP %s %s%s for the block %s: %s a step, %s tokens/s per rank "
                             "(%s)%s." % (
                                 a.get("tp"), clean(a.get("policy")),
                                 " (spread)" if a.get("placement") == "spread" else "",
                                 clean(a.get("block"), 48),
                                 human_us(tr.num(a.get("step_us"))),
                                 "%.0f" % tps if tps is not None else "?",
                                 "the highest tokens/s per rank (throughput)" if thr
                                 else "the shortest step (latency)", runner_up(a))))
    return items


def runner_up(a):
    """"; 1.17x TP 1 [1.05, 1.31] at 99.93 %: sure" of a block use line, "" without one."""
    x, lo, hi = (tr.num(a.get(k)) for k in ("over_runner_up", "over_runner_up_lo",
                                           "over_runner_up_hi"))
    if x is None or not isinstance(a.get("runner_up_tp"), (int, float)):
        return ""
    conf = tr.num(a.get("confidence"))
    said = tg.block_sure(a.get("verdict"))
    return "; %.2fx TP %d%s%s: %s" % (
        x, a["runner_up_tp"], " [%.2f, %.2f]" % (lo, hi) if lo is not None and hi is not None
        else "", " at %.2f %% after %s look(s) of --budget" % (100 * conf, a.get("budget_looks"))
        if conf is not None else "", said)


def budget_note(summ):
    """What --budget spent and what stayed open (the summary's budget), one note."""
    b = summ.get("budget") if isinstance(summ, dict) else None
    if not isinstance(b, dict) or not finite(b.get("seconds")):
        return []
    n = {k: b.get(k) if isinstance(b.get(k), int) else 0 for k in (
        "sets", "extended", "for_straggler", "for_ranking", "open_budget_spent",
        "open_most_looks")}
    return [("note", "--budget %g s: %.1f s spent on more looks of %d of %d sets measured side "
                     "by side (%d for the persistent straggler alone, %d for a block's TP ranking "
                     "alone); left open: %d when the budget ran out, %d after the most looks." % (
                         b["seconds"], tr.num(b.get("spent_s")) or 0.0, n["extended"],
                         n["sets"], n["for_straggler"], n["for_ranking"],
                         n["open_budget_spent"], n["open_most_looks"]))]


def sureness(a):
    """How sure a use line's pick is against its runner-up, as the run's answer said it."""
    sure, lo, hi = a.get("sure"), tr.num(a.get("margin_lo")), tr.num(a.get("margin_hi"))
    other = "%s at TP %s" % (clean(a.get("runner_up")), a.get("runner_up_tp"))
    if sure == "sure" and lo is not None:
        return "; sure: %.2fx to %.2fx over the next, %s" % (lo, hi, other)
    if sure == "not sure" and lo is not None:
        return "; not sure: %s is within the interval (%.2fx to %.2fx), either will do" % (
            other, lo, hi)
    if sure == "not enough data":
        return "; not enough data to tell it from %s" % other
    return ""


def answers(summ, run):
    items = block_answers(summ)
    part = bool(items)  # a block's GEMMs are its parts, not answers of their own
    for a in tr.records(summ.get("answer")):
        if a.get("kind") == "use" and part:
            items.append(("answer", "Part of the block, %s alone: %s %s at TP %s, %s a step." % (
                shape_text(a), clean(a.get("split")), clean(a.get("policy")), a.get("tp"),
                human_us(tr.num(a.get("step_us"))))))
        elif a.get("kind") == "use":
            rate = tr.num(a.get("layers_per_s"))
            why = ("the highest layer rate over the world, %.0f layers/s (throughput)" % rate
                   if a.get("question") == "throughput" and rate is not None
                   else "the shortest step (latency)")
            items.append(("use", "Use %s %s at TP %s%s for %s: %s a step, %s%s." % (
                clean(a.get("split")), clean(a.get("policy")), a.get("tp"),
                " (spread)" if a.get("placement") == "spread" else "", shape_text(a),
                human_us(tr.num(a.get("step_us"))), why, sureness(a))))
    for a in tr.records(summ.get("answer")):
        if a.get("kind") != "tp":
            continue
        where = "%s TP %s" % (shape_text(a), a.get("tp"))
        for p in tr.records(a.get("policies")):
            sp, pred = tr.num(p.get("speedup")), tr.num(p.get("predicted_speedup"))
            if sp is None:
                continue
            lo, hi = tr.num(p.get("speedup_lo")), tr.num(p.get("speedup_hi"))
            bound = tr.num(p.get("speedup_bound"))
            verdict = clean(p.get("verdict") or ("worse" if p.get("lost") == "yes" else "?"))
            text = "%s %s: %s %.2fx over even%s%s%s: %s." % (
                where, clean(p.get("split")), clean(p.get("policy")), sp,
                " [%.2f, %.2f]" % (lo, hi) if lo is not None and hi is not None else "",
                ", at most %.2fx" % bound if bound is not None else "",
                ", predicted %.2fx" % pred if pred is not None else "", verdict)
            if verdict == "worse":
                items.append(("warning", text + " The even split was faster: the speeds it "
                                                 "was weighted by did not hold, or the shards' "
                                                 "times are not proportional to their size."))
            elif verdict == "disturbed":
                items.append(("warning", text + " More than balancing can buy: the two were "
                                                 "not measured alike; not an answer."))
            else:
                items.append(("answer", text))
        for s in tr.records(a.get("stragglers")):
            rank = s.get("rank")
            verdict = s.get("verdict") or ("persistent" if s.get("persistent") == "yes"
                                           else "transient")
            said = {"persistent": "a persistent straggler: slower over the whole run",
                    "transient": "transient: not slower over the run, a passing slowdown",
                    "not enough data": "not enough data to tell a persistent straggler from a "
                                       "passing slowdown: measure longer"}.get(verdict)
            items.append(("answer", "%s %s %s: rank %s (%s) arrived last in %.0f %% of the "
                          "iterations, by %s on average%s." % (
                              where, clean(s.get("split")), clean(s.get("policy")), rank,
                              host_of(run, rank), 100 * (tr.num(s.get("last_frac")) or 0),
                              human_us(tr.num(s.get("lateness_us"))),
                              " (%s)" % said if said else "")))
    return items


def ival(ci, fmt):
    """" [lo, hi]" of a two-number interval, "" where it is not one."""
    if not isinstance(ci, list) or len(ci) != 2 or not all(finite(x) for x in ci):
        return ""
    return " [" + fmt % ci[0] + ", " + fmt % ci[1] + "]"


def comm_fits(summ):
    """A comm-only run's answer: each collective's fit with its intervals and quality, and
    its average bus bandwidth (nccl-tests' closing line)."""
    items = []
    for f in tr.records(summ.get("comm_model")):
        if f.get("comm_only") != "yes":
            continue
        lat, bw = tr.num(f.get("latency_us")), tr.num(f.get("bandwidth_gbs"))
        lci, bci = f.get("latency_ci_us"), f.get("bandwidth_ci_gbs")
        quality = clean(f.get("quality") or "?")
        avg = tr.num(f.get("avg_busbw_gbs"))
        text = "%s TP %s: T = L + V/B with L %s%s, B %s%s, R\u00b2 %s over %s sizes (%s fit)%s." % (
            clean(f.get("collective")), f.get("tp"), human_us(lat), ival(lci, "%.1f"),
            "%.3g GB/s" % bw if bw is not None else "-", ival(bci, "%.3g"),
            "%.3f" % f["r2"] if finite(f.get("r2")) else "-", f.get("points"), quality,
            "; average bus bandwidth %.3g GB/s" % avg if avg is not None else "")
        items.append(("warning" if quality == "poor" else "answer", text + (
            " A poor fit: T is not L + V/B over these sizes." if quality == "poor" else "")))
    return items


def calibration(cfgs):
    worst = None
    for c in cfgs:
        if c.get("speed_source") != "calibration":
            continue
        for w, sp in zip(c.get("world_ranks") or [], c.get("speed_spread") or []):
            if finite(sp) and (worst is None or sp > worst[0]):
                worst = (sp, w)
    if worst is None:
        return []
    sp, w = worst
    if sp <= 0.05:
        return [("note", "Calibration settled: the worst spread of a rank's GEMM times was "
                         "%.1f %% (rank %s; goal 5 %%)." % (100 * sp, w))]
    return [("warning", "Calibration did not settle: rank %s's GEMM times spread %.1f %% "
                        "(goal 5 %%), so its weighted shards may be off." % (w, 100 * sp))]


def machine_load(summary):
    """Other processes' share of the busiest machine's CPUs during the run (the summary's
    cpu_others): a warning above the share tpbal calls noise."""
    load = summary.get("cpu_others") if isinstance(summary, dict) else None
    if not isinstance(load, dict) or not finite(load.get("share")):
        return []
    share, above = load["share"], load.get("noisy_above")
    if not finite(above) or share <= above:
        return []
    return [("warning", "Other processes took %.0f %% of %s's CPU time during the run (beside "
                        "its ranks): the timings and every verdict read with care." % (
                            100 * share, clean(str(load.get("host", "?")), 60)))]


def on_purpose(run, cfgs):
    items, slow = [], {}
    for c in cfgs:
        for w, f in zip(c.get("world_ranks") or [], c.get("emulate_asked") or []):
            if finite(f) and f < 1.0:
                slow.setdefault(w, (f, c.get("emulate_mode", "time")))
    if slow:
        items.append(("note", "Emulated on purpose (--emulate-speed): %s." % ", ".join(
            "rank %s at %.2f of its speed (%s mode)" % (w, f, clean(m)) for w, (f, m) in
            sorted(slow.items()))))
    if run.get("emulate_schedule"):
        items.append(("note", "A mid-run slowdown was scheduled (--emulate-schedule %s)." %
                      clean(run.get("emulate_schedule"), 80)))
    inj = run.get("inject_delay_rank")
    if isinstance(inj, int) and not isinstance(inj, bool) and inj >= 0:
        items.append(("note", "A compute delay was injected on rank %d (--inject-delay; the "
                              "command line has its size and period)." % inj))
    inj = run.get("inject_clock_rank")
    if isinstance(inj, int) and not isinstance(inj, bool) and inj >= 0:
        items.append(("note", "A clock offset was injected on rank %d (--inject-clock-offset)."
                      % inj))
    return items


def trust(run, cfgs):
    items = []
    if run.get("status") not in (None, "finished"):
        items.append(("warning", "The run did not finish (status %s): %d configs were measured."
                      % (clean(run.get("status")), len(cfgs))))
    bad = [c["id"] for c in cfgs if c.get("check") == "fail"]
    if bad:
        items.append(("warning", "--check failed for config %s." % ", ".join(map(str, bad))))
    shared = [c["id"] for c in cfgs if (tr.num(c.get("device_shared")) or 1) > 1]
    if shared:
        items.append(("warning", "Ranks shared a GPU in %d configs: their times are for "
                                 "correctness, not speed." % len(shared)))
    return items


def headline(res):
    """The headline's items, answers first."""
    summ = getattr(res, "headline_summary", None) or res.summary  # a --repeat run's: its passes'
    items = answers(summ, res.run) + comm_fits(res.summary) + calibration(res.configs) + \
        machine_load(res.summary) + budget_note(res.summary) + \
        on_purpose(res.run, res.configs) + trust(res.run, res.configs) + \
        ([("note", res.headline_note)] if getattr(res, "headline_note", None) else [])
    order = {"use": 0, "warning": 1, "answer": 2, "note": 3}
    return sorted(items, key=lambda it: order[it[0]])
