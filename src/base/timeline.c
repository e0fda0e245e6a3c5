/* timeline.c - wait/comm decomposition, stragglers and spikes of a config. */
#include "base/timeline.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/metrics.h"

#define M(r, i) marks[(size_t)(r)*iters + (i)]

double tpb_timeline_last_arrival(const tpb_mark_t *marks, int tp, int iters, int g, int i)
{
    double a = -INFINITY;
    for (int r = g * tp; r < (g + 1) * tp; r++)
        a = M(r, i).c1 > a ? M(r, i).c1 : a;
    return a;
}

int tpb_timeline_last_rank(const tpb_mark_t *marks, int tp, int iters, int g, int i, double *late)
{
    int last = g * tp;
    double second = -INFINITY;
    for (int r = g * tp + 1; r < (g + 1) * tp; r++) {
        if (M(r, i).c1 > M(last, i).c1) {
            second = M(last, i).c1 > second ? M(last, i).c1 : second;
            last = r;
        } else if (M(r, i).c1 > second) {
            second = M(r, i).c1;
        }
    }
    *late = tp > 1 ? M(last, i).c1 - second : 0.0;
    return last;
}

int tpb_timeline_violations(const tpb_mark_t *marks, int world, int tp, int iters,
                            const double *unc)
{
    int n = 0;
    double late;
    for (int g = 0; g < world / tp; g++)
        for (int i = 0; i < iters; i++) {
            int q = tpb_timeline_last_rank(marks, tp, iters, g, i, &late);
            for (int r = g * tp; r < (g + 1) * tp; r++)
                n += M(r, i).x1 < M(q, i).c1 - (unc ? unc[r] + unc[q] : 0.0);
        }
    return n;
}

/* Per-rank medians and p95s from the scratch columns. */
static void rank_stats(const tpb_mark_t *marks, int r, int iters, double *scr, double *a_last,
                       tpb_rank_stats_t *s)
{
    for (int i = 0; i < iters; i++)
        scr[i] = M(r, i).c1 - M(r, i).c0;
    s->compute_med = tpb_stats_median(scr, (size_t)iters);
    s->compute_p95 = tpb_stats_quantile(scr, (size_t)iters, 0.95);
    for (int i = 0; i < iters; i++)
        scr[i] = a_last[i] - M(r, i).c1;
    s->wait_med = tpb_stats_median(scr, (size_t)iters);
    s->wait_p95 = tpb_stats_quantile(scr, (size_t)iters, 0.95);
    for (int i = 0; i < iters; i++)
        scr[i] = M(r, i).x1 - a_last[i];
    s->comm_med = tpb_stats_median(scr, (size_t)iters);
    s->comm_p95 = tpb_stats_quantile(scr, (size_t)iters, 0.95);
    for (int i = 0; i < iters; i++)
        scr[i] = M(r, i).x1 - M(r, i).c1;
    s->coll_med = tpb_stats_median(scr, (size_t)iters);
}

void tpb_timeline_group(const tpb_mark_t *marks, int tp, int iters, int g, double *work,
                        double *free_x, double *grp[3], tpb_rank_stats_t *ranks)
{
    double *scr = work, *a_last = work + iters;
    for (int i = 0; i < iters; i++) {
        double a = tpb_timeline_last_arrival(marks, tp, iters, g, i), c0 = INFINITY;
        double x1 = -INFINITY, fx = INFINITY, comp = 0.0, late;
        a_last[i] = a;
        for (int r = g * tp; r < (g + 1) * tp; r++) {
            c0 = fmin(c0, M(r, i).c0);
            x1 = fmax(x1, M(r, i).x1);
            fx = fmin(fx, M(r, i).x1 - M(r, i).c1);
            comp += M(r, i).c1 - M(r, i).c0;
        }
        grp[0][i] = x1 - c0; /* step */
        grp[1][i] = x1 - a;  /* transfer after the last arrival */
        grp[2][i] = comp / tp;
        free_x[i] = fx;
        if (tp > 1) {
            int last = tpb_timeline_last_rank(marks, tp, iters, g, i, &late);
            ranks[last].last_count++;
            ranks[last].lateness_us += late;
        }
    }
    double comp[tp], score[tp];
    for (int r = g * tp; r < (g + 1) * tp; r++) {
        rank_stats(marks, r, iters, scr, a_last, &ranks[r]);
        comp[r - g * tp] = ranks[r].compute_med;
        for (int i = 0; i < iters; i++)
            scr[i] = M(r, i).x1 - M(r, i).c1 - free_x[i];
        ranks[r].wait_free_med = tpb_stats_median(scr, (size_t)iters);
    }
    tpb_metric_relative_scores(comp, (size_t)tp, score);
    for (int r = g * tp; r < (g + 1) * tp; r++) {
        ranks[r].score = score[r - g * tp];
        if (ranks[r].last_count)
            ranks[r].lateness_us /= ranks[r].last_count;
    }
}

