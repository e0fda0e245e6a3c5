/* estimate.c - a run's time from its plans (estimate.h). */
#include "run/estimate.h"

#include <math.h>

#include "run/calibrate.h"
#include "run/coll.h"

/* The slowest and the mean --emulate-speed factor of the world (1 without). */
static void factors(const tpb_est_rates_t *r, double *least, double *mean)
{
    *least = *mean = 1.0;
    if (!r->emulate || r->world < 1)
        return;
    double sum = 0.0;
    for (int w = 0; w < r->world; w++) {
        *least = fmin(*least, r->emulate[w]);
        sum += r->emulate[w];
    }
    *mean = sum / r->world;
}

/* A calibration of GEMMs of t seconds each: one warm-up, then samples until the budget
 * (at least the policy's fewest, at most its most); *least: with the fewest. */
static double calibration_s(double t, double *least)
{
    tpb_cal_policy_t p = TPB_CAL_POLICY_DEFAULT;
    double budget = p.budget_us * 1e-6;
    *least = t + p.min_samples * t;
    return t + fmin(p.max_samples * t, fmax(p.min_samples * t, budget));
}

tpb_est_rates_t tpb_est_rates_of(const tpb_plan_list_t *list, const tpb_backend_defaults_t *d,
                                 int world, double gflops)
{
    return (tpb_est_rates_t){.gflops = gflops,
                             .busbw_gbs = d->busbw_gbs,
                             .alpha_us = d->alpha_us,
                             .iters = list->m.iters,
                             .warmup = list->m.warmup,
                             .emulate = list->m.emulate,
                             .world = world,
                             .draw_cpus = 1.0};
}

/* The bytes config i's inputs draw: the largest buffers of its shape's GEMM configs where i
 * is the first of them, else 0 (drawn once, copied after). */
static double shape_fill_bytes(const tpb_plan_list_t *list, int i)
{
    const tpb_config_plan_t *p = &list->p[i];
    double most = 0.0;
    for (int j = 0; j < list->n; j++) {
        const tpb_config_plan_t *q = &list->p[j];
        if (q->skip[0] || q->comm_only || q->shape != p->shape)
            continue;
        if (j < i)
            return 0.0;
        most = fmax(most, q->mem_bytes);
    }
    return p->comm_only ? 0.0 : most;
}

void tpb_plans_estimate(const tpb_plan_list_t *list, const tpb_est_rates_t *r, tpb_estimate_t *e)
{
    *e = (tpb_estimate_t){.start_s = TPB_EST_START_S};
    double least, mean, rate = r->gflops * 1e9;
    factors(r, &least, &mean);
    int last_block = -1;
    for (int i = 0; i < list->n; i++) {
        const tpb_config_plan_t *p = &list->p[i];
        if (p->skip[0])
            continue;
        double n = r->iters + r->warmup + 1; /* the layer's untimed first GEMM */
        double flop = p->comm_only ? 0.0 : tpb_layer_rank_flop(&p->desc);
        /* the even split waits for the slowest rank; a weighting one spreads the work by
         * speed */
        double slow = p->policy == TPB_POLICY_EVEN ? least : mean;
        e->gemm_s += n * flop / (rate * slow);
        const tpb_coll_ops_t *c = p->desc.coll;
        if (p->tp > 1)
            e->comm_s += n * (r->alpha_us * 1e-6 +
                              c->bytes(&p->desc) * c->busbw_factor(p->tp) / (r->busbw_gbs * 1e9));
        /* a GEMM's inputs are seeded normal numbers, drawn once per shape (run/inputs.h: its
         * other configs copy their shards out) by the ranks together, each on its CPUs: the
         * largest of its configs' buffers, once */
        e->setup_s += TPB_EST_CONFIG_S +
                      shape_fill_bytes(list, i) * TPB_EST_FILL_S_PER_BYTE / fmax(r->draw_cpus, 1.0);
        if (tpb_plan_needs_speeds(p) && p->block != last_block) {
            double fewest;
            e->calib_s += calibration_s(flop / (rate * least), &fewest);
            e->calib_least_s += fewest;
            e->calibrations++;
            last_block = p->block;
        }
    }
    double rest = e->start_s + e->gemm_s + e->comm_s + e->setup_s;
    e->total_s = rest + e->calib_s;
    e->total_least_s = rest + e->calib_least_s;
}

void tpb_estimate_whole(const tpb_estimate_t *e, int passes, double budget_s, double *about,
                        double *most)
{
    int n = passes > 1 ? passes : 1; /* MPI starts once: every pass but its start */
    *about = n * (e->total_s - e->start_s) + e->start_s;
    *most = *about + n * (budget_s > 0.0 ? budget_s : 0.0);
}
