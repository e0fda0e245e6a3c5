/* answer.c - the closing answer of a run (what to use and why), from the finished configs. */
#include "record/answer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/spill.h"
#include "record/verdict.h"

/* "4096x4096x4096 qkv_proj" */
static void shape_label(char *out, size_t cap, const tpb_history_t *h)
{
    snprintf(out, cap, "%ldx%ldx%ld%s%s", h->m, h->n, h->k, h->shape_name[0] ? " " : "",
             h->shape_name);
}

static const char *host_of(const char *const *hosts, int world_rank)
{
    return hosts && world_rank >= 0 ? hosts[world_rank] : NULL;
}

/* What each verdict says, after the figures. */
static const char *verdict_text(tpb_verdict_t v)
{
    switch (v) {
    case TPB_VERDICT_BETTER: return "better";
    case TPB_VERDICT_WORSE:
        return "worse: the even split was faster; the speeds it was weighted by did not hold "
               "(see the calibration line), or the shards' times are not proportional to "
               "their size";
    case TPB_VERDICT_DRAW: return "a draw (within 5 %): keep even";
    case TPB_VERDICT_DISTURBED:
        return "disturbed: more than balancing can buy here, so the two were not measured "
               "alike (a core that changed speed); not an answer, run again";
    case TPB_VERDICT_INCONCLUSIVE: break;
    }
    return "inconclusive: the interval reaches past 5 % either way; keep even, or "
           "measure longer (--iters)";
}

/* What a policy other than even bought over even: measured with its interval, the bound,
 * predicted where known, and the verdict. */
static void policy_line(tpb_buf_t *txt, tpb_buf_t *js, const tpb_history_t *hist, int n,
                        const tpb_history_t *h)
{
    const tpb_history_t *ev = tpb_verdict_even_of(hist, n, h);
    if (!ev || h->policy == TPB_POLICY_EVEN)
        return;
    tpb_policy_verdict_t v = tpb_verdict_of(ev, h, TPB_VERDICT_TOL);
    double pred = h->predicted_speedup;
    tpb_buf_printf(txt, "#     %-3s: %s %.2fx over even", tpb_config_key_split(&h->key),
                   tpb_policy_name(h->policy), v.speedup);
    if (isfinite(v.lo))
        tpb_buf_printf(txt, " [%.2f, %.2f]", v.lo, v.hi);
    tpb_verdict_rounds_text(txt, &v);
    if (isfinite(v.bound))
        tpb_buf_printf(txt, ", at most %.2fx", v.bound);
    if (isfinite(pred))
        tpb_buf_printf(txt, ", predicted %.2fx", pred);
    /* after the looks --budget took, "measure longer" is what it already did */
    tpb_buf_printf(txt, ": %s\n",
                   v.looks > 0 && v.verdict == TPB_VERDICT_INCONCLUSIVE
                       ? "inconclusive: the interval still reaches past 5 % either way after "
                         "every look --budget could take (--budget measured as long as it "
                         "could: the budget or its looks ran out); keep even"
                       : verdict_text(v.verdict));
    tpb_json_obj_begin(js);
    tpb_config_key_json(js, &h->key, TPB_KEY_CHOICE);
    tpb_json_kv_num(js, "speedup", v.speedup);
    tpb_json_kv_num(js, "speedup_lo", v.lo);
    tpb_json_kv_num(js, "speedup_hi", v.hi);
    tpb_json_kv_num(js, "speedup_bound", v.bound);
    tpb_json_kv_str(js, "verdict", tpb_verdict_name(v.verdict));
    tpb_json_kv_str(js, "paired", v.paired ? "yes" : "no");
    tpb_json_kv_int(js, "rounds", v.rounds);
    tpb_verdict_looks_json(js, &v);
    tpb_json_kv_num(js, "tolerance", TPB_VERDICT_TOL);
    tpb_json_kv_num(js, "predicted_speedup", pred);
    tpb_json_kv_str(js, "lost", v.verdict == TPB_VERDICT_WORSE ? "yes" : "no");
    tpb_json_obj_end(js);
}

