/* answer_block.c - the closing answer for --block: per block and TP degree the fastest
 * policy with a weighted block's verdict over even, the TP degrees ranked by tokens per
 * second per rank, and what to use for throughput and for latency, each against the
 * runner-up with its 95 % interval. */
#include <math.h>
#include <stdio.h>

#include "record/answer.h"
#include "record/verdict.h"

/* A block the answer may recommend: even, or a policy whose verdict over even is better. */
static int recommendable(const tpb_history_t *b, int n, const tpb_history_t *h)
{
    const tpb_history_t *ev = tpb_verdict_even_of(b, n, h);
    return h->policy == TPB_POLICY_EVEN || !ev ||
           tpb_verdict_of(ev, h, TPB_VERDICT_TOL).verdict == TPB_VERDICT_BETTER;
}

static double tps(const tpb_history_t *h)
{
    return h->step_med > 0 ? (double)h->m / ((double)h->tp * h->step_med * 1e-6) : NAN;
}

/* The same block (name, tokens, sequence parallelism, placement): one answer. */
static int same_block(const tpb_history_t *a, const tpb_history_t *b)
{
    return tpb_history_same_shape(a, b) &&
           tpb_config_key_same(&a->key, &b->key, TPB_KEY_VARIANT | TPB_KEY_PLACEMENT);
}

/* The recommendable block of b's TP degree with the shortest step. */
static const tpb_history_t *pick_at(const tpb_history_t *b, int n, const tpb_history_t *g)
{
    const tpb_history_t *pick = NULL;
    for (int i = 0; i < n; i++)
        if (same_block(&b[i], g) && b[i].tp == g->tp && recommendable(b, n, &b[i]) &&
            (!pick || b[i].step_med < pick->step_med))
            pick = &b[i];
    return pick;
}

static void policy_lines(tpb_buf_t *txt, tpb_buf_t *js, const tpb_history_t *b, int n,
                         const tpb_history_t *g)
{
    for (int i = 0; i < n; i++) {
        const tpb_history_t *h = &b[i], *ev = tpb_verdict_even_of(b, n, h);
        if (!same_block(h, g) || h->tp != g->tp || !ev || h->policy == TPB_POLICY_EVEN)
            continue;
        tpb_policy_verdict_t v = tpb_verdict_of(ev, h, TPB_VERDICT_TOL);
        tpb_buf_printf(txt, "#     %s %.2fx over even [%.2f, %.2f]", tpb_policy_name(h->policy),
                       v.speedup, v.lo, v.hi);
        tpb_verdict_rounds_text(txt, &v);
        if (isfinite(v.bound))
            tpb_buf_printf(txt, ", at most %.2fx", v.bound);
        tpb_buf_printf(txt, ": %s\n", tpb_verdict_name(v.verdict));
        tpb_json_obj_begin(js);
        tpb_json_kv_str(js, "kind", "block_policy");
        tpb_json_kv_str(js, "block", h->shape_name);
        tpb_config_key_json(js, &h->key, TPB_KEY_TP | TPB_KEY_POLICY);
        tpb_json_kv_num(js, "speedup", v.speedup);
        tpb_json_kv_num(js, "speedup_lo", v.lo);
        tpb_json_kv_num(js, "speedup_hi", v.hi);
        tpb_json_kv_num(js, "speedup_bound", v.bound);
        tpb_json_kv_str(js, "verdict", tpb_verdict_name(v.verdict));
        tpb_verdict_looks_json(js, &v);
        tpb_json_obj_end(js);
    }
}

/* a over b by throughput (tokens/s per rank, higher is better) or latency (the step):
 * a's advantage as a factor with its interval, and the verdict on it. */
static tpb_policy_verdict_t against(const tpb_history_t *a, const tpb_history_t *b, int thr)
{
    tpb_ratio_ci_t ci =
        tpb_interval_ratio(b->steps, (size_t)b->nsteps, a->steps, (size_t)a->nsteps);
    double scale = thr ? (double)a->tp / (double)b->tp : 1.0; /* a's cost per token over b's */
    double r = ci.ratio * scale;
    tpb_policy_verdict_t v = {.speedup = 1.0 / r, .lo = NAN, .hi = NAN, .bound = NAN};
    v.verdict = tpb_interval_decide(r, ci.half, TPB_VERDICT_TOL);
    if (isfinite(ci.half)) {
        v.lo = v.speedup * exp(-ci.half);
        v.hi = v.speedup * exp(ci.half);
    }
    return v;
}

/* "use for block NAME, QUESTION: POLICY at tp T (FIGURE; X.XXx the runner-up's [lo, hi]: verdict)"
 */
