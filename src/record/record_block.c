/* record_block.c - a --block's line in the table, its "block" record in results.jsonl and
 * what the answer keeps of it (record.h: tpb_record_block). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/block.h"
#include "base/interval.h"
#include "base/stats.h"
#include "record/record_impl.h"
#include "record/spill.h"
#include "record/verdict.h"

/* The recorded config of id, or NULL. */
static const tpb_history_t *config_of(const tpb_record_t *s, int id)
{
    for (int i = s->nhist - 1; i >= 0; i--)
        if (s->hist[i].id == id)
            return &s->hist[i];
    return NULL;
}

void tpb_block_history(const tpb_block_result_t *b, double step_med, tpb_history_t *h)
{
    *h = (tpb_history_t){.key = {.m = b->tokens},
                         .id = b->id,
                         .world = b->world,
                         .step_med = step_med,
                         .steps = (double *)b->steps,
                         .nsteps = b->iters,
                         .set = b->set,
                         .rounds = b->rounds,
                         .looks = b->looks,
                         .straggler_world = -1};
    tpb_config_key_take(&h->key, &b->key, TPB_KEY_BLOCK); /* its shape: tokens, name */
    snprintf(h->shape_name, sizeof(h->shape_name), "%s", b->name);
}

/* What the answer keeps of block b: its identity, steps and every rank's compute and work
 * summed over its GEMMs (the balance bound of a weighted block). */
static tpb_status_t push_block(tpb_record_t *s, const tpb_block_result_t *b,
                               const tpb_history_t *const *g, double step_med)
{
    if (s->nbhist == s->cap_bhist) {
        int cap = s->cap_bhist ? 2 * s->cap_bhist : 8;
        tpb_history_t *h = realloc(s->bhist, (size_t)cap * sizeof(*h));
        if (!h)
            return tpb_err_set(TPB_ERR_NOMEM, "out of memory for the blocks");
        s->bhist = h;
        s->cap_bhist = cap;
    }
    double *steps = malloc((size_t)b->iters * sizeof(double));
    double *comp = calloc((size_t)b->world, sizeof(double));
    double *work = calloc((size_t)b->world, sizeof(double));
    if (!steps || !comp || !work) {
        free(steps);
        free(comp);
        free(work);
        return tpb_err_set(TPB_ERR_NOMEM, "out of memory for the blocks");
    }
    memcpy(steps, b->steps, (size_t)b->iters * sizeof(double));
    for (int j = 0; j < b->ngemm; j++) {
        double *c = tpb_history_dup(g[j], TPB_HIST_COMPUTE),
               *w = tpb_history_dup(g[j], TPB_HIST_WORK);
        for (int r = 0; r < b->world; r++) { /* NaN: a GEMM without them (or unreadable) */
            comp[r] += c && g[j]->world == b->world ? c[r] : NAN;
            work[r] += w && g[j]->world == b->world ? w[r] : NAN;
        }
        free(c);
        free(w);
    }
    tpb_history_t *h = &s->bhist[s->nbhist++];
    tpb_block_history(b, step_med, h);
    h->steps = steps;
    h->arr[TPB_HIST_COMPUTE] = comp;
    h->arr[TPB_HIST_WORK] = work;
    tpb_status_t st = tpb_spill_history(tpb_record_spill(s), h);
    if (st != TPB_OK) /* not kept: as if it had not been measured */
        tpb_history_free(&s->bhist[--s->nbhist]);
    return st;
}

static void block_json(tpb_buf_t *j, const tpb_block_result_t *b, const tpb_history_t *const *g,
                       const double *q, double sum, double tps, double half)
{
    tpb_json_obj_begin(j);
    tpb_json_kv_str(j, "type", "block");
    tpb_json_kv_int(j, "id", b->id);
    tpb_json_kv_str(j, "name", b->name);
    tpb_json_kv_int(j, "world_size", b->world);
    tpb_config_key_json(j, &b->key, TPB_KEY_BLOCK);
    tpb_json_kv_int(j, "tokens", b->tokens);
    tpb_json_key(j, "configs");
    tpb_json_arr_begin(j);
    for (int i = 0; i < b->ngemm; i++)
        tpb_json_int(j, b->configs[i]);
    tpb_json_arr_end(j);
    tpb_json_key(j, "shapes");
    tpb_json_arr_begin(j);
    for (int i = 0; i < b->ngemm; i++)
        tpb_json_str(j, g[i]->shape_name);
    tpb_json_arr_end(j);
    tpb_json_kv_int(j, "iters", b->iters);
    tpb_json_kv_int(j, "interleave_set", b->set);
    tpb_json_kv_int(j, "interleave_rounds", b->rounds);
    if (b->looks > 0)
        tpb_json_kv_int(j, "budget_looks", b->looks);
    tpb_json_key(j, "step_us");
    tpb_json_obj_begin(j);
    tpb_json_kv_num(j, "median", q[0]);
    tpb_json_kv_num(j, "p95", q[1]);
    tpb_json_kv_num(j, "min", q[2]);
    tpb_json_kv_num(j, "max", q[3]);
    tpb_json_obj_end(j);
    tpb_json_kv_nums(j, "steps_us", b->steps, (size_t)b->iters);
    tpb_json_kv_num(j, "gemm_step_sum_us", sum);
    tpb_json_kv_num(j, "tokens_per_s_rank", tps);
    tpb_json_kv_num(j, "tokens_per_s_rank_lo", tps * exp(-half));
    tpb_json_kv_num(j, "tokens_per_s_rank_hi", tps * exp(half));
    tpb_json_obj_end(j);
    tpb_buf_puts(j, "\n");
}

tpb_status_t tpb_record_block(tpb_record_t *s, const tpb_block_result_t *b)
{
    if (s->sealed) /* stopped: not printed, as not written */
        return TPB_OK;
    const tpb_history_t *g[b->ngemm];
    double sum = 0.0;
    for (int j = 0; j < b->ngemm; j++) {
        if (!(g[j] = config_of(s, b->configs[j])))
            return tpb_err_set(TPB_ERR_INVALID, "block %d: config %d was not recorded", b->id,
                               b->configs[j]);
        sum += g[j]->step_med;
    }
    size_t n = (size_t)b->iters;
    double q[4] = {tpb_stats_median(b->steps, n), tpb_stats_quantile(b->steps, n, 0.95),
                   tpb_stats_min(b->steps, n), tpb_stats_max(b->steps, n)};
    double tps = tpb_block_tokens_per_s(b->tokens, b->tp, q[0]);
    double half = tpb_interval_median_half(b->steps, n);
    TPB_CHECK_RET(push_block(s, b, g, q[0]));
    char step[24], gemms[24];
    fprintf(s->run.table,
            "# block %s tp %d %s%s: %s a step (its %d GEMMs' steps add to %s), %.0f tokens/s per "
            "rank [%.0f, %.0f]\n",
            b->name, b->tp, tpb_policy_name(b->policy), tpb_config_key_variant(&b->key),
            tpb_human_us(step, sizeof(step), q[0]), b->ngemm,
            tpb_human_us(gemms, sizeof(gemms), sum), tps, tps * exp(-half), tps * exp(half));
    fflush(s->run.table);
    block_json(&s->jsonl, b, g, q, sum, tps, half);
    return tpb_record_write(s, TPB_RUN_RUNNING);
}