/* A config the answer may recommend: even, TP 1, a policy without an even config to
 * compare with, or one whose verdict over even is better. */
static int recommendable(const tpb_history_t *hist, int n, const tpb_history_t *h)
{
    const tpb_history_t *ev = tpb_verdict_even_of(hist, n, h);
    return h->policy == TPB_POLICY_EVEN || h->tp == 1 || !ev ||
           tpb_verdict_of(ev, h, TPB_VERDICT_TOL).verdict == TPB_VERDICT_BETTER;
}

/* Whether the run's blocks could have named a persistent straggler at all: enough of them
 * for some rank to be the slowest in the number the test needs. */
static int decidable(const tpb_persistent_t *p)
{
    return isfinite(p->detectable) && p->need <= p->of;
}

/* What would give the run's configs at tp enough blocks to name a persistent straggler,
 * into out: the --iters at which they would be enough if independent (an interleaved
 * config's blocks are its rounds, 4 iterations a round up to 10 (tpb_interleave_rounds);
 * another's at most 5: tpb_detect_nblocks), or more configs where no --iters would do. */
static void decide_advice(char *out, size_t cap, const tpb_history_t *hist, int n, int tp)
{
    for (int r = 3; r <= 10; r++) {
        int total = 0, grows = 0;
        for (int i = 0; i < n; i++) {
            const tpb_history_t *h = &hist[i];
            if (h->tp != tp || h->comm_only || !h->nslow)
                continue;
            int now = h->nslow / (h->world / tp);
            int then = tpb_detect_nblocks(4 * r, h->rounds > 0 ? r : 0);
            total += then > now ? then : now;
            grows |= then > now;
        }
        if (grows && total && tpb_detect_need(total, tp, TPB_DETECT_ALPHA) <= total) {
            snprintf(out, cap, "measure longer: at least --iters %d", 4 * r);
            return;
        }
    }
    snprintf(out, cap, "more configs at tp %d would: more iterations add no windows", tp);
}

/* A config's straggler beyond noise said as the run's blocks decide it: persistent (slower
 * over the whole run), transient (the blocks could have named it and did not: a passing
 * slowdown), or not enough data (they could not have named anyone: how long would). */
static void straggler_line(tpb_buf_t *txt, tpb_buf_t *js, const tpb_history_t *h,
                           const char *const *hosts, const tpb_persistent_t *run,
                           const char *advice)
{
    if (h->straggler_world < 0)
        return;
    char late[24], tail[256];
    const char *host = host_of(hosts, h->straggler_world);
    int persists = run->persistent && run->rank == h->straggler_world, known = decidable(run);
    const char *verdict = persists ? "persistent" : known ? "transient" : "not enough data";
    if (persists)
        snprintf(tail, sizeof(tail), " (slower over the whole run)");
    else if (known)
        snprintf(tail, sizeof(tail),
                 " (not slower over the run: a passing slowdown, not the "
                 "rank's)");
    else
        snprintf(tail, sizeof(tail),
                 ": not enough data to tell a persistent straggler from a passing slowdown "
                 "(%d windows worth %d independent ones, %d needed: %s)",
                 run->of, run->effective, run->need, advice);
    tpb_buf_printf(txt,
                   "#     %s in %s %s: rank %d%s%s%s, last in %.0f %% of iterations, by %s%s\n",
                   persists ? "straggler"
                   : known  ? "transient"
                            : "last most often",
                   tpb_config_key_split(&h->key), tpb_policy_name(h->policy), h->straggler_world,
                   host ? " (" : "", host ? host : "", host ? ")" : "", 100.0 * h->straggler_frac,
                   tpb_human_us(late, sizeof(late), h->straggler_late_us), tail);
    tpb_json_obj_begin(js);
    tpb_config_key_json(js, &h->key, TPB_KEY_CHOICE);
    tpb_json_kv_int(js, "rank", h->straggler_world);
    tpb_json_kv_num(js, "last_frac", h->straggler_frac);
    tpb_json_kv_num(js, "lateness_us", h->straggler_late_us);
    tpb_json_kv_str(js, "persistent", persists ? "yes" : "no");
    tpb_json_kv_str(js, "verdict", verdict);
    tpb_json_obj_end(js);
}

