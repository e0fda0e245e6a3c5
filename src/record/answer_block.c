/* answer_block.c - the closing answer for --block: per block and TP degree the fastest
 * policy with a weighted block's verdict over even, the TP degrees ranked by tokens per
 * second per rank, and what to use for throughput and for latency, each against the
 * runner-up with its interval (95 %, or under --budget the later block's look level); and
 * under --budget whether a block's set after a look may still decide the ranking. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

tpb_policy_verdict_t tpb_block_verdict(const tpb_history_t *a, const tpb_history_t *b, int thr)
{
    const tpb_history_t *later = a->id > b->id ? a : b;
    double conf = tpb_verdict_conf(later->looks);
    tpb_ratio_ci_t ci =
        tpb_interval_ratio_at(b->steps, (size_t)b->nsteps, a->steps, (size_t)a->nsteps, conf);
    double scale = thr ? (double)a->tp / (double)b->tp : 1.0; /* a's cost per token over b's */
    double r = ci.ratio * scale;
    tpb_policy_verdict_t v = {.speedup = 1.0 / r, .lo = NAN, .hi = NAN, .bound = NAN, .conf = conf};
    v.looks = later->looks;
    v.verdict = tpb_interval_decide(r, ci.half, TPB_VERDICT_TOL);
    if (isfinite(ci.half)) {
        v.lo = v.speedup * exp(-ci.half);
        v.hi = v.speedup * exp(ci.half);
    }
    return v;
}

/* What the use line says of its verdict against the runner-up. */
static const char *use_verdict_text(const tpb_policy_verdict_t *v)
{
    if (v->verdict == TPB_VERDICT_BETTER)
        return "sure";
    if (v->verdict == TPB_VERDICT_DRAW)
        return "a draw within 5 %, either will do";
    return v->looks > 0 ? "not sure: --budget measured as long as it could (the budget or its "
                          "looks ran out)"
                        : "not sure: measure longer (--iters, or --budget)";
}

/* Of two blocks, the one measured later (its set after the other's) and the other. */
static const tpb_history_t *later_of(const tpb_history_t *a, const tpb_history_t *b)
{
    return a->id > b->id ? a : b;
}

static const tpb_history_t *earlier_of(const tpb_history_t *a, const tpb_history_t *b)
{
    return a->id > b->id ? b : a;
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
        v = tpb_block_verdict(best, next, thr);
        tpb_buf_printf(txt, "; %.2fx tp %d's [%.2f, %.2f]", v.speedup, next->tp, v.lo, v.hi);
        if (v.looks > 0)
            tpb_buf_printf(txt, " at %.2f %% (--budget: %d look%s of tp %d, measured after tp %d)",
                           100.0 * v.conf, v.looks, v.looks == 1 ? "" : "s",
                           later_of(best, next)->tp, earlier_of(best, next)->tp);
        tpb_buf_printf(txt, ": %s", use_verdict_text(&v));
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
    if (next && v.looks > 0) {
        tpb_json_kv_num(js, "confidence", v.conf);
        tpb_json_kv_int(js, "budget_looks", v.looks);
        tpb_json_kv_int(js, "measured_after_tp", earlier_of(best, next)->tp);
    }
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

/* The picks (pick[k], k >= 1) with the shortest step and the runner-up by step (*next; NULL
 * with one pick). */
static const tpb_history_t *latency_pair(const tpb_history_t *const *pick, int k,
                                         const tpb_history_t **next)
{
    const tpb_history_t *lat = pick[0];
    for (int j = 1; j < k; j++)
        if (pick[j]->step_med < lat->step_med)
            lat = pick[j];
    *next = NULL;
    for (int j = 0; j < k; j++)
        if (pick[j] != lat && (!*next || pick[j]->step_med < (*next)->step_med))
            *next = pick[j];
    return lat;
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
    const tpb_history_t *lat2 = NULL, *lat = latency_pair(pick, k, &lat2);
    use_line(use, js, lat, lat2, 0);
}

void tpb_answer_block(tpb_buf_t *txt, tpb_buf_t *js, const tpb_history_t *blocks, int n)
{
    if (n == 0)
        return;
    tpb_buf_t use = TPB_BUF_INIT;
    tpb_buf_puts(txt, "# blocks (--block: the GEMMs back to back as one step; tokens/s per rank "
                      "= M / (tp x median step), each group turning M tokens a step; a policy "
                      "over even with its 95 % interval, the use lines against the runner-up; "
                      "under --budget each at the level its looks allow)\n");
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

/* The widest half-width (log) of the units' own block steps, each at its look's level. */
static double widest_half(const tpb_history_t *cur, int k)
{
    double w = 0.0;
    for (int u = 0; u < k; u++)
        w = fmax(w, tpb_interval_median_half_at(cur[u].steps, (size_t)cur[u].nsteps,
                                                tpb_verdict_conf(cur[u].looks)));
    return w;
}

int tpb_answer_block_open(const tpb_history_t *blocks, int n, const tpb_history_t *cur, int k,
                          int degrees, tpb_block_open_t *out)
{
    *out = (tpb_block_open_t){.thr = -1};
    tpb_history_t *all = malloc((size_t)(n + k) * sizeof(*all));
    const tpb_history_t **pick = malloc((size_t)(n + k) * sizeof(*pick));
    if (!all || !pick || k < 1) { /* no memory: nothing decided, nothing asked for */
        free(all);
        free(pick);
        return 0;
    }
    if (n > 0) /* blocks may be NULL before the first */
        memcpy(all, blocks, (size_t)n * sizeof(*all));
    memcpy(all + n, cur, (size_t)k * sizeof(*all));
    const tpb_history_t *g = &all[n];
    int np = ranked(all, n + k, g, pick);
    for (int thr = 1; thr >= 0 && np > 1 && (out->thr < 0 || out->futile); thr--) {
        const tpb_history_t *next = pick[1], *best = thr ? pick[0] : latency_pair(pick, np, &next);
        tpb_policy_verdict_t v = tpb_block_verdict(best, next, thr);
        if (v.verdict != TPB_VERDICT_INCONCLUSIVE || (best->tp != g->tp && next->tp != g->tp))
            continue; /* decided, or the set's degree not in it: more of it changes nothing */
        /* the degree measured before, alone at this ratio: still inconclusive, more of this
         * set cannot decide it (its interval's half is the floor of the pair's) */
        const tpb_history_t *before = best->tp == g->tp ? next : best;
        double h = tpb_interval_median_half_at(before->steps, (size_t)before->nsteps, v.conf);
        int futile =
            tpb_interval_decide(1.0 / v.speedup, h, TPB_VERDICT_TOL) == TPB_VERDICT_INCONCLUSIVE;
        if (out->thr >= 0 && futile)
            continue; /* a futile one found already: the first is said */
        *out = (tpb_block_open_t){.thr = thr,
                                  .futile = futile,
                                  .tp = best->tp,
                                  .other_tp = next->tp,
                                  .speedup = v.speedup,
                                  .lo = v.lo,
                                  .hi = v.hi,
                                  .conf = v.conf};
    }
    free(all);
    free(pick);
    out->half = widest_half(cur, k);
    out->imprecise = degrees > 1 && !(out->half <= TPB_BLOCK_HALF);
    return (out->thr >= 0 && !out->futile) || out->imprecise;
}
