/* interval.c - intervals and verdicts of a ratio of medians (tpbal_stats.py's twin). */
#include "base/interval.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/stats.h"

#define Z95 1.959964

/* t(0.975) for 1..9 degrees of freedom */
static const double T975[10] = {0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262};

static double z_of(double conf);
static double t_of(int df, double conf);

const char *tpb_verdict_name(tpb_verdict_t v)
{
    static const char *const names[] = {
#define NAME_(id, name) [TPB_VERDICT_##id] = name,
        TPB_VERDICTS(NAME_)
#undef NAME_
    };
    _Static_assert(sizeof names / sizeof *names == TPB_VERDICT_COUNT, "one name per verdict");
    return (unsigned)v < TPB_VERDICT_COUNT ? names[v] : "?";
}

double tpb_interval_lag1(const double *v, size_t n)
{
    if (n < 3)
        return 0.0;
    double m = 0.0, den = 0.0, num = 0.0;
    for (size_t i = 0; i < n; i++)
        m += v[i];
    m /= (double)n;
    for (size_t i = 0; i < n; i++)
        den += (v[i] - m) * (v[i] - m);
    if (den <= 0.0)
        return 0.0;
    for (size_t i = 0; i + 1 < n; i++)
        num += (v[i] - m) * (v[i + 1] - m);
    return num / den;
}

static double batch_half_at(const double *v, size_t n, int batches, double conf)
{
    if (batches < 2 || batches > 10 || n < 4 * (size_t)batches)
        return 0.0;
    double logs[10], mean = 0.0, ss = 0.0;
    for (int b = 0; b < batches; b++) {
        size_t lo = (size_t)b * n / (size_t)batches, hi = (size_t)(b + 1) * n / (size_t)batches;
        double med = tpb_stats_median(v + lo, hi - lo);
        if (!(med > 0.0))
            return 0.0;
        logs[b] = log(med);
        mean += logs[b];
    }
    mean /= batches;
    for (int b = 0; b < batches; b++)
        ss += (logs[b] - mean) * (logs[b] - mean);
    return t_of(batches - 1, conf) * sqrt(ss / (batches - 1)) / sqrt((double)batches);
}

