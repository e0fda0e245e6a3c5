/* disturb.c - a series of steps judged one figure or not (disturb.h). */
#include "base/disturb.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/stats.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The best 2-means split of sorted v[n]: the low group is v[0, *cut). Prefix sums make each
 * candidate O(1). Returns the smallest within-group sum of squares. */
static double best_split(const double *v, int n, int least, int *cut)
{
    double total = 0.0, total2 = 0.0, s = 0.0, s2 = 0.0, best = INFINITY;
    for (int i = 0; i < n; i++)
        total += v[i], total2 += v[i] * v[i];
    *cut = -1;
    for (int i = 0; i < n - 1; i++) {
        s += v[i], s2 += v[i] * v[i];
        int a = i + 1, b = n - a;
        if (a < least || b < least)
            continue;
        double w = (s2 - s * s / a) + ((total2 - s2) - (total - s) * (total - s) / b);
        if (w < best)
            best = w, *cut = a;
    }
    return best;
}

static void mean_sd(const double *v, int n, double *m, double *sd)
{
    double s = 0.0, s2 = 0.0;
    for (int i = 0; i < n; i++)
        s += v[i], s2 += v[i] * v[i];
    *m = s / n;
    double var = s2 / n - *m * *m;
    *sd = var > 0.0 ? sqrt(var) : 0.0;
}

tpb_disturb_t tpb_disturb_judge(const double *steps, int n)
{
    tpb_disturb_t d = {.verdict = TPB_UNDECIDED,
                       .p95_ratio = NAN,
                       .low_us = NAN,
                       .high_us = NAN,
                       .high_share = NAN,
                       .ashman = NAN};
    double *v = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    int k = 0;
    for (int i = 0; v && i < n; i++)
        if (steps[i] > 0.0 && isfinite(steps[i]))
            v[k++] = steps[i];
    if (!v || k < TPB_DISTURB_MIN_STEPS) {
        free(v);
        return d;
    }
    qsort(v, (size_t)k, sizeof(double), cmp_double);
    double med = tpb_stats_median(v, (size_t)k);
    d.p95_ratio = tpb_stats_quantile(v, (size_t)k, 0.95) / med;
    d.spiky = d.p95_ratio > TPB_DISTURB_P95;
    int least = k / 10 > 3 ? k / 10 : 3, cut;
    for (int i = 0; i < k; i++)
        v[i] = log(v[i]);
    best_split(v, k, least, &cut);
    if (cut > 0) {
        double m1, s1, m2, s2;
        mean_sd(v, cut, &m1, &s1);
        mean_sd(v + cut, k - cut, &m2, &s2);
        double spread = sqrt(s1 * s1 + s2 * s2);
        d.ashman = spread > 0.0 ? sqrt(2.0) * (m2 - m1) / spread : INFINITY;
        d.low_us = exp(tpb_stats_median(v, (size_t)cut));
        d.high_us = exp(tpb_stats_median(v + cut, (size_t)(k - cut)));
        d.high_share = (double)(k - cut) / k;
        d.bimodal = d.ashman >= TPB_DISTURB_ASHMAN && d.high_us >= TPB_DISTURB_RATIO * d.low_us;
    }
    if (!d.bimodal)
        d.low_us = d.high_us = d.high_share = NAN;
    d.verdict = d.bimodal || d.spiky ? TPB_DISTURBED : TPB_STEADY;
    free(v);
    return d;
}

const char *tpb_disturb_name(tpb_disturb_verdict_t v)
{
    switch (v) {
    case TPB_STEADY: return "steady";
    case TPB_DISTURBED: return "disturbed";
    case TPB_UNDECIDED: return "not enough data";
    }
    return "?";
}

/* A step in microseconds: whole ones from 100 up, three digits below (never an exponent). */
static void fmt_us(char *out, size_t cap, double us)
{
    snprintf(out, cap, us >= 100.0 ? "%.0f" : us >= 10.0 ? "%.1f" : "%.2f", us);
}

void tpb_disturb_describe(const tpb_disturb_t *d, char *out, unsigned long cap)
{
    int len = 0;
    char lo[32], hi[32];
    out[0] = '\0';
    if (d->verdict != TPB_DISTURBED)
        return;
    fmt_us(lo, sizeof(lo), d->low_us);
    fmt_us(hi, sizeof(hi), d->high_us);
    if (d->bimodal)
        len = snprintf(out, cap, "steps bimodal: %s us in %.0f %%, %s us in %.0f %%", lo,
                       100.0 * (1.0 - d->high_share), hi, 100.0 * d->high_share);
    if (d->spiky && len >= 0 && (unsigned long)len < cap)
        snprintf(out + len, cap - (unsigned long)len, "%sspiky steps: p95 %.2f x the median",
                 len ? "; " : "", d->p95_ratio);
}