/* Per TP degree of the run: the persistent straggler, or none, with the evidence. */
static void run_stragglers(tpb_buf_t *txt, tpb_buf_t *js, const tpb_history_t *hist, int n,
                           const char *const *hosts)
{
    for (int i = 0; i < n; i++) {
        int seen = hist[i].tp < 2 || hist[i].comm_only || !hist[i].nslow;
        for (int j = 0; j < i && !seen; j++)
            seen = hist[j].tp == hist[i].tp && !hist[j].comm_only && hist[j].nslow;
        if (seen)
            continue;
        tpb_persistent_t p = tpb_answer_persistent(hist, n, hist[i].tp);
        const char *host = host_of(hosts, p.rank);
        char alarm[80];
        if (p.persistent)
            tpb_buf_printf(txt,
                           "#   straggler at tp %d: rank %d%s%s%s, the slowest of its group in "
                           "%d of %d windows over the run (%d needed: %s; the windows worth %d "
                           "independent ones), %.1f %% slower\n",
                           hist[i].tp, p.rank, host ? " (" : "", host ? host : "", host ? ")" : "",
                           p.slowest, p.of, p.need, tpb_alarm_words(alarm, sizeof(alarm), p.alpha),
                           p.effective, 100.0 * p.deficit);
        else if (isfinite(p.detectable))
            tpb_buf_printf(
                txt,
                "#   no persistent straggler at tp %d (most often the slowest: rank %d, "
                "in %d of %d windows; %d needed, the windows worth %d independent ones); "
                "the smallest slowdown this run could name: %.1f %%\n",
                hist[i].tp, p.rank, p.slowest, p.of, p.need, p.effective, 100.0 * p.detectable);
        else {
            char advice[96];
            decide_advice(advice, sizeof(advice), hist, n, hist[i].tp);
            tpb_buf_printf(txt,
                           "#   no persistent straggler at tp %d: %d windows are too few to tell "
                           "one from chance (%s)\n",
                           hist[i].tp, p.of, advice);
        }
        tpb_json_obj_begin(js);
        tpb_json_kv_str(js, "kind", "stragglers");
        tpb_config_key_json(js, &hist[i].key, TPB_KEY_TP);
        tpb_json_kv_num(js, "straggler_rank", p.persistent ? p.rank : NAN); /* null: none */
        tpb_json_kv_str(js, "verdict",
                        p.persistent    ? "persistent"
                        : decidable(&p) ? "none"
                                        : "not enough data");
        tpb_json_kv_int(js, "most_often_slowest", p.rank);
        tpb_json_kv_int(js, "slowest_blocks", p.slowest);
        tpb_json_kv_int(js, "blocks", p.of);
        tpb_json_kv_int(js, "blocks_needed", p.need);
        tpb_json_kv_int(js, "effective_blocks", p.effective);
        tpb_json_kv_num(js, "false_alarm", p.alpha);
        tpb_json_kv_num(js, "deficit", p.deficit);
        tpb_json_kv_num(js, "detectable", p.detectable);
        tpb_json_obj_end(js);
    }
}

static void json_group_keys(tpb_buf_t *js, const tpb_history_t *h)
{
    tpb_config_key_json(js, &h->key,
                        TPB_KEY_SHAPE | TPB_KEY_SIZES | TPB_KEY_TP | TPB_KEY_PLACEMENT);
}

/* The answer for the group of hist[first]; returns its fastest config that may be
 * recommended (recommendable). */
