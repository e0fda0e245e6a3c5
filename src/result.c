/* result.c - metrics of a config from its timeline statistics. */
#include "result.h"

#include <math.h>

#include "metrics.h"

double tpb_result_coll_bytes(const tpb_result_t *res)
{
    return (double)res->m * (double)res->n * (double)tpb_dtype_out_size(res->dtype);
}

/* lb, u, e_het and predicted speed-up of group g; worst values are kept. */
static void group_metrics(tpb_result_t *res, int g, double flop_total)
{
    int t = res->tp;
    double tc[t], s[t];
    int have_speeds = 1;
    for (int i = 0; i < t; i++) {
        tc[i] = res->ranks[g * t + i].compute_med;
        s[i] = res->info[g * t + i].speed;
        have_speeds &= s[i] > 0.0;
    }
    res->lb = fmin(res->lb, tpb_load_balance(tc, (size_t)t));
    res->u = fmin(res->u, tpb_utilisation(tc, (size_t)t));
    if (!have_speeds)
        return;
    double pred = tpb_predicted_speedup(s, (size_t)t);
    res->predicted_speedup =
        isnan(res->predicted_speedup) ? pred : fmax(res->predicted_speedup, pred);
    if (res->speed_source && (res->speed_source[0] == 'c' || res->speed_source[0] == 'f')) {
        /* calibrated speeds are GFLOP/s = 1e3 FLOP per microsecond */
        double sf[t];
        for (int i = 0; i < t; i++)
            sf[i] = s[i] * 1e3;
        double eh = tpb_efficiency_het(flop_total, sf, (size_t)t, res->stats.step_med);
        res->e_het = isnan(res->e_het) ? eh : fmin(res->e_het, eh);
    }
}

void tpb_result_derive(tpb_result_t *res, double t1_us)
{
    double flop_total = 2.0 * res->m * res->n * res->k;
    double step = res->stats.step_med;
    res->lb = res->u = INFINITY;
    res->e_het = res->predicted_speedup = NAN;
    for (int g = 0; g < res->world / res->tp; g++)
        group_metrics(res, g, flop_total);
    res->t1_us = t1_us;
    res->e = tpb_efficiency(t1_us, (size_t)res->tp, step);
    double tmax = 0.0;
    for (int r = 0; r < res->world; r++)
        tmax = fmax(tmax, res->ranks[r].compute_med);
    res->r = res->stats.xfer_med > 0.0 ? tmax / res->stats.xfer_med : NAN;
    res->tflops = tpb_tflops(flop_total, step);
    double bytes = tpb_result_coll_bytes(res);
    tpb_coll_t coll = res->split == TPB_SPLIT_COL && res->colcoll == TPB_COLCOLL_ALLGATHER
                          ? TPB_COLL_ALLGATHER
                          : TPB_COLL_ALLREDUCE;
    double xfer = res->tp > 1 ? res->stats.xfer_med : NAN;
    res->algbw_gbs = res->tp > 1 ? tpb_algbw_gbs(bytes, xfer) : NAN;
    res->busbw_gbs = res->tp > 1 ? tpb_busbw_gbs(coll, bytes, res->tp, xfer) : NAN;
}
