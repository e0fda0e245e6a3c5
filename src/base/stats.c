/* stats.c - order statistics of plain arrays (see base/stats.h). */
#include "base/stats.h"

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
double tpb_stats_quantile(const double *v, size_t n, double q)
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

double tpb_stats_median(const double *v, size_t n)
{
    return tpb_stats_quantile(v, n, 0.5);
}

double tpb_stats_min(const double *v, size_t n)
{
    double m = n ? v[0] : NAN;
    for (size_t i = 1; i < n; i++)
        m = v[i] < m ? v[i] : m;
    return m;
}

double tpb_stats_max(const double *v, size_t n)
{
    double m = n ? v[0] : NAN;
    for (size_t i = 1; i < n; i++)
        m = v[i] > m ? v[i] : m;
    return m;
}

double tpb_stats_sum(const double *v, size_t n)
{
    double s = 0.0;
    for (size_t i = 0; i < n; i++)
        s += v[i];
    return s;
}