static const tpb_history_t *group_answer(tpb_buf_t *txt, tpb_buf_t *js, const tpb_history_t *hist,
                                         int n, int first, const char *const *hosts)
{
    const tpb_history_t *g = &hist[first], *best = g, *pick = NULL;
    for (int i = first; i < n; i++) {
        if (hist[i].comm_only || !tpb_history_same_group(&hist[i], g))
            continue;
        if (hist[i].step_med < best->step_med)
            best = &hist[i];
        if (recommendable(hist, n, &hist[i]) && (!pick || hist[i].step_med < pick->step_med))
            pick = &hist[i];
    }
    char shape[96], step[24];
    shape_label(shape, sizeof(shape), g);
    tpb_buf_printf(txt, "#   %s tp %d%s: fastest %s, %s a step\n", shape, g->tp,
                   g->placement == TPB_PLACE_SPREAD ? " (spread)" : "",
                   tpb_config_key_label(&best->key),
                   tpb_human_us(step, sizeof(step), best->step_med));
    tpb_json_obj_begin(js);
    tpb_json_kv_str(js, "kind", "tp");
    json_group_keys(js, g);
    tpb_config_key_json_as(js, "best_", &best->key, TPB_KEY_CHOICE);
    tpb_json_kv_num(js, "best_step_us", best->step_med);
    tpb_json_key(js, "policies");
    tpb_json_arr_begin(js);
    for (int i = first; i < n; i++)
        if (!hist[i].comm_only && tpb_history_same_group(&hist[i], g))
            policy_line(txt, js, hist, n, &hist[i]);
    tpb_json_arr_end(js);
    tpb_json_key(js, "stragglers");
    tpb_json_arr_begin(js);
    int named = 0;
    tpb_persistent_t run =
        g->tp > 1 ? tpb_answer_persistent(hist, n, g->tp) : (tpb_persistent_t){.rank = -1};
    char advice[96];
    decide_advice(advice, sizeof(advice), hist, n, g->tp);
    for (int i = first; i < n; i++)
        if (!hist[i].comm_only && tpb_history_same_group(&hist[i], g)) {
            named += hist[i].straggler_world >= 0;
            straggler_line(txt, js, &hist[i], hosts, &run, advice);
        }
    tpb_json_arr_end(js);
    tpb_json_obj_end(js);
    if (!named && g->tp > 1)
        tpb_buf_puts(txt, "#     no straggler beyond noise (whoever arrived last took turns)\n");
    return pick ? pick : best;
}

/* Once for the run: the worst calibration spread of any config that measured speeds. */
static void calibration_line(tpb_buf_t *txt, const tpb_history_t *hist, int n,
                             const char *const *hosts, double target)
{
    const tpb_history_t *w = NULL;
    for (int i = 0; i < n; i++)
        if (isfinite(hist[i].spread_worst) && (!w || hist[i].spread_worst > w->spread_worst))
            w = &hist[i];
    if (!w)
        return;
    const char *host = host_of(hosts, w->spread_world);
    tpb_buf_printf(txt, "#   calibration: worst spread %.1f %% (rank %d%s%s; goal %.0f %%)%s\n",
                   100.0 * w->spread_worst, w->spread_world, host ? " on " : "", host ? host : "",
                   100.0 * target,
                   w->spread_worst <= target ? ": the speeds settled"
                                             : ": did not settle, weighted shards may be off");
}

/* The configs faster than best in its group that the answer does not recommend (their
 * verdict is not better): "keep even" and why. */
static void kept_even(tpb_buf_t *txt, const tpb_history_t *hist, int n, const tpb_history_t *best)
{
    for (int i = 0; i < n; i++) {
        const tpb_history_t *h = &hist[i], *ev = tpb_verdict_even_of(hist, n, h);
        if (h->comm_only || !tpb_history_same_group(h, best) || !ev ||
            h->policy == TPB_POLICY_EVEN || !(h->step_med < best->step_med) ||
            recommendable(hist, n, h))
            continue;
        tpb_policy_verdict_t v = tpb_verdict_of(ev, h, TPB_VERDICT_TOL);
        tpb_buf_printf(txt, "; keep even: %s measured %.2fx", tpb_config_key_label(&h->key),
                       v.speedup);
        if (isfinite(v.lo))
            tpb_buf_printf(txt, " [%.2f, %.2f]", v.lo, v.hi);
        tpb_buf_printf(txt, ", %s", tpb_verdict_name(v.verdict));
        return;
    }
}

