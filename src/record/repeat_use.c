/* repeat_use.c - --repeat's answer over the passes decided as data (record/repeat.h
 * tpb_repeat_answer_t; repeat_render.c writes it): the configs' pass-to-pass spread, the
 * persistent straggler per TP degree over the passes, and the verdicts and use lines: a
 * policy's ratio over even combined over the passes; per shape, and per
 * block, the config to use for latency (the shortest step) and for throughput (the highest
 * rate: layers per second over the world, a block's tokens per second per rank), among the
 * configs the answer may recommend at the passes' level (even, TP 1, or a policy whose
 * verdict over even over the passes is better), by the median of the passes' median
 * steps; and how sure against the runner-up: each pass's ratio of the two medians with its
 * interval (the medians' half-widths in quadrature, as tpb_interval_ratio), combined over
 * the passes as a policy's verdict is (base/passes.h). A GEMM's pick is sure where the whole
 * interval favours it, a block's where it is better beyond 5 %, as in one run's answer. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/stats.h"
#include "record/repeat.h"

/* A policy's ratio over even combined over the passes (record/repeat.h): here, since both
 * the verdict lines (repeat.c) and the use lines below read it. */
tpb_passes_ratio_t tpb_repeat_over_even(const tpb_repeat_t *r, const tpb_repeat_cfg_t *c,
                                        int *disturbed_out, int *measured_out,
                                        tpb_verdict_t *verdict)
{
    double ratio[TPB_PASSES_MAX] = {0}, half[TPB_PASSES_MAX] = {0}, conf[TPB_PASSES_MAX] = {0};
    int n = 0, disturbed = 0, measured = 0;
    for (int p = 0; p < r->done; p++) {
        const tpb_policy_verdict_t *v = &c->v[p];
        if (!(v->speedup > 0.0))
            continue;
        measured++;
        if (v->verdict == TPB_VERDICT_DISTURBED) { /* not measured alike: left out */
            disturbed++;
            continue;
        }
        ratio[n] = 1.0 / v->speedup;
        half[n] = v->lo > 0.0 && isfinite(v->hi) ? 0.5 * log(v->hi / v->lo) : INFINITY;
        conf[n] = v->conf > 0.0 ? v->conf : 0.95;
        n++;
    }
    tpb_passes_ratio_t pr = tpb_passes_ratio(ratio, half, conf, n, TPB_VERDICT_TOL);
    *verdict = 2 * disturbed > measured ? TPB_VERDICT_DISTURBED : pr.verdict;
    *disturbed_out = disturbed, *measured_out = measured;
    return pr;
}

/* a and b answer one question together: the same shape (a block: the same block). */
static int same_use(const tpb_repeat_cfg_t *a, const tpb_repeat_cfg_t *b)
{
    unsigned mask = TPB_KEY_SIZES | TPB_KEY_SHAPE;
    if (a->block)
        mask |= TPB_KEY_VARIANT | TPB_KEY_PLACEMENT;
    return a->block == b->block && !a->key.comm_only && !b->key.comm_only &&
           tpb_config_key_same(&a->key, &b->key, mask);
}

/* The median of c's passes' median steps, us (NaN: none): one disturbed pass of three moves
 * it less than a mean; tpbal-plan pools runs by the same rule. */
static double mid_step(const tpb_repeat_t *r, const tpb_repeat_cfg_t *c)
{
    double v[TPB_PASSES_MAX];
    int n = 0;
    for (int p = 0; p < r->done; p++)
        if (c->step[p] > 0.0 && isfinite(c->step[p]))
            v[n++] = c->step[p];
    return n ? tpb_stats_median(v, (size_t)n) : NAN;
}

/* A pass's cost of c for the question: its step, or for throughput its step x tp (the
 * world / tp groups at once, a block's tokens per rank: either rate is 1 / (tp x step)). */
static double cost(const tpb_repeat_cfg_t *c, double step, int thr)
{
    return thr ? step * c->key.tp : step;
}

static int recommendable(const tpb_repeat_t *r, const tpb_repeat_cfg_t *c)
{
    if (c->key.policy == TPB_POLICY_EVEN || c->key.tp == 1 || !c->has_v)
        return 1;
    int disturbed, measured;
    tpb_verdict_t v;
    tpb_repeat_over_even(r, c, &disturbed, &measured, &v);
    return v == TPB_VERDICT_BETTER;
}

/* The recommendable config of c's shape with the lowest cost, but `not` (NULL: none). */
static const tpb_repeat_cfg_t *best_of(const tpb_repeat_t *r, const tpb_repeat_cfg_t *c,
                                       const tpb_repeat_cfg_t * not, int thr)
{
    const tpb_repeat_cfg_t *b = NULL;
    for (int i = 0; i < r->nc; i++) {
        const tpb_repeat_cfg_t *x = &r->c[i];
        double g = mid_step(r, x);
        if (x == not || !same_use(x, c) || !isfinite(g) || !recommendable(r, x) ||
            (not &&x->key.tp == 1 && not ->key.tp == 1)) /* at TP 1 the split changes nothing */
            continue;
        if (!b || cost(x, g, thr) < cost(b, mid_step(r, b), thr))
            b = x;
    }
    return b;
}

