/* repeat_render.c - --repeat's answer over the passes (record/repeat.h tpb_repeat_answer_t,
 * decided in repeat_use.c) as the terminal's '#' lines and repeat.json's members, from the
 * same values. */
#include <math.h>
#include <stdio.h>

#include "record/repeat.h"

/* "384x768x1024 tp 2 row weighted" (a block: its name). */
static void label(char *out, size_t cap, const tpb_repeat_cfg_t *c)
{
    if (c->block)
        snprintf(out, cap, "block %s tp %d %s", c->key.shape_name, c->key.tp,
                 tpb_policy_name(c->key.policy));
    else if (c->key.comm_only)
        snprintf(out, cap, "comm-only %s %ldx%ldx%ld tp %d", tpb_split_name(c->key.split), c->key.m,
                 c->key.n, c->key.k, c->key.tp);
    else
        snprintf(out, cap, "%ldx%ldx%ld%s%s tp %d %s", c->key.m, c->key.n, c->key.k,
                 c->key.shape_name[0] ? " " : "", c->key.shape_name, c->key.tp,
                 tpb_config_key_label(&c->key));
}

/* The configs' pass-to-pass spreads: the line. */
static void spread_text(const tpb_repeat_answer_t *a, tpb_buf_t *txt)
{
    if (!a->spread_n)
        return;
    char l[160];
    label(l, sizeof(l), &a->r->c[a->spread_at]);
    tpb_buf_printf(txt,
                   "#   run to run: a config's median step moved by %.1f %% from pass to "
                   "pass (the median of %d configs' SD of log step; the most %.1f %%, %s)\n",
                   100.0 * a->spread_mid, a->spread_n, 100.0 * a->spread_worst, l);
}

/* One policy's verdict over the passes: the line. */
static void verdict_text(const tpb_repeat_verdict_t *v, tpb_buf_t *txt)
{
    const tpb_passes_ratio_t *pr = &v->pr;
    char l[160], rule[160];
    label(l, sizeof(l), v->c);
    if (pr->n < 2)
        snprintf(rule, sizeof(rule), "%d pass%s with an interval", pr->n, pr->n == 1 ? "" : "es");
    else if (pr->by_pass)
        snprintf(rule, sizeof(rule),
                 "a pass as the unit: they disagree more than their intervals (Q %.1f on %d "
                 "df), %.1f %% apart",
                 pr->q, pr->n - 1, 100.0 * pr->spread);
    else
        snprintf(rule, sizeof(rule),
                 "%d passes pooled: they agree within their intervals "
                 "(Q %.1f on %d df)",
                 pr->n, pr->q, pr->n - 1);
    if (pr->n > 0)
        tpb_buf_printf(txt, "#   %s over even: %.3gx [%.3g, %.3g] %s, %s", l, v->speedup, v->lo,
                       v->hi, tpb_verdict_name(v->verdict), rule);
    else /* every pass disturbed, or none measured it */
        tpb_buf_printf(txt, "#   %s over even: %s, no pass with an interval", l,
                       tpb_verdict_name(v->verdict));
    if (v->disturbed)
        tpb_buf_printf(txt, "; %d of %d passes disturbed, left out", v->disturbed, v->measured);
    tpb_buf_puts(txt, "\n");
}

/* One TP degree's straggler over the passes: the line. */
static void straggler_text(const tpb_repeat_t *r, int tp, const tpb_passes_straggler_t *s,
                           tpb_buf_t *txt)
{
    switch (s->verdict) {
    case TPB_PASSES_PERSISTENT:
        tpb_buf_printf(txt,
                       "#   straggler at tp %d: rank %d, persistent over the passes: the slowest "
                       "most often in %d of %d, in %d of %d windows pooled (%d needed: chance "
                       "alone names one at most once in 100 runs), %.1f %% slower\n",
                       tp, s->rank, s->named, r->done, s->count, s->blocks, s->need,
                       100.0 * s->deficit);
        break;
    case TPB_PASSES_TRANSIENT:
        tpb_buf_printf(txt,
                       "#   transient at tp %d: rank %d, the slowest most often in %d of %d "
                       "passes only (a slowdown of a pass, not the rank's)\n",
                       tp, s->rank, s->named, r->done);
        break;
    case TPB_PASSES_NONE:
        tpb_buf_printf(txt,
                       "#   no persistent straggler at tp %d over the passes (most often the "
                       "slowest: rank %d, in %d of %d windows pooled; %d needed)\n",
                       tp, s->rank, s->count, s->blocks, s->need);
        break;
    case TPB_PASSES_UNDECIDABLE:
        tpb_buf_printf(txt,
                       "#   no persistent straggler at tp %d: not enough data even over the "
                       "passes (%d windows; more --iters or passes)\n",
                       tp, s->blocks);
    }
}

