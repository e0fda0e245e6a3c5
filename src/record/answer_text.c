/* answer_text.c - the answer model (record/answer_model.h) as the terminal's '#' lines: the
 * groups shape by shape, the run's stragglers, the calibration, then the use lines. */
#include <math.h>
#include <stdio.h>

#include "record/answer_model.h"
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

const char *tpb_answer_advice(char *out, size_t cap, int iters, int tp)
{
    if (iters > 0)
        snprintf(out, cap, "measure longer: at least --iters %d", iters);
    else
        snprintf(out, cap, "more configs at tp %d would: more iterations add no windows", tp);
    return out;
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
static void policy_text(tpb_buf_t *txt, const tpb_answer_policy_t *p)
{
    const tpb_policy_verdict_t *v = &p->v;
    double pred = p->h->predicted_speedup;
    tpb_buf_printf(txt, "#     %-3s: %s %.2fx over even", tpb_config_key_split(&p->h->key),
                   tpb_policy_name(p->h->policy), v->speedup);
    if (isfinite(v->lo))
        tpb_buf_printf(txt, " [%.2f, %.2f]", v->lo, v->hi);
    tpb_verdict_rounds_text(txt, v);
    if (isfinite(v->bound))
        tpb_buf_printf(txt, ", at most %.2fx", v->bound);
    if (isfinite(pred))
        tpb_buf_printf(txt, ", predicted %.2fx", pred);
    /* after the looks --budget took, "measure longer" is what it already did */
    tpb_buf_printf(txt, ": %s\n",
                   v->looks > 0 && v->verdict == TPB_VERDICT_INCONCLUSIVE
                       ? "inconclusive: the interval still reaches past 5 % either way after "
                         "every look --budget could take (--budget measured as long as it "
                         "could: the budget or its looks ran out); keep even"
                       : verdict_text(v->verdict));
}

/* A config's straggler beyond noise said as the run's blocks decide it: persistent (slower
 * over the whole run), transient (the blocks could have named it and did not: a passing
 * slowdown), or not enough data (they could not have named anyone: how long would). */
static void straggler_text(tpb_buf_t *txt, const tpb_answer_t *a, const tpb_answer_group_t *g,
                           const tpb_answer_straggler_t *s)
{
    const tpb_history_t *h = s->h;
    const tpb_persistent_t *run = &g->run;
    char late[24], tail[256], advice[96];
    const char *host = host_of(a->hosts, h->straggler_world);
    if (s->late == TPB_LATE_PERSISTENT)
        snprintf(tail, sizeof(tail), " (slower over the whole run)");
    else if (s->late == TPB_LATE_TRANSIENT)
        snprintf(tail, sizeof(tail),
                 " (not slower over the run: a passing slowdown, not the "
                 "rank's)");
    else
        snprintf(tail, sizeof(tail),
                 ": not enough data to tell a persistent straggler from a passing slowdown "
                 "(%d windows worth %d independent ones, %d needed: %s)",
                 run->of, run->effective, run->need,
                 tpb_answer_advice(advice, sizeof(advice), g->advice_iters, g->first->tp));
    tpb_buf_printf(txt,
                   "#     %s in %s %s: rank %d%s%s%s, last in %.0f %% of iterations, by %s%s\n",
                   s->late == TPB_LATE_PERSISTENT  ? "straggler"
                   : s->late == TPB_LATE_TRANSIENT ? "transient"
                                                   : "last most often",
                   tpb_config_key_split(&h->key), tpb_policy_name(h->policy), h->straggler_world,
                   host ? " (" : "", host ? host : "", host ? ")" : "", 100.0 * h->straggler_frac,
                   tpb_human_us(late, sizeof(late), h->straggler_late_us), tail);
}

static void group_text(tpb_buf_t *txt, const tpb_answer_t *a, const tpb_answer_group_t *g)
{
    char shape[96], step[24];
    shape_label(shape, sizeof(shape), g->first);
    tpb_buf_printf(txt, "#   %s tp %d%s: fastest %s, %s a step\n", shape, g->first->tp,
                   g->first->placement == TPB_PLACE_SPREAD ? " (spread)" : "",
                   tpb_config_key_label(&g->best->key),
                   tpb_human_us(step, sizeof(step), g->best->step_med));
    for (int i = 0; i < g->npol; i++)
        policy_text(txt, &a->pol[g->pol0 + i]);
    for (int i = 0; i < g->nstr; i++)
        straggler_text(txt, a, g, &a->str[g->str0 + i]);
    if (!g->nstr && g->first->tp > 1)
        tpb_buf_puts(txt, "#     no straggler beyond noise (whoever arrived last took turns)\n");
}

/* Per TP degree of the run: the persistent straggler, or none, with the evidence. */
static void tp_text(tpb_buf_t *txt, const tpb_answer_t *a, const tpb_answer_tp_t *t)
{
    const tpb_persistent_t *p = &t->p;
    int tp = t->first->tp;
    const char *host = host_of(a->hosts, p->rank);
    char alarm[80], advice[96];
    if (p->persistent)
        tpb_buf_printf(txt,
                       "#   straggler at tp %d: rank %d%s%s%s, the slowest of its group in "
                       "%d of %d windows over the run (%d needed: %s; the windows worth %d "
                       "independent ones), %.1f %% slower\n",
                       tp, p->rank, host ? " (" : "", host ? host : "", host ? ")" : "", p->slowest,
                       p->of, p->need, tpb_alarm_words(alarm, sizeof(alarm), p->alpha),
                       p->effective, 100.0 * p->deficit);
    else if (isfinite(p->detectable))
        tpb_buf_printf(txt,
                       "#   no persistent straggler at tp %d (most often the slowest: rank %d, "
                       "in %d of %d windows; %d needed, the windows worth %d independent ones); "
                       "the smallest slowdown this run could name: %.1f %%\n",
                       tp, p->rank, p->slowest, p->of, p->need, p->effective,
                       100.0 * p->detectable);
    else
        tpb_buf_printf(txt,
                       "#   no persistent straggler at tp %d: %d windows are too few to tell "
                       "one from chance (%s)\n",
                       tp, p->of, tpb_answer_advice(advice, sizeof(advice), t->advice_iters, tp));
}

/* Once for the run: the worst calibration spread of any config that measured speeds. */
static void calibration_text(tpb_buf_t *txt, const tpb_answer_t *a)
{
    const tpb_history_t *w = a->calib;
    if (!w)
        return;
    const char *host = host_of(a->hosts, w->spread_world);
    tpb_buf_printf(txt, "#   calibration: worst spread %.1f %% (rank %d%s%s; goal %.0f %%)%s\n",
                   100.0 * w->spread_worst, w->spread_world, host ? " on " : "", host ? host : "",
                   100.0 * a->target,
                   w->spread_worst <= a->target ? ": the speeds settled"
                                                : ": did not settle, weighted shards may be off");
}

/* "# use for SHAPE: ..." or, for a --block run's GEMM (each timed alone, a part of the block
 * whose own answer is the one to run), "# part SHAPE alone: ..." */
static void use_text(tpb_buf_t *txt, const tpb_answer_t *a, const tpb_answer_shape_t *s)
{
    char shape[96], step[24];
    const tpb_history_t *best = s->best, *thr = s->thr;
    const char *use = a->parts ? "part" : "use for", *alone = a->parts ? " alone" : "";
    shape_label(shape, sizeof(shape), best);
    tpb_buf_printf(txt, "# %s %s%s%s: %s at tp %d%s (%s a step", use, shape, alone,
                   thr == best ? "" : ", shortest step (latency)", tpb_config_key_label(&best->key),
                   best->tp, best->placement == TPB_PLACE_SPREAD ? " spread" : "",
                   tpb_human_us(step, sizeof(step), best->step_med));
    if (s->even) {
        const tpb_policy_verdict_t *v = &s->even_v;
        tpb_buf_printf(txt, "; %.2fx [%.2f, %.2f] the even split's speed", v->speedup, v->lo,
                       v->hi);
        if (s->even->straggler_world >= 0) {
            const char *host = host_of(a->hosts, s->even->straggler_world);
            tpb_buf_printf(txt, ", which waits for rank %d%s%s%s", s->even->straggler_world,
                           host ? " (" : "", host ? host : "", host ? ")" : "");
        }
    }
    if (s->kept) {
        tpb_buf_printf(txt, "; keep even: %s measured %.2fx", tpb_config_key_label(&s->kept->key),
                       s->kept_v.speedup);
        if (isfinite(s->kept_v.lo))
            tpb_buf_printf(txt, " [%.2f, %.2f]", s->kept_v.lo, s->kept_v.hi);
        tpb_buf_printf(txt, ", %s", tpb_verdict_name(s->kept_v.verdict));
    }
    tpb_buf_printf(txt, ")%s\n",
                   thr == best && best->tp > 1 ? "; also the highest layer rate" : "");
    tpb_answer_pick_text(txt, &s->lat, "shortest step");
    if (thr != best) {
        tpb_buf_printf(txt,
                       "# %s %s%s, highest layer rate (throughput): %s at tp %d%s "
                       "(%d group%s at once, %s a step: %.0f layers/s over %d ranks)\n",
                       use, shape, alone, tpb_config_key_label(&thr->key), thr->tp,
                       thr->placement == TPB_PLACE_SPREAD ? " spread" : "", thr->world / thr->tp,
                       thr->world / thr->tp == 1 ? "" : "s",
                       tpb_human_us(step, sizeof(step), thr->step_med), tpb_answer_layer_rate(thr),
                       thr->world);
    }
    if (thr != best || thr->tp > 1)
        tpb_answer_pick_text(txt, &s->tput, "highest layer rate");
}

void tpb_answer_text(tpb_buf_t *txt, const tpb_answer_t *a)
{
    if (!a->nshapes)
        return;
    tpb_buf_puts(txt, a->budget
                          ? "# answer (median steps, as in the table; a speed-up over even with "
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
    for (int i = 0; i < a->ngroups; i++)
        group_text(txt, a, &a->groups[i]);
    for (int i = 0; i < a->ntps; i++)
        tp_text(txt, a, &a->tps[i]);
    calibration_text(txt, a);
    for (int i = 0; i < a->nshapes; i++)
        use_text(txt, a, &a->shapes[i]);
}

/* ---- a --block run's blocks ---- */

/* A block's use line's verdict in words. */
static const char *block_use_words(const tpb_policy_verdict_t *v)
{
    if (v->verdict == TPB_VERDICT_BETTER)
        return "sure";
    if (v->verdict == TPB_VERDICT_DRAW)
        return "a draw within 5 %, either will do";
    return v->looks > 0 ? "not sure: --budget measured as long as it could (the budget or its "
                          "looks ran out)"
                        : "not sure: measure longer (--iters, or --budget)";
}

/* "use for block NAME, QUESTION: POLICY at tp T (FIGURE; X.XXx the runner-up's [lo, hi]: verdict)"
 */
static void block_use_text(tpb_buf_t *txt, const tpb_block_use_t *u)
{
    const tpb_history_t *best = u->best, *next = u->next;
    char step[24];
    tpb_buf_printf(txt, "# use for block %s, %s: %s at tp %d (", best->shape_name,
                   u->thr ? "highest tokens/s per rank (throughput)" : "shortest step (latency)",
                   tpb_policy_name(best->policy), best->tp);
    if (u->thr)
        tpb_buf_printf(txt, "%.0f tokens/s per rank", tpb_block_tokens_rate(best));
    else
        tpb_buf_printf(txt, "%s a step", tpb_human_us(step, sizeof(step), best->step_med));
    if (next) {
        const tpb_policy_verdict_t *v = &u->v;
        const tpb_history_t *later = best->id > next->id ? best : next;
        const tpb_history_t *earlier = later == best ? next : best;
        tpb_buf_printf(txt, "; %.2fx tp %d's [%.2f, %.2f]", v->speedup, next->tp, v->lo, v->hi);
        if (v->looks > 0)
            tpb_buf_printf(txt, " at %.2f %% (--budget: %d look%s of tp %d, measured after tp %d)",
                           100.0 * v->conf, v->looks, v->looks == 1 ? "" : "s", later->tp,
                           earlier->tp);
        tpb_buf_printf(txt, ": %s", block_use_words(v));
    }
    tpb_buf_puts(txt, ")\n");
}

static void block_text(tpb_buf_t *txt, const tpb_block_answer_t *a, const tpb_block_one_t *o)
{
    char step[24];
    for (int t = o->tp0; t < o->tp0 + o->ntp; t++) {
        const tpb_history_t *p = a->tps[t].pick;
        tpb_buf_printf(txt, "#   block %s tp %d: fastest %s, %s a step, %.0f tokens/s per rank\n",
                       o->g->shape_name, p->tp, tpb_policy_name(p->policy),
                       tpb_human_us(step, sizeof(step), p->step_med), tpb_block_tokens_rate(p));
        for (int i = a->tps[t].pol0; i < a->tps[t].pol0 + a->tps[t].npol; i++) {
            const tpb_policy_verdict_t *v = &a->pol[i].v;
            tpb_buf_printf(txt, "#     %s %.2fx over even [%.2f, %.2f]",
                           tpb_policy_name(a->pol[i].h->policy), v->speedup, v->lo, v->hi);
            tpb_verdict_rounds_text(txt, v);
            if (isfinite(v->bound))
                tpb_buf_printf(txt, ", at most %.2fx", v->bound);
            tpb_buf_printf(txt, ": %s\n", tpb_verdict_name(v->verdict));
        }
    }
    tpb_buf_printf(txt, "#   block %s, TP degrees by tokens/s per rank:", o->g->shape_name);
    for (int j = 0; j < o->nrank; j++) {
        const tpb_history_t *p = a->rank[o->rank0 + j];
        tpb_buf_printf(txt, "%s tp %d %.0f", j ? "," : "", p->tp, tpb_block_tokens_rate(p));
    }
    tpb_buf_puts(txt, "\n");
}

void tpb_block_answer_text(tpb_buf_t *txt, const tpb_block_answer_t *a)
{
    if (!a->nblocks)
        return;
    tpb_buf_puts(txt, "# blocks (--block: the GEMMs back to back as one step; tokens/s per rank "
                      "= M / (tp x median step), each group turning M tokens a step; a policy "
                      "over even with its 95 % interval, the use lines against the runner-up; "
                      "under --budget each at the level its looks allow)\n");
    for (int b = 0; b < a->nblocks; b++)
        block_text(txt, a, &a->blocks[b]);
    for (int b = 0; b < a->nblocks; b++)
        if (a->blocks[b].nrank) {
            block_use_text(txt, &a->blocks[b].thr);
            block_use_text(txt, &a->blocks[b].lat);
        }
}

/* ---- --overlap chunked ---- */

/* Why overlap does not pay, in words (the line's verdict when it is not host_waits or pays). */
const char *tpb_overlap_why_text(tpb_overlap_why_t w)
{
    switch (w) {
    case TPB_OVERLAP_HOST_WAITS:
        return "the host waits for --comm mpi's staged collectives: nothing can overlap";
    case TPB_OVERLAP_PAYS: return NULL;
    case TPB_OVERLAP_NO_PROGRESS:
        return "no progress: the collectives were not hidden behind the GEMMs";
    case TPB_OVERLAP_CHUNKING: return "chunking cost: the chunked GEMMs run slower than the whole";
    case TPB_OVERLAP_INTERFERENCE: break;
    }
    return "interference: the GEMM runs slower beside the collectives";
}

static void overlap_text(tpb_buf_t *txt, const tpb_overlap_line_t *l)
{
    const tpb_history_t *best = l->best;
    const tpb_overlap_t *o = &best->overlap;
    tpb_buf_printf(txt, "#   overlap %ldx%ldx%ld tp %d %s %s: ", best->m, best->n, best->k,
                   best->tp, tpb_config_key_split(&best->key), tpb_policy_name(best->policy));
    if (l->verdict == TPB_OVERLAP_HOST_WAITS) /* no figure of overlap: none could happen */
        tpb_buf_printf(txt, "the host waits for --comm mpi's staged collectives: nothing can "
                            "overlap (--comm ccl can");
    else if (l->verdict == TPB_OVERLAP_PAYS)
        tpb_buf_printf(txt,
                       "best at %d chunks, %.2fx over serial (%.0f %% of the communication "
                       "hidden",
                       best->chunks, l->speedup, 100.0 * o->efficiency);
    else
        tpb_buf_printf(txt,
                       "overlap does not pay here (best %.2fx at %d chunks): %s (chunking "
                       "%.2fx, interference %.2fx, %.0f %% hidden",
                       l->speedup, best->chunks, tpb_overlap_why_text(l->verdict), o->chunking_cost,
                       o->interference, 100.0 * o->efficiency);
    if (isfinite(best->speedup) && l->verdict != TPB_OVERLAP_HOST_WAITS)
        tpb_buf_printf(txt, "; %.2fx the serial config's step", best->speedup);
    tpb_buf_puts(txt, ")\n");
}

void tpb_overlap_answer_text(tpb_buf_t *txt, const tpb_overlap_answer_t *a)
{
    for (int i = 0; i < a->nlines; i++)
        overlap_text(txt, &a->lines[i]);
}