/* The pick's cost over the runner-up's, pass by pass, combined. */
static tpb_passes_ratio_t against(const tpb_repeat_t *r, const tpb_repeat_cfg_t *pick,
                                  const tpb_repeat_cfg_t *next, int thr)
{
    double ratio[TPB_PASSES_MAX], half[TPB_PASSES_MAX], conf[TPB_PASSES_MAX];
    int n = 0;
    for (int p = 0; p < r->done; p++) {
        if (!(pick->step[p] > 0.0) || !(next->step[p] > 0.0))
            continue;
        ratio[n] = cost(pick, pick->step[p], thr) / cost(next, next->step[p], thr);
        half[n] = sqrt(pick->half[p] * pick->half[p] + next->half[p] * next->half[p]);
        conf[n++] = 0.95;
    }
    return tpb_passes_ratio(ratio, half, conf, n, TPB_VERDICT_TOL);
}

static tpb_sure_t sure_of(const tpb_repeat_cfg_t *pick, const tpb_passes_ratio_t *pr, double lo)
{
    if (pr->n < 1 || !isfinite(pr->half))
        return TPB_SURE_NO_DATA;
    if (pick->block)
        return pr->verdict == TPB_VERDICT_BETTER ? TPB_SURE_YES
               : pr->verdict == TPB_VERDICT_DRAW ? TPB_SURE_DRAW
                                                 : TPB_SURE_NOT;
    return lo > 1.0 ? TPB_SURE_YES : TPB_SURE_NOT;
}

/* The use line of c's shape for one question (thr: throughput), if it has a pick; part: a
 * --block run's GEMM, said as a part of the block. */
static void use_over(tpb_repeat_answer_t *a, const tpb_repeat_cfg_t *c, int thr, int part)
{
    const tpb_repeat_t *r = a->r;
    const tpb_repeat_cfg_t *pick = best_of(r, c, NULL, thr);
    if (!pick)
        return;
    tpb_repeat_use_t *u = &a->u[a->nu++];
    *u = (tpb_repeat_use_t){.pick = pick,
                            .next = best_of(r, c, pick, thr),
                            .thr = thr,
                            .part = part,
                            .step = mid_step(r, pick)};
    if (u->next) {
        u->pr = against(r, pick, u->next, thr);
        u->margin = 1.0 / u->pr.ratio;
        u->lo = u->margin * exp(-u->pr.half);
        u->hi = u->margin * exp(u->pr.half);
        u->sure = sure_of(pick, &u->pr, u->lo);
    }
}

/* Per shape (then per block: a block's answer last), each once in the order measured. */
static void uses_build(tpb_repeat_answer_t *a)
{
    const tpb_repeat_t *r = a->r;
    int blocks = 0;
    for (int i = 0; i < r->nc; i++)
        blocks |= r->c[i].block;
    for (int want_block = 0; want_block < 2; want_block++)
        for (int i = 0; i < r->nc; i++) {
            const tpb_repeat_cfg_t *c = &r->c[i];
            int seen = c->key.comm_only || c->block != want_block;
            for (int j = 0; j < i && !seen; j++)
                seen = same_use(&r->c[j], c);
            if (seen)
                continue;
            use_over(a, c, 0, blocks && !c->block);
            use_over(a, c, 1, blocks && !c->block);
        }
}

/* The configs' pass-to-pass spreads: their median and the most. */
static int spread_build(tpb_repeat_answer_t *a)
{
    const tpb_repeat_t *r = a->r;
    double *s = malloc(((size_t)r->nc + 1) * sizeof(*s)), worst = NAN;
    if (!s)
        return -1;
    int k = 0, at = -1;
    for (int i = 0; i < r->nc; i++) {
        double v = tpb_passes_spread(r->c[i].step, r->done);
        if (!isfinite(v) || r->done < 2)
            continue;
        s[k++] = v;
        if (!(v <= worst))
            worst = v, at = i;
    }
    a->spread_mid = tpb_stats_median(s, (size_t)k);
    a->spread_worst = worst, a->spread_n = k, a->spread_at = at;
    free(s);
    return 0;
}

static void verdicts_build(tpb_repeat_answer_t *a)
{
    const tpb_repeat_t *r = a->r;
    for (int i = 0; i < r->nc; i++) {
        if (!r->c[i].has_v)
            continue;
        tpb_repeat_verdict_t *v = &a->v[a->nv++];
        *v = (tpb_repeat_verdict_t){.c = &r->c[i]};
        v->pr = tpb_repeat_over_even(r, v->c, &v->disturbed, &v->measured, &v->verdict);
        v->speedup = 1.0 / v->pr.ratio;
        v->lo = v->speedup * exp(-v->pr.half);
        v->hi = v->speedup * exp(v->pr.half);
    }
}

int tpb_repeat_answer_build(tpb_repeat_answer_t *a, const tpb_repeat_t *r)
{
    *a = (tpb_repeat_answer_t){.r = r};
    size_t m = (size_t)r->nc + 1;
    a->v = calloc(m, sizeof(*a->v));
    a->s = calloc((size_t)r->nt + 1, sizeof(*a->s));
    a->u = calloc(2 * m, sizeof(*a->u));
    if (!a->v || !a->s || !a->u || spread_build(a) != 0) {
        tpb_repeat_answer_free(a);
        return -1;
    }
    verdicts_build(a);
    for (a->ns = 0; a->ns < r->nt; a->ns++)
        a->s[a->ns] = tpb_passes_straggler(r->t[a->ns].p, r->done, r->t[a->ns].tp);
    uses_build(a);
    return 0;
}

void tpb_repeat_answer_free(tpb_repeat_answer_t *a)
{
    free(a->v);
    free(a->s);
    free(a->u);
    *a = (tpb_repeat_answer_t){.r = a->r};
}