void tpb_timeline_figures(const double *step, const double *set_xfer, const double *set_comp,
                          const double *xfer, const double *free_x, int iters,
                          tpb_config_stats_t *cfg)
{
    size_t n = (size_t)iters;
    double step_sum = 0.0, xfer_sum = 0.0, comp_sum = 0.0;
    for (int i = 0; i < iters; i++) {
        step_sum += step[i];
        xfer_sum += set_xfer[i];
        comp_sum += set_comp[i];
    }
    cfg->step_mean = step_sum / iters;
    cfg->xfer_mean = xfer_sum / iters;
    cfg->comp_mean = comp_sum / iters;
    cfg->step_med = tpb_stats_median(step, n);
    cfg->step_p95 = tpb_stats_quantile(step, n, 0.95);
    cfg->step_min = tpb_stats_min(step, n);
    cfg->step_max = tpb_stats_max(step, n);
    cfg->xfer_med = tpb_stats_median(xfer, n);
    cfg->xfer_free_med = tpb_stats_median(free_x, n);
}

void tpb_timeline_straggler(const tpb_rank_stats_t *ranks, int world, int tp, int iters,
                            tpb_config_stats_t *cfg)
{
    cfg->straggler_rank = -1;
    if (tp < 2)
        return;
    int best = 0; /* most often last; ties go to the larger mean lateness */
    for (int r = 1; r < world; r++)
        if (ranks[r].last_count > ranks[best].last_count ||
            (ranks[r].last_count == ranks[best].last_count &&
             ranks[r].lateness_us > ranks[best].lateness_us))
            best = r;
    cfg->straggler_rank = best;
    cfg->straggler_frac = (double)ranks[best].last_count / iters;
    cfg->straggler_late_us = ranks[best].lateness_us;
}

static void find_spikes(const tpb_mark_t *marks, int world, int tp, int iters, const double *step,
                        const int *worst_group, tpb_config_stats_t *cfg)
{
    (void)world;
    for (int i = 0; i < iters; i++) {
        if (!(step[i] > 1.5 * cfg->step_med))
            continue;
        if (cfg->nspikes < TPB_MAX_SPIKES) {
            double late;
            tpb_spike_t *s = &cfg->spikes[cfg->nspikes];
            s->iter = i;
            s->rank = tpb_timeline_last_rank(marks, tp, iters, worst_group[i], i, &late);
            s->step_us = step[i];
        }
        cfg->nspikes++;
    }
}

tpb_status_t tpb_timeline_analyse(const tpb_mark_t *marks, int world, int tp, int iters,
                                  tpb_rank_stats_t *ranks, tpb_config_stats_t *cfg)
{
    size_t n = (size_t)iters;
    double *work = malloc(11 * n * sizeof(double));
    int *worst = malloc(n * sizeof(int));
    if (!work || !worst) {
        free(work);
        free(worst);
        return tpb_err_set(TPB_ERR_NOMEM, "timeline analysis: out of memory (%d iterations)",
                           iters);
    }
    double *scr = work, *free_x = work + 2 * n, *step = work + 3 * n; /* scr: 2 n */
    double *xfer = work + 4 * n, *all_free = work + 5 * n, *set_xfer = work + 6 * n;
    double *set_comp = work + 7 * n, *grp[3] = {work + 8 * n, work + 9 * n, work + 10 * n};
    memset(ranks, 0, (size_t)world * sizeof(*ranks));
    memset(cfg, 0, sizeof(*cfg));
    for (int i = 0; i < iters; i++) {
        step[i] = xfer[i] = -INFINITY;
        all_free[i] = INFINITY;
    }
    for (int g = 0; g < world / tp; g++) {
        tpb_timeline_group(marks, tp, iters, g, scr, free_x, grp, ranks);
        for (int i = 0; i < iters; i++) {
            if (grp[0][i] > step[i]) { /* this group sets the step: its terms add up to it */
                step[i] = grp[0][i];
                worst[i] = g;
                set_xfer[i] = grp[1][i];
                set_comp[i] = grp[2][i];
            }
            xfer[i] = fmax(xfer[i], grp[1][i]);
            all_free[i] = fmin(all_free[i], free_x[i]);
        }
    }
    cfg->causality_violations = tpb_timeline_violations(marks, world, tp, iters, NULL);
    tpb_timeline_figures(step, set_xfer, set_comp, xfer, all_free, iters, cfg);
    tpb_timeline_straggler(ranks, world, tp, iters, cfg);
    find_spikes(marks, world, tp, iters, step, worst, cfg);
    free(work);
    free(worst);
    return TPB_OK;
}

