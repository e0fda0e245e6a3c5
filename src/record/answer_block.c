/* answer_block.c - the closing answer for --block: per block and TP degree the fastest
 * policy with a weighted block's verdict over even, the TP degrees ranked by tokens per
 * second per rank, and what to use for throughput and for latency, each against the
 * runner-up with its interval (95 %, or under --budget the later block's look level); and
 * under --budget whether a block's set after a look may still decide the ranking. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/answer_model.h"
#include "record/verdict.h"

/* A block the answer may recommend: even, or a policy whose verdict over even is better. */
static int recommendable(const tpb_history_t *b, int n, const tpb_history_t *h)
{
    const tpb_history_t *ev = tpb_verdict_even_of(b, n, h);
    return h->policy == TPB_POLICY_EVEN || !ev ||
           tpb_verdict_of(ev, h, TPB_VERDICT_TOL).verdict == TPB_VERDICT_BETTER;
}

double tpb_block_tokens_rate(const tpb_history_t *h)
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
        for (; at > 0 && tpb_block_tokens_rate(pick[at - 1]) < tpb_block_tokens_rate(p); at--)
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

/* The items of a policy other than even at p's TP degree: its verdict over even. */
static void policies_at(tpb_block_answer_t *a, const tpb_history_t *b, int n,
                        const tpb_history_t *p)
{
    for (int i = 0; i < n; i++) {
        const tpb_history_t *h = &b[i], *ev = tpb_verdict_even_of(b, n, h);
        if (same_block(h, p) && h->tp == p->tp && ev && h->policy != TPB_POLICY_EVEN)
            a->pol[a->npol++] = (tpb_answer_policy_t){h, tpb_verdict_of(ev, h, TPB_VERDICT_TOL)};
    }
}

/* best against its runner-up next (NULL: none) by throughput (thr 1) or latency. */
static tpb_block_use_t block_use(const tpb_history_t *best, const tpb_history_t *next, int thr)
{
    tpb_block_use_t u = {.best = best, .next = next, .thr = thr};
    u.v = next ? tpb_block_verdict(best, next, thr)
               : (tpb_policy_verdict_t){.speedup = NAN, .lo = NAN, .hi = NAN};
    return u;
}

/* One block: per TP degree its pick and policies, the ranking, and the two use lines. */
static void block_build(tpb_block_answer_t *a, const tpb_history_t *b, int n,
                        const tpb_history_t *g)
{
    tpb_block_one_t *o = &a->blocks[a->nblocks++];
    *o = (tpb_block_one_t){.g = g, .tp0 = a->ntps, .rank0 = a->nrank};
    for (int i = 0; i < n; i++) {
        int first = same_block(&b[i], g);
        for (int j = 0; j < i && first; j++)
            first = !same_block(&b[j], g) || b[j].tp != b[i].tp;
        const tpb_history_t *p = first ? pick_at(b, n, &b[i]) : NULL;
        if (!p)
            continue;
        tpb_block_tp_t *t = &a->tps[a->ntps++];
        *t = (tpb_block_tp_t){.pick = p, .pol0 = a->npol};
        policies_at(a, b, n, p);
        t->npol = a->npol - t->pol0;
    }
    o->ntp = a->ntps - o->tp0;
    const tpb_history_t **pick = &a->rank[a->nrank];
    int k = ranked(b, n, g, pick);
    a->nrank += k;
    o->nrank = k;
    if (!k)
        return;
    o->thr = block_use(pick[0], k > 1 ? pick[1] : NULL, 1);
    const tpb_history_t *lat2 = NULL, *lat = latency_pair(pick, k, &lat2);
    o->lat = block_use(lat, lat2, 0);
}

int tpb_block_answer_build(tpb_block_answer_t *a, const tpb_history_t *blocks, int n)
{
    *a = (tpb_block_answer_t){0};
    if (n == 0)
        return 0;
    size_t m = (size_t)n;
    a->blocks = calloc(m, sizeof(*a->blocks));
    a->tps = calloc(m, sizeof(*a->tps));
    a->pol = calloc(m, sizeof(*a->pol));
    a->rank = calloc(m, sizeof(*a->rank));
    if (!a->blocks || !a->tps || !a->pol || !a->rank) {
        tpb_block_answer_free(a);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        int seen = 0;
        for (int j = 0; j < i && !seen; j++)
            seen = same_block(&blocks[j], &blocks[i]);
        if (!seen)
            block_build(a, blocks, n, &blocks[i]);
    }
    return 0;
}

void tpb_block_answer_free(tpb_block_answer_t *a)
{
    free(a->blocks);
    free(a->tps);
    free(a->pol);
    free(a->rank);
    *a = (tpb_block_answer_t){0};
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
