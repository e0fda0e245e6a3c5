/* partition_cost.c - the contiguous split that minimises the largest cost / speed. */
#include "base/partition.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* prefix[u] = cost of units [0, u). */
static double span(const double *prefix, long i, long j)
{
    return prefix[j] - prefix[i];
}

/* reach[r * (U + 1) + j] = 1 if ranks 0..r can cover units [0, j) in time T, each rank
 * at least one unit. From every end i ranks 0..r-1 reach, rank r reaches (i, f(i)] with
 * f(i) the last end it can afford; f grows with i, so the largest reachable i < j
 * decides j. Returns 1 if all U units are covered by the t ranks. */
static int feasible(const double *prefix, long U, int t, const double *speeds, double T,
                    unsigned char *reach)
{
    size_t w = (size_t)U + 1;
    memset(reach, 0, w);
    reach[0] = 1; /* zero ranks cover nothing */
    for (int r = 0; r < t; r++) {
        const unsigned char *prev = reach + (size_t)r * w;
        unsigned char *cur = reach + (size_t)(r + 1) * w;
        double budget = T * speeds[r] * (1.0 + 1e-12);
        long last = -1, f = 0; /* last reachable i < j, and its f(i) */
        memset(cur, 0, w);
        for (long j = 1; j <= U; j++) {
            if (prev[j - 1]) {
                last = j - 1;
                if (f < last)
                    f = last;
                while (f < U && span(prefix, last, f + 1) <= budget)
                    f++;
            }
            cur[j] = last >= 0 && f >= j;
        }
    }
    return reach[(size_t)t * w + (size_t)U];
}

/* The ends of the ranks at time T (feasible), walked back from U. */
static void ends(const double *prefix, long U, int t, const double *speeds, double T,
                 const unsigned char *reach, long *counts)
{
    size_t w = (size_t)U + 1;
    long end = U;
    for (int r = t - 1; r >= 0; r--) {
        double budget = T * speeds[r] * (1.0 + 1e-12);
        long i = end - 1; /* the latest start that ranks 0..r-1 reach: the least for rank r */
        while (i > 0 && !(reach[(size_t)r * w + (size_t)i] && span(prefix, i, end) <= budget))
            i--;
        counts[r] = end - i;
        end = i;
    }
}

tpb_status_t tpb_partition_cost(const double *ucost, long units, int t, const double *speeds,
                                long *counts, double *tmax)
{
    if (t < 1 || units < t)
        return tpb_err_set(TPB_ERR_INVALID, "cost split: %ld units cannot be split over %d ranks",
                           units, t);
    TPB_CHECK_RET(tpb_speeds_check(speeds, t, "cost split"));
    double *prefix = malloc(((size_t)units + 1) * sizeof(double));
    unsigned char *reach = malloc(((size_t)t + 1) * ((size_t)units + 1));
    if (!prefix || !reach) {
        free(prefix);
        free(reach);
        return tpb_err_set(TPB_ERR_NOMEM, "cost split: out of memory for %ld units", units);
    }
    prefix[0] = 0.0;
    double smin = INFINITY;
    for (long u = 0; u < units; u++)
        prefix[u + 1] = prefix[u] + (ucost[u] > 0.0 ? ucost[u] : 0.0);
    for (int r = 0; r < t; r++)
        smin = fmin(smin, speeds[r]);
    double lo = 0.0, hi = prefix[units] / smin; /* any split finishes within hi */
    for (int it = 0; it < 200 && hi - lo > 1e-13 * hi; it++) {
        double mid = 0.5 * (lo + hi);
        if (feasible(prefix, units, t, speeds, mid, reach))
            hi = mid;
        else
            lo = mid;
    }
    feasible(prefix, units, t, speeds, hi, reach);
    ends(prefix, units, t, speeds, hi, reach, counts);
    if (tmax) {
        double m = 0.0;
        long at = 0;
        for (int r = 0; r < t; r++) {
            m = fmax(m, span(prefix, at, at + counts[r]) / speeds[r]);
            at += counts[r];
        }
        *tmax = m;
    }
    free(prefix);
    free(reach);
    return TPB_OK;
}
