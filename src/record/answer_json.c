/* answer_json.c - the answer model (record/answer_model.h) as the JSON summary's answer
 * items: per shape its groups ("kind":"tp", with their policies and stragglers) and its use
 * lines ("kind":"use"), then the run's straggler per TP degree ("kind":"stragglers"). */
#include <math.h>

#include "record/answer_model.h"
#include "record/verdict.h"

static void policy_json(tpb_buf_t *js, const tpb_answer_policy_t *p)
{
    const tpb_policy_verdict_t *v = &p->v;
    tpb_json_obj_begin(js);
    tpb_config_key_json(js, &p->h->key, TPB_KEY_CHOICE);
    tpb_json_kv_num(js, "speedup", v->speedup);
    tpb_json_kv_num(js, "speedup_lo", v->lo);
    tpb_json_kv_num(js, "speedup_hi", v->hi);
    tpb_json_kv_num(js, "speedup_bound", v->bound);
    tpb_json_kv_str(js, "verdict", tpb_verdict_name(v->verdict));
    tpb_json_kv_str(js, "paired", v->paired ? "yes" : "no");
    tpb_json_kv_int(js, "rounds", v->rounds);
    tpb_verdict_looks_json(js, v);
    tpb_json_kv_num(js, "tolerance", TPB_VERDICT_TOL);
    tpb_json_kv_num(js, "predicted_speedup", p->h->predicted_speedup);
    tpb_json_kv_str(js, "lost", v->verdict == TPB_VERDICT_WORSE ? "yes" : "no");
    tpb_json_obj_end(js);
}

static const char *late_name(tpb_late_t late)
{
    switch (late) {
    case TPB_LATE_PERSISTENT: return "persistent";
    case TPB_LATE_TRANSIENT: return "transient";
    case TPB_LATE_UNDECIDED: break;
    }
    return "not enough data";
}

static void straggler_json(tpb_buf_t *js, const tpb_answer_straggler_t *s)
{
    const tpb_history_t *h = s->h;
    tpb_json_obj_begin(js);
    tpb_config_key_json(js, &h->key, TPB_KEY_CHOICE);
    tpb_json_kv_int(js, "rank", h->straggler_world);
    tpb_json_kv_num(js, "last_frac", h->straggler_frac);
    tpb_json_kv_num(js, "lateness_us", h->straggler_late_us);
    tpb_json_kv_str(js, "persistent", s->late == TPB_LATE_PERSISTENT ? "yes" : "no");
    tpb_json_kv_str(js, "verdict", late_name(s->late));
    tpb_json_obj_end(js);
}

static void group_keys(tpb_buf_t *js, const tpb_history_t *h)
{
    tpb_config_key_json(js, &h->key,
                        TPB_KEY_SHAPE | TPB_KEY_SIZES | TPB_KEY_TP | TPB_KEY_PLACEMENT);
}

static void group_json(tpb_buf_t *js, const tpb_answer_t *a, const tpb_answer_group_t *g)
{
    tpb_json_obj_begin(js);
    tpb_json_kv_str(js, "kind", "tp");
    group_keys(js, g->first);
    tpb_config_key_json_as(js, "best_", &g->best->key, TPB_KEY_CHOICE);
    tpb_json_kv_num(js, "best_step_us", g->best->step_med);
    tpb_json_key(js, "policies");
    tpb_json_arr_begin(js);
    for (int i = 0; i < g->npol; i++)
        policy_json(js, &a->pol[g->pol0 + i]);
    tpb_json_arr_end(js);
    tpb_json_key(js, "stragglers");
    tpb_json_arr_begin(js);
    for (int i = 0; i < g->nstr; i++)
        straggler_json(js, &a->str[g->str0 + i]);
    tpb_json_arr_end(js);
    tpb_json_obj_end(js);
}

static void use_json(tpb_buf_t *js, const tpb_history_t *h, const char *question,
                     const tpb_pick_t *pick)
{
    tpb_json_obj_begin(js);
    tpb_json_kv_str(js, "kind", "use");
    tpb_json_kv_str(js, "question", question);
    group_keys(js, h);
    tpb_config_key_json(js, &h->key, TPB_KEY_CHOICE);
    tpb_json_kv_num(js, "step_us", h->step_med);
    tpb_json_kv_num(js, "layers_per_s", tpb_answer_layer_rate(h));
    tpb_answer_pick_json(js, pick);
    tpb_json_obj_end(js);
}

static void tp_json(tpb_buf_t *js, const tpb_answer_tp_t *t)
{
    const tpb_persistent_t *p = &t->p;
    tpb_json_obj_begin(js);
    tpb_json_kv_str(js, "kind", "stragglers");
    tpb_config_key_json(js, &t->first->key, TPB_KEY_TP);
    tpb_json_kv_num(js, "straggler_rank", p->persistent ? p->rank : NAN); /* null: none */
    tpb_json_kv_str(js, "verdict",
                    p->persistent             ? "persistent"
                    : tpb_answer_decidable(p) ? "none"
                                              : "not enough data");
    tpb_json_kv_int(js, "most_often_slowest", p->rank);
    tpb_json_kv_int(js, "slowest_blocks", p->slowest);
    tpb_json_kv_int(js, "blocks", p->of);
    tpb_json_kv_int(js, "blocks_needed", p->need);
    tpb_json_kv_int(js, "effective_blocks", p->effective);
    tpb_json_kv_num(js, "false_alarm", p->alpha);
    tpb_json_kv_num(js, "deficit", p->deficit);
    tpb_json_kv_num(js, "detectable", p->detectable);
    tpb_json_obj_end(js);
}

