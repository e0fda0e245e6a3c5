/*
 * stats.h - order statistics of plain arrays: quantiles, median, min, max, sum. Pure:
 * nothing is allocated but one scratch copy, nothing is printed.
 */
#ifndef TPB_STATS_H
#define TPB_STATS_H

#include <stddef.h>

/** Quantile q in [0,1] of v[n] by linear interpolation between order statistics
 *  (q = 0.5: median), in expected linear time (a selection, not a sort). v is not
 *  modified. n == 0 gives NaN. */
double tpb_stats_quantile(const double *v, size_t n, double q);

/** Median of v[n] (tpb_stats_quantile(v, n, 0.5)). */
double tpb_stats_median(const double *v, size_t n);

/** Minimum / maximum / sum of v[n] (NaN for n == 0 except sum = 0). */
double tpb_stats_min(const double *v, size_t n);
double tpb_stats_max(const double *v, size_t n);
double tpb_stats_sum(const double *v, size_t n);

#endif /* TPB_STATS_H */