static void json_use(tpb_buf_t *js, const tpb_history_t *h, const char *question, double rate,
                     const tpb_pick_t *pick)
{
    tpb_json_obj_begin(js);
    tpb_json_kv_str(js, "kind", "use");
    tpb_json_kv_str(js, "question", question);
    json_group_keys(js, h);
    tpb_config_key_json(js, &h->key, TPB_KEY_CHOICE);
    tpb_json_kv_num(js, "step_us", h->step_med);
    tpb_json_kv_num(js, "layers_per_s", rate);
    tpb_answer_pick_json(js, pick);
    tpb_json_obj_end(js);
}

/* Layers per second over the whole world: world / tp groups each doing one per step. */
static double layer_rate(const tpb_history_t *h)
{
    return h->world > 0 ? (double)(h->world / h->tp) / (h->step_med * 1e-6) : NAN;
}

/* Per shape, two questions: the shortest step over every TP degree and placement (latency:
 * what one layer takes), and the highest layer rate over the world (throughput: the other
 * world / tp ranks' worth of groups left to data or pipeline parallelism), each among the
 * configs the answer may recommend. */
/* The best of the shape's recommendable configs but `not` by the step (rate 0) or the layer
 * rate (rate 1); NULL where there is none. At TP 1 the split and policy change nothing that
 * runs (one rank, the whole GEMM): a TP 1 pick's runner-up is another TP degree. */
static const tpb_history_t *next_best(const tpb_history_t *hist, int n, const tpb_history_t * not,
                                      int rate)
{
    const tpb_history_t *b = NULL;
    for (int i = 0; i < n; i++) {
        const tpb_history_t *h = &hist[i];
        if (h == not || h->comm_only || !tpb_history_same_shape(h, not ) ||
            !recommendable(hist, n, h) || (h->tp == 1 && not ->tp == 1))
            continue;
        if (!b || (rate ? layer_rate(h) > layer_rate(b) : h->step_med < b->step_med))
            b = h;
    }
    return b;
}

/* "# use for SHAPE: ..." or, for a --block run's GEMM (each timed alone, a part of the block
 * whose own answer is the one to run), "# part SHAPE alone: ..." */
static void use_line(tpb_buf_t *txt, tpb_buf_t *js, const tpb_history_t *hist, int n,
                     const tpb_history_t *best, const char *const *hosts, int part)
{
    char shape[96], step[24];
    const tpb_history_t *thr = best;
    for (int i = 0; i < n; i++)
        if (!hist[i].comm_only && tpb_history_same_shape(&hist[i], best) &&
            recommendable(hist, n, &hist[i]) && layer_rate(&hist[i]) > layer_rate(thr))
            thr = &hist[i];
    tpb_pick_t lat = tpb_answer_pick(best, next_best(hist, n, best, 0), 0);
    tpb_pick_t tput = tpb_answer_pick(thr, next_best(hist, n, thr, 1), 1);
    shape_label(shape, sizeof(shape), best);
    tpb_buf_printf(txt, "# %s %s%s%s: %s at tp %d%s (%s a step", part ? "part" : "use for", shape,
                   part ? " alone" : "", thr == best ? "" : ", shortest step (latency)",
                   tpb_config_key_label(&best->key), best->tp,
                   best->placement == TPB_PLACE_SPREAD ? " spread" : "",
                   tpb_human_us(step, sizeof(step), best->step_med));
    const tpb_history_t *ev = tpb_verdict_even_of(hist, n, best);
    if (ev && ev != best) {
        tpb_policy_verdict_t v = tpb_verdict_of(ev, best, TPB_VERDICT_TOL);
        tpb_buf_printf(txt, "; %.2fx [%.2f, %.2f] the even split's speed", v.speedup, v.lo, v.hi);
        if (ev->straggler_world >= 0) {
            const char *host = host_of(hosts, ev->straggler_world);
            tpb_buf_printf(txt, ", which waits for rank %d%s%s%s", ev->straggler_world,
                           host ? " (" : "", host ? host : "", host ? ")" : "");
        }
    }
    kept_even(txt, hist, n, best);
    tpb_buf_printf(txt, ")%s\n",
                   thr == best && best->tp > 1 ? "; also the highest layer rate" : "");
    tpb_answer_pick_text(txt, &lat, "shortest step");
    json_use(js, best, "latency", layer_rate(best), &lat);
    if (thr != best) {
        tpb_buf_printf(
            txt,
            "# %s %s%s, highest layer rate (throughput): %s at tp %d%s "
            "(%d group%s at once, %s a step: %.0f layers/s over %d ranks)\n",
            part ? "part" : "use for", shape, part ? " alone" : "", tpb_config_key_label(&thr->key),
            thr->tp, thr->placement == TPB_PLACE_SPREAD ? " spread" : "", thr->world / thr->tp,
            thr->world / thr->tp == 1 ? "" : "s", tpb_human_us(step, sizeof(step), thr->step_med),
            layer_rate(thr), thr->world);
    }
    if (thr != best || thr->tp > 1)
        tpb_answer_pick_text(txt, &tput, "highest layer rate");
    json_use(js, thr, "throughput", layer_rate(thr), &tput);
}