void tpb_answer_json(tpb_buf_t *js, const tpb_answer_t *a)
{
    for (int s = 0; s < a->nshapes; s++) {
        const tpb_answer_shape_t *sh = &a->shapes[s];
        for (int g = sh->g0; g < sh->g1; g++)
            group_json(js, a, &a->groups[g]);
        use_json(js, sh->best, "latency", &sh->lat);
        use_json(js, sh->thr, "throughput", &sh->tput);
    }
    for (int i = 0; i < a->ntps; i++)
        tp_json(js, &a->tps[i]);
}

/* ---- a --block run's blocks ---- */

static void block_policy_json(tpb_buf_t *js, const tpb_answer_policy_t *p)
{
    const tpb_policy_verdict_t *v = &p->v;
    tpb_json_obj_begin(js);
    tpb_json_kv_str(js, "kind", "block_policy");
    tpb_json_kv_str(js, "block", p->h->shape_name);
    tpb_config_key_json(js, &p->h->key, TPB_KEY_TP | TPB_KEY_POLICY);
    tpb_json_kv_num(js, "speedup", v->speedup);
    tpb_json_kv_num(js, "speedup_lo", v->lo);
    tpb_json_kv_num(js, "speedup_hi", v->hi);
    tpb_json_kv_num(js, "speedup_bound", v->bound);
    tpb_json_kv_str(js, "verdict", tpb_verdict_name(v->verdict));
    tpb_verdict_looks_json(js, v);
    tpb_json_obj_end(js);
}

static void block_use_json(tpb_buf_t *js, const tpb_block_use_t *u)
{
    const tpb_history_t *best = u->best, *next = u->next;
    tpb_json_obj_begin(js);
    tpb_json_kv_str(js, "kind", "block_use");
    tpb_json_kv_str(js, "question", u->thr ? "throughput" : "latency");
    tpb_json_kv_str(js, "block", best->shape_name);
    tpb_config_key_json(js, &best->key, TPB_KEY_BLOCK);
    tpb_json_kv_num(js, "step_us", best->step_med);
    tpb_json_kv_num(js, "tokens_per_s_rank", tpb_block_tokens_rate(best));
    tpb_json_kv_num(js, "runner_up_tp", next ? next->tp : NAN);
    tpb_json_kv_num(js, "over_runner_up", u->v.speedup);
    tpb_json_kv_num(js, "over_runner_up_lo", u->v.lo);
    tpb_json_kv_num(js, "over_runner_up_hi", u->v.hi);
    tpb_json_kv_str(js, "verdict", next ? tpb_verdict_name(u->v.verdict) : NULL);
    if (next && u->v.looks > 0) {
        tpb_json_kv_num(js, "confidence", u->v.conf);
        tpb_json_kv_int(js, "budget_looks", u->v.looks);
        tpb_json_kv_int(js, "measured_after_tp", (best->id > next->id ? next : best)->tp);
    }
    tpb_json_obj_end(js);
}

void tpb_block_answer_json(tpb_buf_t *js, const tpb_block_answer_t *a)
{
    for (int b = 0; b < a->nblocks; b++) {
        const tpb_block_one_t *o = &a->blocks[b];
        for (int t = o->tp0; t < o->tp0 + o->ntp; t++)
            for (int i = a->tps[t].pol0; i < a->tps[t].pol0 + a->tps[t].npol; i++)
                block_policy_json(js, &a->pol[i]);
        if (o->nrank) {
            block_use_json(js, &o->thr);
            block_use_json(js, &o->lat);
        }
    }
}

/* ---- --overlap chunked ---- */

static void overlap_json(tpb_buf_t *js, const tpb_overlap_line_t *l)
{
    const tpb_history_t *best = l->best;
    tpb_json_obj_begin(js);
    tpb_json_kv_str(js, "kind", "overlap");
    tpb_config_key_json(js, &best->key,
                        TPB_KEY_SIZES | TPB_KEY_TP | TPB_KEY_PLACEMENT | TPB_KEY_CHOICE);
    tpb_json_kv_int(js, "best_chunks", best->chunks);
    tpb_json_kv_num(js, "speedup", l->speedup);
    tpb_json_kv_num(js, "speedup_vs_serial_config", best->speedup);
    tpb_json_kv_str(js, "pays", l->verdict == TPB_OVERLAP_PAYS ? "yes" : "no");
    tpb_json_kv_str(js, "reason", tpb_overlap_why_text(l->verdict));
    tpb_json_obj_end(js);
}

void tpb_overlap_answer_json(tpb_buf_t *js, const tpb_overlap_answer_t *a)
{
    for (int i = 0; i < a->nlines; i++)
        overlap_json(js, &a->lines[i]);
}
