/* repeat_use.c - --repeat's verdicts and use lines over the passes (record/repeat.h): a
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
#include <stdio.h>
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

static const char *sure_word(const tpb_repeat_cfg_t *pick, const tpb_passes_ratio_t *pr, double lo)
{
    if (pr->n < 1 || !isfinite(pr->half))
        return "not enough data";
    if (pick->block)
        return pr->verdict == TPB_VERDICT_BETTER ? "sure"
               : pr->verdict == TPB_VERDICT_DRAW ? "a draw within 5 %, either will do"
                                                 : "not sure";
    return lo > 1.0 ? "sure" : "not sure";
}

/* The use line of c's shape for one question (thr: throughput) and its JSON object; part: a
 * --block run's GEMM, said as a part of the block ("# part SHAPE alone ..."). */
static void use_over(const tpb_repeat_t *r, const tpb_repeat_cfg_t *c, int thr, int part,
                     tpb_buf_t *txt, tpb_buf_t *js)
{
    const tpb_repeat_cfg_t *pick = best_of(r, c, NULL, thr);
    if (!pick)
        return;
    const tpb_repeat_cfg_t *next = best_of(r, c, pick, thr);
    double g = mid_step(r, pick);
    char what[160], fig[64];
    if (pick->block)
        snprintf(what, sizeof(what), "block %s", pick->key.shape_name);
    else
        snprintf(what, sizeof(what), "%ldx%ldx%ld%s%s", pick->key.m, pick->key.n, pick->key.k,
                 pick->key.shape_name[0] ? " " : "", pick->key.shape_name);
    if (thr && pick->block)
        snprintf(fig, sizeof(fig), "%.0f tokens/s per rank",
                 pick->key.m / (pick->key.tp * g * 1e-6));
    else if (thr)
        snprintf(fig, sizeof(fig), "%.0f layers/s over %d ranks",
                 (double)(r->world / pick->key.tp) / (g * 1e-6), r->world);
    else {
        char step[24];
        snprintf(fig, sizeof(fig), "%s a step", tpb_human_us(step, sizeof(step), g));
    }
    tpb_buf_printf(txt, "# %s %s%s over %d passes, %s: %s at tp %d%s (%s, the passes' median)\n",
                   part ? "part" : "use for", what, part ? " alone" : "", r->done,
                   thr ? (pick->block ? "highest tokens/s per rank (throughput)"
                                      : "highest layer rate (throughput)")
                       : "shortest step (latency)",
                   pick->block ? tpb_policy_name(pick->key.policy)
                               : tpb_config_key_label(&pick->key),
                   pick->key.tp, pick->key.placement == TPB_PLACE_SPREAD ? " spread" : "", fig);
    tpb_json_obj_begin(js);
    tpb_json_kv_str(js, "kind", pick->block ? "block_use" : "use");
    tpb_json_kv_str(js, "question", thr ? "throughput" : "latency");
    tpb_config_key_json(js, &pick->key, TPB_KEY_ALL);
    tpb_json_kv_num(js, "step_us", g);
    if (pick->block) { /* the keys of one run's block_use, and its name as "block" */
        tpb_json_kv_str(js, "block", pick->key.shape_name);
        tpb_json_kv_num(js, "tokens_per_s_rank", pick->key.m / (pick->key.tp * g * 1e-6));
    } else
        tpb_json_kv_num(js, "layers_per_s", (double)(r->world / pick->key.tp) / (g * 1e-6));
    tpb_json_kv_int(js, "passes", r->done);
    if (next) {
        tpb_passes_ratio_t pr = against(r, pick, next, thr);
        double m = 1.0 / pr.ratio, lo = m * exp(-pr.half), hi = m * exp(pr.half);
        const char *sure = sure_word(pick, &pr, lo);
        tpb_buf_printf(txt, "#     %s: %s, %.2fx [%.2f, %.2f] over the next, %s at tp %d (%s)\n",
                       thr ? "highest rate" : "shortest step", sure, m, lo, hi,
                       next->block ? tpb_policy_name(next->key.policy)
                                   : tpb_config_key_label(&next->key),
                       next->key.tp,
                       pr.n < 2     ? "one pass with both"
                       : pr.by_pass ? "a pass as the unit: the passes disagree more than their "
                                      "intervals"
                                    : "the passes pooled: they agree within their intervals");
        tpb_json_kv_str(js, "sure", sure);
        tpb_json_kv_str(js, "runner_up", tpb_config_key_label(&next->key));
        tpb_json_kv_int(js, "runner_up_tp", next->key.tp);
        tpb_json_kv_num(js, "margin", m);
        tpb_json_kv_num(js, "margin_lo", lo);
        tpb_json_kv_num(js, "margin_hi", hi);
        tpb_json_kv_int(js, "passes_used", pr.n);
        tpb_json_kv_str(js, "rule", pr.by_pass ? "by_pass" : "pooled");
        if (pick->block) { /* one run's block_use keys: the pick over the runner-up */
            tpb_json_kv_num(js, "over_runner_up", m);
            tpb_json_kv_num(js, "over_runner_up_lo", lo);
            tpb_json_kv_num(js, "over_runner_up_hi", hi);
            tpb_json_kv_str(js, "verdict", isfinite(pr.half) ? tpb_verdict_name(pr.verdict) : NULL);
        }
    }
    tpb_json_obj_end(js);
}

void tpb_repeat_use(const tpb_repeat_t *r, tpb_buf_t *txt, tpb_buf_t *js)
{
    int blocks = 0;
    for (int i = 0; i < r->nc; i++)
        blocks |= r->c[i].block;
    tpb_json_key(js, "use");
    tpb_json_arr_begin(js);
    for (int want_block = 0; want_block < 2; want_block++) /* a block's answer last */
        for (int i = 0; i < r->nc; i++) { /* each shape (block) once, in the order measured */
            const tpb_repeat_cfg_t *c = &r->c[i];
            int seen = c->key.comm_only || c->block != want_block;
            for (int j = 0; j < i && !seen; j++)
                seen = same_use(&r->c[j], c);
            if (seen)
                continue;
            use_over(r, c, 0, blocks && !c->block, txt, js);
            use_over(r, c, 1, blocks && !c->block, txt, js);
        }
    tpb_json_arr_end(js);
}