static void answer_write(tpb_buf_t *txt, tpb_buf_t *js, const tpb_history_t *hist, int n,
                         const char *const *hosts, double target_spread, int parts)
{
    int any = 0;
    for (int i = 0; i < n; i++)
        any |= !hist[i].comm_only;
    if (!any)
        return;
    tpb_buf_t use = TPB_BUF_INIT; /* the use lines close the answer */
    int budget = 0;
    for (int i = 0; i < n; i++)
        budget |= hist[i].looks > 0;
    tpb_buf_puts(txt, budget ? "# answer (median steps, as in the table; a speed-up over even with "
                               "its interval at its --budget look's level (97.5 % after one "
                               "look, 99.2 % after two, ...: 95 % over all looks), "
                             : "# answer (median steps, as in the table; a speed-up over even with "
                               "its 95 % interval, ");
    tpb_buf_puts(txt, "from rounds paired side by side with even, and the most "
                      "balancing can buy: better, worse, a draw within 5 %, inconclusive or "
                      "disturbed; a straggler is named when it arrived last in more than "
                      "(1 + 1/tp)/2 of the iterations, by >= 5 % of the step; a persistent one "
                      "when it was the slowest in enough windows, stretches of iterations "
                      "counted once each, that chance alone would name one at most once in "
                      "100 runs)\n");
    for (int i = 0; i < n; i++) { /* one shape at a time, in the order measured */
        int seen = hist[i].comm_only;
        for (int j = 0; j < i && !seen; j++)
            seen = !hist[j].comm_only && tpb_history_same_shape(&hist[j], &hist[i]);
        if (seen)
            continue;
        const tpb_history_t *best = NULL;
        for (int k = i; k < n; k++) {
            int first = !hist[k].comm_only && tpb_history_same_shape(&hist[k], &hist[i]);
            for (int j = i; j < k && first; j++)
                first = hist[j].comm_only || !tpb_history_same_group(&hist[j], &hist[k]);
            if (!first)
                continue;
            const tpb_history_t *b = group_answer(txt, js, hist, n, k, hosts);
            best = !best || b->step_med < best->step_med ? b : best;
        }
        use_line(&use, js, hist, n, best, hosts, parts);
    }
    run_stragglers(txt, js, hist, n, hosts);
    calibration_line(txt, hist, n, hosts, target_spread);
    tpb_buf_puts(txt, tpb_buf_str(&use));
    if (!tpb_buf_ok(&use))
        tpb_buf_puts(txt, "# (out of memory for the use lines)\n");
    tpb_buf_free(&use);
}

void tpb_answer_write(tpb_buf_t *txt, tpb_buf_t *js, const tpb_history_t *hist, int n,
                      const char *const *hosts, double target_spread)
{
    answer_write(txt, js, hist, n, hosts, target_spread, 0);
}

void tpb_answer_parts(tpb_buf_t *txt, tpb_buf_t *js, const tpb_history_t *hist, int n,
                      const char *const *hosts, double target_spread)
{
    answer_write(txt, js, hist, n, hosts, target_spread, 1);
}