void tpb_timeline_steps(const tpb_mark_t *marks, int world, int tp, int iters, double *step)
{
    for (int i = 0; i < iters; i++)
        step[i] = -INFINITY;
    for (int g = 0; g < world / tp; g++)
        for (int i = 0; i < iters; i++) {
            double c0 = INFINITY, x1 = -INFINITY;
            for (int r = g * tp; r < (g + 1) * tp; r++) {
                c0 = fmin(c0, M(r, i).c0);
                x1 = fmax(x1, M(r, i).x1);
            }
            step[i] = fmax(step[i], x1 - c0);
        }
}

int tpb_timeline_trace_window(const double *step, int iters, int n, unsigned char *keep)
{
    if (n >= iters || n < 1) {
        memset(keep, 1, (size_t)iters);
        return iters;
    }
    memset(keep, 0, (size_t)iters);
    int worst = 0;
    for (int i = 1; i < iters; i++)
        worst = step[i] > step[worst] ? i : worst;
    int lo = worst - n / 2;
    lo = lo < 0 ? 0 : lo + n > iters ? iters - n : lo;
    for (int i = lo; i < lo + n; i++)
        keep[i] = 1;
    int kept = n, nsp = 0;
    double limit = 1.5 * tpb_stats_median(step, (size_t)iters);
    int *sp = malloc((size_t)iters * sizeof(int)); /* without it: the window alone */
    for (int i = 0; sp && i < iters; i++)
        if (!keep[i] && step[i] > limit)
            sp[nsp++] = i;
    if (nsp > n) { /* the n slowest spikes: select by the n-th largest step */
        double *v = malloc((size_t)nsp * sizeof(double));
        double cut = -INFINITY;
        if (v) {
            for (int j = 0; j < nsp; j++)
                v[j] = step[sp[j]];
            cut = tpb_stats_quantile(v, (size_t)nsp, (double)(nsp - n) / (nsp - 1));
            free(v);
        }
        int m = 0;
        for (int j = 0; j < nsp && m < n; j++)
            if (step[sp[j]] >= cut)
                sp[m++] = sp[j];
        nsp = m;
    }
    for (int j = 0; j < nsp; j++)
        keep[sp[j]] = 1;
    kept += nsp;
    free(sp);
    return kept;
}

int tpb_timeline_trace_budget(const double *step, int iters, int rows, long budget,
                              unsigned char *keep)
{
    long n = rows > 0 ? budget / rows : iters;
    n = n < 16 ? 16 : n;
    if (n >= iters)
        return tpb_timeline_trace_window(step, iters, iters, keep);
    double limit = 1.5 * tpb_stats_median(step, (size_t)iters);
    long spikes = 0;
    for (int i = 0; i < iters; i++)
        spikes += step[i] > limit;
    /* window w and at most w spikes: w + min(spikes, w) <= n */
    long w = spikes <= n / 2 ? n - spikes : n / 2;
    return tpb_timeline_trace_window(step, iters, (int)(w < 1 ? 1 : w), keep);
}

int tpb_straggler_clear(const tpb_config_stats_t *cfg, int tp)
{
    if (tp < 2 || cfg->straggler_rank < 0)
        return 0;
    return cfg->straggler_frac >= 0.5 * (1.0 + 1.0 / tp) &&
           cfg->straggler_late_us >= 0.05 * cfg->step_med;
}