static const char *sure_name(tpb_sure_t s)
{
    switch (s) {
    case TPB_SURE_NO_DATA: return "not enough data";
    case TPB_SURE_YES: return "sure";
    case TPB_SURE_DRAW: return "a draw within 5 %, either will do";
    case TPB_SURE_NOT: break;
    }
    return "not sure";
}

/* What the use line names: "SHAPE" or "block NAME". */
static void use_what(char *what, size_t cap, const tpb_repeat_cfg_t *pick)
{
    if (pick->block)
        snprintf(what, cap, "block %s", pick->key.shape_name);
    else
        snprintf(what, cap, "%ldx%ldx%ld%s%s", pick->key.m, pick->key.n, pick->key.k,
                 pick->key.shape_name[0] ? " " : "", pick->key.shape_name);
}

static double tokens_rate(const tpb_repeat_cfg_t *pick, double g)
{
    return pick->key.m / (pick->key.tp * g * 1e-6);
}

static double layer_rate(const tpb_repeat_t *r, const tpb_repeat_cfg_t *pick, double g)
{
    return (double)(r->world / pick->key.tp) / (g * 1e-6);
}

static void use_text(const tpb_repeat_t *r, const tpb_repeat_use_t *u, tpb_buf_t *txt)
{
    const tpb_repeat_cfg_t *pick = u->pick, *next = u->next;
    double g = u->step;
    char what[160], fig[64];
    use_what(what, sizeof(what), pick);
    if (u->thr && pick->block)
        snprintf(fig, sizeof(fig), "%.0f tokens/s per rank", tokens_rate(pick, g));
    else if (u->thr)
        snprintf(fig, sizeof(fig), "%.0f layers/s over %d ranks", layer_rate(r, pick, g), r->world);
    else {
        char step[24];
        snprintf(fig, sizeof(fig), "%s a step", tpb_human_us(step, sizeof(step), g));
    }
    tpb_buf_printf(txt, "# %s %s%s over %d passes, %s: %s at tp %d%s (%s, the passes' median)\n",
                   u->part ? "part" : "use for", what, u->part ? " alone" : "", r->done,
                   u->thr ? (pick->block ? "highest tokens/s per rank (throughput)"
                                         : "highest layer rate (throughput)")
                          : "shortest step (latency)",
                   pick->block ? tpb_policy_name(pick->key.policy)
                               : tpb_config_key_label(&pick->key),
                   pick->key.tp, pick->key.placement == TPB_PLACE_SPREAD ? " spread" : "", fig);
    if (!next)
        return;
    tpb_buf_printf(
        txt, "#     %s: %s, %.2fx [%.2f, %.2f] over the next, %s at tp %d (%s)\n",
        u->thr ? "highest rate" : "shortest step", sure_name(u->sure), u->margin, u->lo, u->hi,
        next->block ? tpb_policy_name(next->key.policy) : tpb_config_key_label(&next->key),
        next->key.tp,
        u->pr.n < 2     ? "one pass with both"
        : u->pr.by_pass ? "a pass as the unit: the passes disagree more than their "
                          "intervals"
                        : "the passes pooled: they agree within their intervals");
}

static void answer_text(const tpb_repeat_answer_t *a, tpb_buf_t *txt)
{
    const tpb_repeat_t *r = a->r;
    tpb_buf_printf(txt,
                   "# over %d of %d passes (each its own calibration and clock sync; 95 %% "
                   "intervals: doc/METRICS.md, \"Repeated passes\"):\n",
                   r->done, r->passes);
    spread_text(a, txt);
    for (int i = 0; i < a->nv; i++)
        verdict_text(&a->v[i], txt);
    for (int t = 0; t < a->ns; t++)
        straggler_text(r, r->t[t].tp, &a->s[t], txt);
    for (int i = 0; i < a->nu; i++)
        use_text(r, &a->u[i], txt);
}