double tpb_interval_batch_half(const double *v, size_t n, int batches)
{
    return batch_half_at(v, n, batches, 0.95);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The normal quantile of two-sided confidence conf, and t's with df degrees of freedom: the
 * 95 % constants where conf is 0.95 (tpbal_stats.py's figures, bit for bit). */
static double z_of(double conf)
{
    return conf == 0.95 ? Z95 : tpb_interval_z(conf);
}

static double t_of(int df, double conf)
{
    return conf == 0.95 ? tpb_interval_t975(df) : tpb_interval_t(df, conf);
}

double tpb_interval_z(double conf)
{
    if (!(conf > 0.0 && conf < 1.0))
        return conf >= 1.0 ? INFINITY : 0.0;
    double lo = 0.0, hi = 40.0; /* erfc(z / sqrt 2) = 1 - conf, decreasing in z */
    for (int i = 0; i < 200 && hi - lo > 1e-12; i++) {
        double mid = 0.5 * (lo + hi);
        if (erfc(mid / sqrt(2.0)) > 1.0 - conf)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

/* P(|T| <= x) for Student's t with df degrees of freedom, in closed form (Abramowitz and
 * Stegun 26.7.3-4, theta = atan(x / sqrt(df))). */
static double t_central(int df, double x)
{
    const double pi = 3.14159265358979323846;
    double th = atan(x / sqrt((double)df)), s = sin(th), c = cos(th), c2 = c * c;
    if (df == 1)
        return 2.0 * th / pi;
    double term = df % 2 ? c : 1.0, sum = term;
    for (int k = df % 2 ? 3 : 2; k <= df - 2; k += 2) {
        term *= c2 * (double)(k - 1) / (double)k;
        sum += term;
    }
    return df % 2 ? 2.0 / pi * (th + s * sum) : s * sum;
}

double tpb_interval_t(int df, double conf)
{
    if (df < 1 || !(conf > 0.0 && conf < 1.0))
        return conf > 0.0 ? INFINITY : 0.0;
    double lo = 0.0, hi = 1.0;
    while (t_central(df, hi) < conf && hi < 1e6)
        hi *= 2.0;
    for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
        double mid = 0.5 * (lo + hi);
        if (t_central(df, mid) < conf)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

double tpb_interval_median_half(const double *v, size_t n)
{
    return tpb_interval_median_half_at(v, n, 0.95);
}

double tpb_interval_median_half_at(const double *v, size_t n, double conf)
{
    double *s = malloc((n ? n : 1) * sizeof(double));
    if (!s)
        return INFINITY;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (v[i] > 0.0)
            s[k++] = v[i];
    if (k < 3) {
        free(s);
        return INFINITY;
    }
    qsort(s, k, sizeof(double), cmp_double);
    double rho = fmin(fmax(tpb_interval_lag1(v, n), 0.0), 0.95);
    double ne = fmax(3.0, fmin((double)n, (double)n * (1.0 - rho) / (1.0 + rho)));
    /* the interval's ranks at the effective size, mapped back onto the k samples */
    double d = z_of(conf) * sqrt(ne) / 2.0 * ((double)k / ne);
    long l = (long)floor((double)k / 2.0 - d), u = (long)ceil((double)k / 2.0 + d) - 1;
    double lo = s[l < 0 ? 0 : l], hi = s[u > (long)k - 1 ? (long)k - 1 : u];
    double m = tpb_stats_median(s, k);
    double h = fmax(log(m / lo), log(hi / m));
    free(s);
    return fmax(h, batch_half_at(v, n, 5, conf));
}

/* a and b hold the same values, in any order */
static int same_samples(const double *a, size_t na, const double *b, size_t nb)
{
    if (na != nb)
        return 0;
    double *x = malloc((na ? na : 1) * 2 * sizeof(double));
    if (!x)
        return 0;
    memcpy(x, a, na * sizeof(double));
    memcpy(x + na, b, nb * sizeof(double));
    qsort(x, na, sizeof(double), cmp_double);
    qsort(x + na, nb, sizeof(double), cmp_double);
    int same = memcmp(x, x + na, na * sizeof(double)) == 0;
    free(x);
    return same;
}

tpb_ratio_ci_t tpb_interval_ratio(const double *a, size_t na, const double *b, size_t nb)
{
    return tpb_interval_ratio_at(a, na, b, nb, 0.95);
}

tpb_ratio_ci_t tpb_interval_ratio_at(const double *a, size_t na, const double *b, size_t nb,
                                     double conf)
{
    double ma = tpb_stats_median(a, na), mb = tpb_stats_median(b, nb);
    if (!(ma > 0.0) || !(mb > 0.0))
        return (tpb_ratio_ci_t){NAN, NAN, NAN, NAN};
    double h = 0.0;
    if (!same_samples(a, na, b, nb)) {
        double ha = tpb_interval_median_half_at(a, na, conf),
               hb = tpb_interval_median_half_at(b, nb, conf);
        h = sqrt(ha * ha + hb * hb);
    }
    double r = mb / ma;
    return (tpb_ratio_ci_t){r, isfinite(h) ? r * exp(-h) : 0.0, isfinite(h) ? r * exp(h) : INFINITY,
                            h};
}

double tpb_interval_t975(int df)
{
    if (df < 1)
        return INFINITY;
    if (df <= 9)
        return T975[df];
    double z = Z95, z3 = z * z * z, z5 = z3 * z * z, d = (double)df;
    return z + (z3 + z) / (4.0 * d) + (5.0 * z5 + 16.0 * z3 + 3.0 * z) / (96.0 * d * d);
}

tpb_ratio_ci_t tpb_interval_paired(const double *a, const double *b, size_t n, int rounds)
{
    return tpb_interval_paired_at(a, b, n, rounds, 0.95);
}

tpb_ratio_ci_t tpb_interval_paired_at(const double *a, const double *b, size_t n, int rounds,
                                      double conf)
{
    double ma = tpb_stats_median(a, n), mb = tpb_stats_median(b, n);
    if (!(ma > 0.0) || !(mb > 0.0))
        return (tpb_ratio_ci_t){NAN, NAN, NAN, NAN};
    double r = mb / ma, h = 0.0;
    if (!same_samples(a, n, b, n)) {
        h = INFINITY;
        double *q = rounds >= 3 && (size_t)rounds <= n ? malloc(n * sizeof(double)) : NULL;
        int ok = q != NULL;
        for (size_t i = 0; ok && i < n; i++) {
            ok = a[i] > 0.0 && b[i] > 0.0;
            q[i] = ok ? b[i] / a[i] : 0.0;
        }
        if (ok)
            h = tpb_interval_median_half_at(q, n, conf);
        free(q);
    }
    return (tpb_ratio_ci_t){r, isfinite(h) ? r * exp(-h) : 0.0, isfinite(h) ? r * exp(h) : INFINITY,
                            h};
}

tpb_verdict_t tpb_interval_decide(double r, double half, double tol)
{
    if (!(r > 0.0) || isnan(half))
        return TPB_VERDICT_INCONCLUSIVE;
    double d = log(r), t = log1p(tol);
    if (d - half > t)
        return TPB_VERDICT_WORSE;
    if (d + half < -t)
        return TPB_VERDICT_BETTER;
    if (d - half >= -t && d + half <= t)
        return TPB_VERDICT_DRAW;
    return TPB_VERDICT_INCONCLUSIVE;
}

double tpb_interval_detectable(double half, double tol)
{
    return isinf(half) ? INFINITY : expm1(log1p(tol) + half);
}

void tpb_interval_order(int k, int rounds, int *order)
{
    for (int j = 0; j < rounds; j++)
        for (int c = 0; c < k; c++)
            order[j * k + c] = j % 2 ? k - 1 - c : c;
}
