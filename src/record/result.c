/* result.c - metrics of a config from its timeline statistics. */
#include "record/result.h"

#include <math.h>
#include <stdlib.h>

#include "base/metrics.h"
#include "record/spill.h"

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
    res->lb = fmin(res->lb, tpb_metric_lb(tc, (size_t)t));
    res->u = fmin(res->u, tpb_metric_utilisation(tc, (size_t)t));
    if (!have_speeds)
        return;
    double pred = tpb_metric_predicted_speedup(s, (size_t)t);
    res->predicted_speedup =
        isnan(res->predicted_speedup) ? pred : fmax(res->predicted_speedup, pred);
    if (tpb_speed_source_measured(res->speed_source)) {
        /* calibrated speeds are GFLOP/s = 1e3 FLOP per microsecond */
        double sf[t];
        for (int i = 0; i < t; i++)
            sf[i] = s[i] * 1e3;
        double eh = tpb_metric_efficiency_het(flop_total, sf, (size_t)t, res->stats.step_med);
        res->e_het = isnan(res->e_het) ? eh : fmin(res->e_het, eh);
    }
}

void tpb_result_derive(tpb_result_t *res, double t1_us)
{
    double flop_total = res->layer_flop > 0.0 ? res->layer_flop : 2.0 * res->m * res->n * res->k;
    double step = res->stats.step_med;
    res->lb = res->u = INFINITY;
    res->e_het = res->predicted_speedup = NAN;
    for (int g = 0; g < res->world / res->tp; g++)
        group_metrics(res, g, flop_total);
    res->t1_us = t1_us;
    res->e = tpb_metric_efficiency(t1_us, (size_t)res->tp, step);
    double tmax = 0.0;
    for (int r = 0; r < res->world; r++)
        tmax = fmax(tmax, res->ranks[r].compute_med);
    res->r = res->stats.xfer_med > 0.0 ? tmax / res->stats.xfer_med : NAN;
    res->tflops = tpb_metric_tflops(flop_total, step);
    double bytes = res->coll_bytes;
    double xfer = res->tp > 1 ? res->stats.xfer_med : NAN;
    if (res->chunks && res->tp > 1) /* a chunked step's transfer is its exposed tail: the */
        xfer = res->overlap.t_comm_whole_us; /* bandwidth is the whole collective's alone */
    int known = xfer > 0.0;                  /* not with --timeline off, nor at TP = 1 */
    res->algbw_gbs = known ? tpb_metric_algbw_gbs(bytes, xfer) : NAN;
    res->busbw_gbs = known ? res->algbw_gbs * res->busbw_factor : NAN;
    if (!isfinite(res->lb)) /* no per-rank compute times: unknown, not infinite */
        res->lb = res->u = NAN;
    res->pct_peak = NAN;
    for (int g = 0; g < res->world / res->tp; g++) {
        double peak = 0.0;
        for (int r = g * res->tp; r < (g + 1) * res->tp; r++)
            peak += res->info[r].peak_gflops;
        double pct = peak > 0.0 ? 100.0 * res->tflops * 1e3 / peak : NAN;
        res->pct_peak = isnan(res->pct_peak) ? pct : fmin(res->pct_peak, pct);
    }
    if (res->comm_only) /* compute phases of ~0 us: their ratios would be noise */
        res->lb = res->u = res->e = res->e_het = res->r = res->tflops = res->pct_peak = NAN;
}

/* The first config in hist of res's shape and split at TP degree tp (and policy, unless 0). */
static const tpb_history_t *find_hist(const tpb_history_t *hist, int nhist, const tpb_result_t *res,
                                      int tp, tpb_policy_t policy)
{
    for (int i = 0; i < nhist; i++) {
        const tpb_history_t *h = &hist[i];
        tpb_history_t me = {.key = res->key};
        if (h->tp == tp && tpb_history_same_layer(h, &me) &&
            (policy == 0 || (h->policy == policy && h->placement == res->placement)))
            return h;
    }
    return NULL;
}

/* The fastest rank's compute time (T_1 at TP = 1). */
static double min_compute(const tpb_rank_stats_t *ranks, int n)
{
    double m = INFINITY;
    for (int r = 0; r < n; r++)
        m = fmin(m, ranks[r].compute_med);
    return m;
}