/* ---- repeat.json's members ---- */

static void verdict_json(const tpb_repeat_t *r, const tpb_repeat_verdict_t *v, tpb_buf_t *js)
{
    const tpb_repeat_cfg_t *c = v->c;
    tpb_json_obj_begin(js);
    tpb_config_key_json(js, &c->key, TPB_KEY_ALL);
    tpb_json_kv_str(js, "kind", c->block ? "block" : "config");
    tpb_json_kv_num(js, "speedup", v->speedup);
    tpb_json_kv_num(js, "lo", v->lo);
    tpb_json_kv_num(js, "hi", v->hi);
    tpb_json_kv_num(js, "confidence", 0.95);
    tpb_json_kv_str(js, "verdict", tpb_verdict_name(v->verdict));
    tpb_json_kv_str(js, "rule", v->pr.by_pass ? "by_pass" : "pooled");
    tpb_json_kv_num(js, "q", v->pr.q);
    tpb_json_kv_num(js, "pass_spread", v->pr.spread);
    tpb_json_kv_int(js, "passes_used", v->pr.n);
    tpb_json_kv_int(js, "disturbed", v->disturbed);
    tpb_json_key(js, "per_pass");
    tpb_json_arr_begin(js);
    for (int p = 0; p < r->done; p++) {
        const tpb_policy_verdict_t *pv = &c->v[p];
        tpb_json_obj_begin(js);
        tpb_json_kv_num(js, "speedup", pv->speedup);
        tpb_json_kv_num(js, "lo", pv->lo);
        tpb_json_kv_num(js, "hi", pv->hi);
        tpb_json_kv_num(js, "confidence",
                        pv->speedup > 0.0 ? (pv->conf > 0 ? pv->conf : 0.95) : NAN);
        tpb_json_kv_str(js, "verdict", pv->speedup > 0.0 ? tpb_verdict_name(pv->verdict) : NULL);
        tpb_json_obj_end(js);
    }
    tpb_json_arr_end(js);
    tpb_json_obj_end(js);
}

static void straggler_json(const tpb_repeat_t *r, const tpb_repeat_tp_t *t,
                           const tpb_passes_straggler_t *s, tpb_buf_t *js)
{
    tpb_json_obj_begin(js);
    tpb_json_kv_int(js, "tp", t->tp);
    tpb_json_kv_num(js, "rank", s->rank >= 0 ? s->rank : NAN);
    tpb_json_kv_str(js, "verdict", tpb_passes_slow_name(s->verdict));
    tpb_json_kv_int(js, "named_in", s->named);
    tpb_json_kv_int(js, "persistent_in", s->flagged);
    tpb_json_kv_int(js, "slowest_blocks", s->count);
    tpb_json_kv_int(js, "blocks", s->blocks);
    tpb_json_kv_int(js, "blocks_needed", s->need);
    tpb_json_kv_num(js, "deficit", s->deficit);
    tpb_json_kv_num(js, "false_alarm", TPB_DETECT_ALPHA);
    tpb_json_key(js, "per_pass");
    tpb_json_arr_begin(js);
    for (int p = 0; p < r->done; p++) {
        tpb_json_obj_begin(js);
        tpb_json_kv_num(js, "rank", t->p[p].rank >= 0 ? t->p[p].rank : NAN);
        tpb_json_kv_int(js, "slowest_blocks", t->p[p].slowest);
        tpb_json_kv_int(js, "blocks", t->p[p].of);
        tpb_json_kv_str(js, "persistent", t->p[p].persistent ? "yes" : "no");
        tpb_json_obj_end(js);
    }
    tpb_json_arr_end(js);
    tpb_json_obj_end(js);
}