static void use_line(tpb_buf_t *txt, tpb_buf_t *js, const tpb_history_t *best,
                     const tpb_history_t *next, int thr)
{
    char step[24];
    tpb_buf_printf(txt, "# use for block %s, %s: %s at tp %d (", best->shape_name,
                   thr ? "highest tokens/s per rank (throughput)" : "shortest step (latency)",
                   tpb_policy_name(best->policy), best->tp);
    if (thr)
        tpb_buf_printf(txt, "%.0f tokens/s per rank", tps(best));
    else
        tpb_buf_printf(txt, "%s a step", tpb_human_us(step, sizeof(step), best->step_med));
    tpb_policy_verdict_t v = {.speedup = NAN, .lo = NAN, .hi = NAN};
    if (next) {
        v = against(best, next, thr);
        tpb_buf_printf(txt, "; %.2fx tp %d's [%.2f, %.2f]: %s", v.speedup, next->tp, v.lo, v.hi,
                       v.verdict == TPB_VERDICT_BETTER ? "sure"
                       : v.verdict == TPB_VERDICT_DRAW ? "a draw within 5 %, either will do"
                                                       : "not sure: measure longer (--iters)");
    }
    tpb_buf_puts(txt, ")\n");
    tpb_json_obj_begin(js);
    tpb_json_kv_str(js, "kind", "block_use");
    tpb_json_kv_str(js, "question", thr ? "throughput" : "latency");
    tpb_json_kv_str(js, "block", best->shape_name);
    tpb_config_key_json(js, &best->key, TPB_KEY_BLOCK);
    tpb_json_kv_num(js, "step_us", best->step_med);
    tpb_json_kv_num(js, "tokens_per_s_rank", tps(best));
    tpb_json_kv_num(js, "runner_up_tp", next ? next->tp : NAN);
    tpb_json_kv_num(js, "over_runner_up", v.speedup);
    tpb_json_kv_num(js, "over_runner_up_lo", v.lo);
    tpb_json_kv_num(js, "over_runner_up_hi", v.hi);
    tpb_json_kv_str(js, "verdict", next ? tpb_verdict_name(v.verdict) : NULL);
    tpb_json_obj_end(js);
}

/* The TP degrees of block g ranked by tokens/s per rank (their picks), best first, into
 * pick[]; returns how many. */
static int ranked(const tpb_history_t *b, int n, const tpb_history_t *g, const tpb_history_t **pick)
{
    int k = 0;
    for (int i = 0; i < n; i++) {
        int seen = !same_block(&b[i], g);
        for (int j = 0; j < k && !seen; j++)
            seen = pick[j]->tp == b[i].tp;
        const tpb_history_t *p = seen ? NULL : pick_at(b, n, &b[i]);
        if (!p)
            continue;
        int at = k++;
        for (; at > 0 && tps(pick[at - 1]) < tps(p); at--)
            pick[at] = pick[at - 1];
        pick[at] = p;
    }
    return k;
}

/* One block: per TP degree its figures, the ranking, and the two use lines. */
static void block_answer(tpb_buf_t *txt, tpb_buf_t *use, tpb_buf_t *js, const tpb_history_t *b,
                         int n, const tpb_history_t *g)
{
    const tpb_history_t *pick[n];
    int k = ranked(b, n, g, pick);
    char step[24];
    for (int i = 0; i < n; i++) {
        int first = same_block(&b[i], g);
        for (int j = 0; j < i && first; j++)
            first = !same_block(&b[j], g) || b[j].tp != b[i].tp;
        const tpb_history_t *p = first ? pick_at(b, n, &b[i]) : NULL;
        if (!p)
            continue;
        tpb_buf_printf(txt, "#   block %s tp %d: fastest %s, %s a step, %.0f tokens/s per rank\n",
                       g->shape_name, p->tp, tpb_policy_name(p->policy),
                       tpb_human_us(step, sizeof(step), p->step_med), tps(p));
        policy_lines(txt, js, b, n, p);
    }
    tpb_buf_printf(txt, "#   block %s, TP degrees by tokens/s per rank:", g->shape_name);
    for (int j = 0; j < k; j++)
        tpb_buf_printf(txt, "%s tp %d %.0f", j ? "," : "", pick[j]->tp, tps(pick[j]));
    tpb_buf_puts(txt, "\n");
    if (!k)
        return;
    use_line(use, js, pick[0], k > 1 ? pick[1] : NULL, 1);
    const tpb_history_t *lat = pick[0], *lat2 = NULL;
    for (int j = 1; j < k; j++)
        if (pick[j]->step_med < lat->step_med)
            lat = pick[j];
    for (int j = 0; j < k; j++)
        if (pick[j] != lat && (!lat2 || pick[j]->step_med < lat2->step_med))
            lat2 = pick[j];
    use_line(use, js, lat, lat2, 0);
}

void tpb_answer_block(tpb_buf_t *txt, tpb_buf_t *js, const tpb_history_t *blocks, int n)
{
    if (n == 0)
        return;
    tpb_buf_t use = TPB_BUF_INIT;
    tpb_buf_puts(txt, "# blocks (--block: the GEMMs back to back as one step; tokens/s per rank "
                      "= M / (tp x median step), each group turning M tokens a step; a policy "
                      "over even with its 95 % interval, the use lines against the runner-up)\n");
    for (int i = 0; i < n; i++) {
        int seen = 0;
        for (int j = 0; j < i && !seen; j++)
            seen = same_block(&blocks[j], &blocks[i]);
        if (!seen)
            block_answer(txt, &use, js, blocks, n, &blocks[i]);
    }
    tpb_buf_puts(txt, tpb_buf_str(&use));
    tpb_buf_free(&use);
}
