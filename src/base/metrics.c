/* metrics.c - pure metric formulas (see doc/METRICS.md). */
#include "base/metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The k-th smallest of s[0..n) (s is reordered): Hoare's selection, expected linear time,
 * with a median-of-three pivot so that sorted or constant input stays linear. */
static double select_kth(double *s, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        double a = s[lo], b = s[mid], c = s[hi];
        double pivot = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
        size_t i = lo, j = hi;
        while (i <= j) {
            while (s[i] < pivot)
                i++;
            while (s[j] > pivot)
                j--;
            if (i <= j) {
                double t = s[i];
                s[i] = s[j];
                s[j] = t;
                i++;
                if (j == 0)
                    break;
                j--;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return s[k];
    }
    return s[k];
}

/* Linear interpolation between the order statistics around q (n - 1): the definition of
 * numpy's default. Linear time: a selection, then the least element above it. */
double tpb_quantile(const double *v, size_t n, double q)
{
    if (n == 0)
        return NAN;
    double small[64];
    double *s = n <= 64 ? small : malloc(n * sizeof(*s));
    if (!s)
        return NAN;
    memcpy(s, v, n * sizeof(*s));
    double pos = q * (double)(n - 1);
    size_t lo = (size_t)floor(pos);
    double a = select_kth(s, n, lo), b = a;
    if (lo + 1 < n) { /* after the selection s[lo+1..n) hold the larger elements */
        b = s[lo + 1];
        for (size_t i = lo + 2; i < n; i++)
            b = s[i] < b ? s[i] : b;
    }
    double res = a + (pos - (double)lo) * (b - a);
    if (s != small)
        free(s);
    return res;
}

double tpb_median(const double *v, size_t n)
{
    return tpb_quantile(v, n, 0.5);
}

double tpb_min(const double *v, size_t n)
{
    double m = n ? v[0] : NAN;
    for (size_t i = 1; i < n; i++)
        m = v[i] < m ? v[i] : m;
    return m;
}

double tpb_max(const double *v, size_t n)
{
    double m = n ? v[0] : NAN;
    for (size_t i = 1; i < n; i++)
        m = v[i] > m ? v[i] : m;
    return m;
}

double tpb_sum(const double *v, size_t n)
{
    double s = 0.0;
    for (size_t i = 0; i < n; i++)
        s += v[i];
    return s;
}

double tpb_load_balance(const double *t, size_t n)
{
    return tpb_min(t, n) / tpb_max(t, n);
}

double tpb_utilisation(const double *t, size_t n)
{
    return tpb_sum(t, n) / ((double)n * tpb_max(t, n));
}

double tpb_efficiency(double t1, size_t n, double t_step)
{
    if (!(t1 > 0.0) || !(t_step > 0.0))
        return NAN;
    return t1 / ((double)n * t_step);
}

double tpb_efficiency_het(double w_total, const double *speeds, size_t n, double t_step)
{
    for (size_t i = 0; i < n; i++)
        if (!(speeds[i] > 0.0))
            return NAN;
    return w_total / tpb_sum(speeds, n) / t_step;
}

double tpb_algbw_gbs(double bytes, double time_us)
{
    return time_us > 0.0 ? bytes / (time_us * 1e3) : 0.0;
}

double tpb_tflops(double flop, double time_us)
{
    return time_us > 0.0 ? flop / (time_us * 1e6) : 0.0;
}

/* Weights 1/t^2: the fit minimises relative residuals, so that a few percent of noise on
 * the largest messages (which dominate absolute residuals) does not swamp the latency that
 * the small messages measure. */
int tpb_comm_model_fit(const double *v, const double *t, size_t n, int r, tpb_comm_fit_t *fit)
{
    double sw = 0, mv = 0, mt = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(t[i] > 0.0))
            return -1;
        double w = 1.0 / (t[i] * t[i]);
        sw += w;
        mv += w * v[i];
        mt += w * t[i];
    }
    int distinct = 0;
    for (size_t i = 1; i < n; i++)
        distinct |= v[i] != v[0];
    if (n < 2 || !distinct)
        return -1;
    mv /= sw;
    mt /= sw;
    double svv = 0, svt = 0, stt = 0;
    for (size_t i = 0; i < n; i++) {
        double w = 1.0 / (t[i] * t[i]);
        svv += w * (v[i] - mv) * (v[i] - mv);
        svt += w * (v[i] - mv) * (t[i] - mt);
        stt += w * (t[i] - mt) * (t[i] - mt);
    }
    if (svv <= 0.0)
        return -1;
    double slope = svt / svv; /* us per byte */
    double icept = mt - slope * mv;
    fit->latency_us = icept / (r > 0 ? r : 1);
    fit->bandwidth_gbs = slope > 0.0 ? 1.0 / (slope * 1e3) : INFINITY;
    fit->r2 = stt > 0.0 ? (svt * svt) / (svv * stt) : 1.0;
    return 0;
}

double tpb_predicted_speedup(const double *speeds, size_t n)
{
    return tpb_sum(speeds, n) / (double)n / tpb_min(speeds, n);
}

void tpb_relative_scores(const double *t, size_t n, double *out)
{
    double m = tpb_min(t, n);
    for (size_t i = 0; i < n; i++)
        out[i] = m / t[i];
}

tpb_decomp_t tpb_decompose(double t_comp_single_us, int n, double comm_us, double step_us)
{
    tpb_decomp_t d;
    d.comp_us = t_comp_single_us / n;
    d.comm_us = comm_us;
    d.idle_us = step_us - d.comp_us - d.comm_us;
    if (d.idle_us < 0.0)
        d.idle_us = 0.0;
    return d;
}