static void use_json(const tpb_repeat_t *r, const tpb_repeat_use_t *u, tpb_buf_t *js)
{
    const tpb_repeat_cfg_t *pick = u->pick, *next = u->next;
    double g = u->step;
    tpb_json_obj_begin(js);
    tpb_json_kv_str(js, "kind", pick->block ? "block_use" : "use");
    tpb_json_kv_str(js, "question", u->thr ? "throughput" : "latency");
    tpb_config_key_json(js, &pick->key, TPB_KEY_ALL);
    tpb_json_kv_num(js, "step_us", g);
    if (pick->block) { /* the keys of one run's block_use, and its name as "block" */
        tpb_json_kv_str(js, "block", pick->key.shape_name);
        tpb_json_kv_num(js, "tokens_per_s_rank", tokens_rate(pick, g));
    } else
        tpb_json_kv_num(js, "layers_per_s", layer_rate(r, pick, g));
    tpb_json_kv_int(js, "passes", r->done);
    if (next) {
        tpb_json_kv_str(js, "sure", sure_name(u->sure));
        tpb_json_kv_str(js, "runner_up", tpb_config_key_label(&next->key));
        tpb_json_kv_int(js, "runner_up_tp", next->key.tp);
        tpb_json_kv_num(js, "margin", u->margin);
        tpb_json_kv_num(js, "margin_lo", u->lo);
        tpb_json_kv_num(js, "margin_hi", u->hi);
        tpb_json_kv_int(js, "passes_used", u->pr.n);
        tpb_json_kv_str(js, "rule", u->pr.by_pass ? "by_pass" : "pooled");
        if (pick->block) { /* one run's block_use keys: the pick over the runner-up */
            tpb_json_kv_num(js, "over_runner_up", u->margin);
            tpb_json_kv_num(js, "over_runner_up_lo", u->lo);
            tpb_json_kv_num(js, "over_runner_up_hi", u->hi);
            tpb_json_kv_str(js, "verdict",
                            isfinite(u->pr.half) ? tpb_verdict_name(u->pr.verdict) : NULL);
        }
    }
    tpb_json_obj_end(js);
}

static void answer_json(const tpb_repeat_answer_t *a, tpb_buf_t *js)
{
    const tpb_repeat_t *r = a->r;
    tpb_json_key(js, "run_to_run");
    tpb_json_obj_begin(js);
    tpb_json_kv_num(js, "median_spread", a->spread_mid);
    tpb_json_kv_num(js, "max_spread", a->spread_worst);
    tpb_json_kv_int(js, "configs", a->spread_n);
    tpb_json_obj_end(js);
    tpb_json_key(js, "verdicts");
    tpb_json_arr_begin(js);
    for (int i = 0; i < a->nv; i++)
        verdict_json(r, &a->v[i], js);
    tpb_json_arr_end(js);
    tpb_json_key(js, "stragglers");
    tpb_json_arr_begin(js);
    for (int t = 0; t < a->ns; t++)
        straggler_json(r, &r->t[t], &a->s[t], js);
    tpb_json_arr_end(js);
    tpb_json_key(js, "use");
    tpb_json_arr_begin(js);
    for (int i = 0; i < a->nu; i++)
        use_json(r, &a->u[i], js);
    tpb_json_arr_end(js);
    tpb_json_key(js, "configs");
    tpb_json_arr_begin(js);
    for (int i = 0; i < r->nc; i++) {
        tpb_json_obj_begin(js);
        tpb_config_key_json(js, &r->c[i].key, TPB_KEY_ALL);
        tpb_json_kv_str(js, "kind", r->c[i].block ? "block" : "config");
        tpb_json_kv_nums(js, "step_us", r->c[i].step, (size_t)r->done);
        tpb_json_kv_num(js, "spread", r->done > 1 ? tpb_passes_spread(r->c[i].step, r->done) : NAN);
        tpb_json_obj_end(js);
    }
    tpb_json_arr_end(js);
}

void tpb_repeat_answer(const tpb_repeat_t *r, tpb_buf_t *txt, tpb_buf_t *js)
{
    tpb_repeat_answer_t a;
    if (tpb_repeat_answer_build(&a, r) != 0) {
        tpb_buf_puts(txt, "# over the passes: out of memory for the answer\n");
        return;
    }
    answer_text(&a, txt);
    answer_json(&a, js);
    tpb_repeat_answer_free(&a);
}