static void judge_check(tpb_result_t *res, int check_on)
{
    res->max_rel_err = NAN;
    res->check = TPB_CHECK_OFF;
    if (!check_on)
        return;
    double worst = 0.0;
    for (int r = 0; r < res->world; r++)
        if (!isnan(res->info[r].max_err))
            worst = fmax(worst, res->info[r].max_err);
    res->max_rel_err = worst;
    res->check = worst <= tpb_dtype_tolerance(res->dtype) ? TPB_CHECK_PASS : TPB_CHECK_FAIL;
}

void tpb_result_finish(tpb_result_t *res, const tpb_history_t *hist, int nhist, int check_on)
{
    const tpb_history_t *t1 = res->tp == 1 ? NULL : find_hist(hist, nhist, res, 1, 0);
    res->disturb = res->steps ? tpb_disturb_judge(res->steps, res->iters)
                              : tpb_disturb_judge(NULL, 0); /* --timeline off: undecided */
    double t1_us = res->tp == 1 ? min_compute(res->ranks, res->world) : t1 ? t1->t1_us : NAN;
    tpb_result_derive(res, t1_us);
    /* hist holds the serial configs: a chunked one's twin there is its serial run */
    const tpb_history_t *serial =
        res->chunks ? find_hist(hist, nhist, res, res->tp, res->policy) : NULL;
    res->serial_step_us = serial ? serial->step_med : NAN;
    const tpb_history_t *ev =
        (res->policy == TPB_POLICY_WEIGHTED || res->policy == TPB_POLICY_COST) && !res->chunks
            ? find_hist(hist, nhist, res, res->tp, TPB_POLICY_EVEN)
            : NULL;
    res->speedup = ev ? ev->step_med / res->stats.step_med : NAN;
    double *ev_comp = ev ? tpb_history_dup(ev, TPB_HIST_COMPUTE) : NULL;
    double *ev_work = ev ? tpb_history_dup(ev, TPB_HIST_WORK) : NULL;
    double *work = ev_comp && ev_work ? malloc((size_t)res->world * sizeof(double)) : NULL;
    if (work && ev->world == res->world) {
        for (int r = 0; r < res->world; r++)
            work[r] = res->info[r].flop;
        double pred = tpb_predict_weighted_step(ev->step_med, ev_comp, ev_work, work, res->world);
        if (pred > 0.0)
            res->predicted_speedup = ev->step_med / pred;
    }
    free(work);
    free(ev_work);
    free(ev_comp);
    judge_check(res, check_on);
}

int tpb_result_step_samples(const tpb_result_t *res, double *out, int *quantiles)
{
    *quantiles = 0;
    if (!res->steps || res->iters < 1)
        return 0;
    int n = res->iters <= TPB_STEP_SAMPLES ? res->iters : TPB_STEP_SAMPLES;
    *quantiles = res->iters > TPB_STEP_SAMPLES;
    for (int j = 0; j < n; j++) {
        double v = *quantiles ? tpb_stats_quantile(res->steps, (size_t)res->iters,
                                                   (j + 0.5) / TPB_STEP_SAMPLES)
                              : res->steps[j];
        out[j] = round(v * 1e3) / 1e3;
    }
    return n;
}

double tpb_result_rank_pct_peak(const tpb_result_t *res, int r)
{
    double t = res->ranks[r].compute_med, peak = res->info[r].peak_gflops;
    if (!(t > 0.0) || !(peak > 0.0))
        return NAN;
    return 100.0 * res->info[r].flop / (t * 1e3) / peak;
}

double tpb_predict_weighted_step(double even_step, const double *even_compute,
                                 const double *even_work, const double *new_work, int world)
{
    double crit_even = 0.0, crit_w = 0.0;
    if (world < 1 || !(even_step > 0.0))
        return NAN;
    for (int r = 0; r < world; r++) {
        double c = even_compute[r];
        if (!(c >= 0.0) || !(even_work[r] > 0.0) || !(new_work[r] >= 0.0))
            return NAN;
        crit_even = fmax(crit_even, c);
        crit_w = fmax(crit_w, c * new_work[r] / even_work[r]);
    }
    double t = even_step - crit_even + crit_w;
    return t > 0.0 ? t : NAN;
}

int tpb_result_device_shared(const tpb_result_t *res)
{
    int most = 1;
    for (int r = 0; r < res->world; r++)
        most = res->info[r].device_shared > most ? res->info[r].device_shared : most;
    return most;
}
