/* metrics.c - pure metric formulas (see doc/METRICS.md). */
#include "base/metrics.h"

#include "base/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double tpb_metric_lb(const double *t, size_t n)
{
    return tpb_stats_min(t, n) / tpb_stats_max(t, n);
}

double tpb_metric_utilisation(const double *t, size_t n)
{
    return tpb_stats_sum(t, n) / ((double)n * tpb_stats_max(t, n));
}

double tpb_metric_efficiency(double t1, size_t n, double t_step)
{
    if (!(t1 > 0.0) || !(t_step > 0.0))
        return NAN;
    return t1 / ((double)n * t_step);
}

double tpb_metric_efficiency_het(double w_total, const double *speeds, size_t n, double t_step)
{
    for (size_t i = 0; i < n; i++)
        if (!(speeds[i] > 0.0))
            return NAN;
    return w_total / tpb_stats_sum(speeds, n) / t_step;
}

double tpb_metric_algbw_gbs(double bytes, double time_us)
{
    return time_us > 0.0 ? bytes / (time_us * 1e3) : 0.0;
}

double tpb_metric_tflops(double flop, double time_us)
{
    return time_us > 0.0 ? flop / (time_us * 1e6) : 0.0;
}

/* Weights 1/t^2: the fit minimises relative residuals, so that a few percent of noise on
 * the largest messages (which dominate absolute residuals) does not swamp the latency that
 * the small messages measure. */
const char *tpb_metric_fit_quality_name(tpb_fit_quality_t q)
{
    static const char *const names[] = {"ok", "exact", "poor", "latency not resolved",
                                        "bandwidth not resolved"};
    return (unsigned)q < sizeof(names) / sizeof(names[0]) ? names[q] : "?";
}

/* Student's t at 97.5 % for dof degrees of freedom (the 95 % two-sided interval). */
static double t975(int dof)
{
    static const double q[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
                               2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120,
                               2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
                               2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
    return dof < 1 ? NAN : dof <= 30 ? q[dof - 1] : 1.96;
}

/* Weighted sums of one series: weights 1/t^2. */
typedef struct {
    double sw, sv, st, svv, svt, stt;
} wsums_t;

static wsums_t weigh(const double *v, const double *t, size_t n)
{
    wsums_t s = {0};
    for (size_t i = 0; i < n; i++) {
        double w = 1.0 / (t[i] * t[i]);
        s.sw += w;
        s.sv += w * v[i];
        s.st += w * t[i];
        s.svv += w * v[i] * v[i];
        s.svt += w * v[i] * t[i];
        s.stt += w * t[i] * t[i];
    }
    return s;
}

/* Weighted residual sum of squares of T = a + b V. */
static double residuals(const double *v, const double *t, size_t n, double a, double b)
{
    double ss = 0.0;
    for (size_t i = 0; i < n; i++) {
        double e = t[i] - a - b * v[i];
        ss += e * e / (t[i] * t[i]);
    }
    return ss;
}

/* The fit's intervals and quality from the intercept a, slope b (us per byte), the number
 * of free parameters p and the residual variance. */
static void finish_fit(tpb_comm_fit_t *f, const wsums_t *s, size_t n, int r, double a, double b,
                       int p, double ss)
{
    double mv = s->sv / s->sw, svv = s->svv - s->sw * mv * mv, mt = s->st / s->sw;
    double sstot = s->stt - s->sw * mt * mt;
    int dof = (int)n - p;
    double s2 = dof > 0 ? ss / dof : NAN, tq = t975(dof);
    double se_b = NAN, se_a = NAN;
    if (f->quality == TPB_FIT_OK) { /* both free */
        se_b = sqrt(s2 / svv);
        se_a = sqrt(s2 * (1.0 / s->sw + mv * mv / svv));
    } else if (f->quality == TPB_FIT_NO_LATENCY) { /* slope alone, through 0 */
        se_b = sqrt(s2 / s->svv);
    } else { /* latency alone */
        se_a = sqrt(s2 / s->sw);
    }
    double rr = r > 0 ? r : 1;
    f->latency_us = a / rr;
    f->bandwidth_gbs = b > 0.0 ? 1.0 / (b * 1e3) : INFINITY;
    f->latency_lo_us = isnan(se_a) ? NAN : fmax(0.0, (a - tq * se_a) / rr);
    f->latency_hi_us = isnan(se_a) ? NAN : (a + tq * se_a) / rr;
    f->bandwidth_lo_gbs = isnan(se_b) ? NAN : 1.0 / ((b + tq * se_b) * 1e3);
    f->bandwidth_hi_gbs = isnan(se_b)           ? NAN
                          : b - tq * se_b > 0.0 ? 1.0 / ((b - tq * se_b) * 1e3)
                                                : INFINITY;
    f->r2 = sstot > 0.0 ? fmax(0.0, 1.0 - ss / sstot) : 1.0;
    f->points = (int)n;
    if (f->quality == TPB_FIT_OK && dof == 0)
        f->quality = TPB_FIT_EXACT;
    else if (f->quality == TPB_FIT_OK && f->r2 < 0.9)
        f->quality = TPB_FIT_POOR;
}

int tpb_metric_comm_fit(const double *v, const double *t, size_t n, int r, tpb_comm_fit_t *fit)
{
    int distinct = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(t[i] > 0.0) || !isfinite(t[i]) || !isfinite(v[i]))
            return -1;
        distinct |= v[i] != v[0];
    }
    if (n < 2 || !distinct)
        return -1;
    wsums_t s = weigh(v, t, n);
    double mv = s.sv / s.sw, mt = s.st / s.sw;
    double svv = s.svv - s.sw * mv * mv, svt = s.svt - s.sw * mv * mt;
    if (svv <= 0.0)
        return -1;
    tpb_comm_fit_t f = {.quality = TPB_FIT_OK};
    double b = svt / svv, a = mt - b * mv; /* the free fit */
    int p = 2;
    if (a < 0.0 && b > 0.0) { /* L below 0 is no latency: fit the slope through 0 */
        a = 0.0;
        b = s.svt / s.svv;
        p = 1;
        f.quality = TPB_FIT_NO_LATENCY;
    }
    if (b <= 0.0) { /* larger messages no slower: the time is latency alone */
        b = 0.0;
        a = mt;
        p = 1;
        f.quality = TPB_FIT_NO_BANDWIDTH;
    }
    finish_fit(&f, &s, n, r, a, b, p, residuals(v, t, n, a, b));
    *fit = f;
    return 0;
}

double tpb_metric_predicted_speedup(const double *speeds, size_t n)
{
    return tpb_stats_sum(speeds, n) / (double)n / tpb_stats_min(speeds, n);
}

void tpb_metric_relative_scores(const double *t, size_t n, double *out)
{
    double m = tpb_stats_min(t, n);
    for (size_t i = 0; i < n; i++)
        out[i] = m / t[i];
}

tpb_decomp_t tpb_metric_decompose(double comp_us, double comm_us, double step_us)
{
    return (tpb_decomp_t){
        .comp_us = comp_us, .comm_us = comm_us, .idle_us = step_us - comp_us - comm_us};
}
