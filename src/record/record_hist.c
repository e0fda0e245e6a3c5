/* record_hist.c - what the record keeps of every finished config for the configs after it
 * (T_1, the even config of a weighted one) and for the closing summary and answer: the
 * serial configs' history and the chunked configs' apart. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/answer.h"
#include "record/record_impl.h"
#include "record/spill.h"

/* What the closing summary needs of res beyond its identity. */
static void summary_facts(tpb_history_t *h, const tpb_result_t *res)
{
    snprintf(h->shape_name, sizeof(h->shape_name), "%s", res->shape_name);
    h->step_mean = res->stats.step_mean;
    h->xfer_mean = res->tp > 1 ? res->stats.xfer_mean : 0.0;
    h->comp_mean = res->stats.comp_mean;
    h->speedup = res->speedup;
    h->predicted_speedup = res->predicted_speedup;
    int clear = tpb_straggler_clear(&res->stats, res->tp);
    h->straggler_world = clear ? tpb_result_world_rank(res, res->stats.straggler_rank) : -1;
    h->straggler_frac = res->stats.straggler_frac;
    h->straggler_late_us = res->stats.straggler_late_us;
    h->spread_worst = NAN;
    h->spread_world = -1;
    if (!tpb_speed_source_measured(res->speed_source) || res->comm_only)
        return;
    for (int r = 0; r < res->world; r++) {
        double sp = res->info[r].speed_spread;
        if (isfinite(sp) && !(sp <= h->spread_worst)) {
            h->spread_worst = sp;
            h->spread_world = tpb_result_world_rank(res, r);
        }
    }
}

void tpb_history_free(tpb_history_t *h)
{
    free(h->steps);
    h->steps = NULL;
    for (int a = 0; a < TPB_HIST_ARRAYS; a++) {
        free(h->arr[a]);
        h->arr[a] = NULL;
    }
}

tpb_spill_t *tpb_record_spill(tpb_record_t *s)
{
    if (!s->spill_tried)
        tpb_spill_open(&s->spill, s->run.out_dir);
    s->spill_tried = 1;
    return &s->spill;
}

/* Room for one more entry of a history (*h, *n used of *cap): doubled when full. */
static tpb_status_t hist_room(tpb_history_t **h, int n, int *cap)
{
    if (n < *cap)
        return TPB_OK;
    int more = *cap ? 2 * *cap : 16;
    tpb_history_t *g = realloc(*h, (size_t)more * sizeof(*g));
    if (!g)
        return tpb_err_set(TPB_ERR_NOMEM, "out of memory");
    *h = g;
    *cap = more;
    return TPB_OK;
}

/* A chunked config: kept apart, with what the overlap answer needs. */
static tpb_status_t push_ohist(tpb_record_t *s, const tpb_result_t *res)
{
    TPB_CHECK_RET(hist_room(&s->ohist, s->nohist, &s->cap_ohist));
    s->ohist[s->nohist++] = (tpb_history_t){.key = res->key,
                                            .id = res->id,
                                            .step_med = res->stats.step_med,
                                            .speedup = res->serial_step_us / res->stats.step_med,
                                            .overlap = res->overlap};
    return TPB_OK;
}

tpb_status_t tpb_record_push_hist(tpb_record_t *s, const tpb_result_t *res)
{
    if (res->chunks)
        return push_ohist(s, res);
    TPB_CHECK_RET(hist_room(&s->hist, s->nhist, &s->cap_hist));
    int nb = res->nslow ? res->nslow / (res->world / res->tp) : 0;
    double *comp = malloc((size_t)res->world * sizeof(double));
    double *work = malloc((size_t)res->world * sizeof(double));
    double *steps = res->steps ? malloc((size_t)res->iters * sizeof(double)) : NULL;
    tpb_slow_t *slow = nb ? malloc((size_t)res->nslow * sizeof(*slow)) : NULL;
    double *dev = nb ? malloc((size_t)nb * (size_t)res->world * sizeof(*dev)) : NULL;
    if (!comp || !work || (res->steps && !steps) || (nb && (!slow || !dev))) {
        free(comp);
        free(work);
        free(steps);
        free(slow);
        free(dev);
        return tpb_err_set(TPB_ERR_NOMEM, "out of memory");
    }
    if (steps)
        memcpy(steps, res->steps, (size_t)res->iters * sizeof(double));
    for (int b = 0; b < res->nslow; b++) { /* by world rank: the run's view */
        slow[b] = res->slow[b];
        if (slow[b].rank >= 0)
            slow[b].rank = tpb_result_world_rank(res, slow[b].rank);
    }
    for (int b = 0; b < nb; b++)
        for (int r = 0; r < res->world; r++)
            dev[(size_t)b * res->world + tpb_result_world_rank(res, r)] =
                res->slow_dev[(size_t)b * res->world + r];
    double t1 = INFINITY;
    for (int r = 0; r < res->world; r++) {
        comp[r] = res->ranks[r].compute_med;
        work[r] = res->info[r].flop;
        t1 = fmin(t1, comp[r]);
    }
    s->hist[s->nhist++] = (tpb_history_t){.key = res->key,
                                          .id = res->id,
                                          .world = res->world,
                                          .coll = res->coll,
                                          .coll_bytes = res->coll_bytes,
                                          .group_nodes = res->max_group_nodes,
                                          .step_med = res->stats.step_med,
                                          .xfer_med = res->stats.xfer_med,
                                          .busbw_gbs = res->busbw_gbs,
                                          .t1_us = res->tp == 1 && isfinite(t1) ? t1 : NAN,
                                          .arr = {comp, work, slow, dev},
                                          .steps = steps,
                                          .nsteps = steps ? res->iters : 0,
                                          .set = res->interleave_set,
                                          .rounds = res->interleave_rounds,
                                          .looks = res->budget_looks,
                                          .nslow = nb ? res->nslow : 0};
    summary_facts(&s->hist[s->nhist - 1], res);
    return tpb_spill_history(tpb_record_spill(s), &s->hist[s->nhist - 1]); /* whole either way */
}

int tpb_record_extensions_at(const tpb_record_t *s, int tp)
{
    int budget = 0;
    return tpb_answer_extensions(s->hist, s->nhist, tp, &budget);
}

tpb_persistent_t tpb_record_persistent_at(const tpb_record_t *s, int tp, double alpha)
{
    return tpb_answer_persistent_at(s->hist, s->nhist, tp, alpha);
}
