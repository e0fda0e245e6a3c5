/*
 * partition.h - how a dimension of the layer is split over the t ranks of a TP
 * group. Pure functions: no MPI, no I/O; only tpb_partition_cost allocates.
 */
#ifndef TPB_PARTITION_H
#define TPB_PARTITION_H

#include "base/tpb_status.h"
#include "base/tpb_types.h"

/**
 * Even split of total elements into t shards in units of granularity g: every
 * shard gets floor(U/t) or ceil(U/t) units (U = total / g, the first shards
 * take the extra units) and the last shard also takes total mod g elements.
 * shards[t] receives the sizes; sum(shards) == total and every shard >= g.
 * Returns TPB_ERR_INVALID (with a message) if t < 1, g < 1 or total < t*g.
 * On error shards is not written.
 */
tpb_status_t tpb_partition_even(long total, int t, long g, long *shards);

/** Largest ratio of the fastest to the slowest speed in one group that a weighted
 *  split takes (a million: beyond it the numbers are an error, not hardware). */
#define TPB_SPEED_MAX_RATIO 1e6

/**
 * Check speeds[t] at a boundary (--speeds, a calibration file, a calibration):
 * each finite and > 0, and max / min <= TPB_SPEED_MAX_RATIO. TPB_ERR_INVALID
 * naming `what` and the offending index otherwise. Pure.
 */
tpb_status_t tpb_speeds_check(const double *speeds, int t, const char *what);

/**
 * Weighted split: shard_r proportional to speeds[r], rounded by the largest
 * remainder method in units of g, every shard at least g, sum exactly total
 * (total mod g elements go to the last shard, as for the even split).
 * fractions[t] (may be NULL) receives the intended fractions speeds[r]/sum.
 * Preconditions, checked (TPB_ERR_INVALID, nothing written): t >= 1, g >= 1,
 * total >= t*g, every speed finite and > 0 with max / min at most
 * TPB_SPEED_MAX_RATIO (tpb_speeds_check). Speeds are scaled by their largest
 * before summing, so no finite input overflows.
 */
tpb_status_t tpb_partition_weighted(long total, int t, long g, const double *speeds, long *shards,
                                    double *fractions);

/**
 * Cost-aware split (--policy cost): the contiguous split of `units` units of cost
 * ucost[u] (>= 0) over t ranks of speeds[t], in rank order and at least one unit each,
 * that minimises the largest rank time (sum of its units' costs) / speeds[r]. Optimal
 * (to 1e-12 relative): a bisection on that time, each step deciding by the ends the
 * ranks can reach in order. counts[t] receives the units of every rank and *tmax (may
 * be NULL) the largest rank time. TPB_ERR_INVALID (nothing written) if units < t or a
 * speed fails tpb_speeds_check; TPB_ERR_NOMEM (it allocates units + 1 bytes per rank).
 */
tpb_status_t tpb_partition_cost(const double *ucost, long units, int t, const double *speeds,
                                long *counts, double *tmax);

/** Offsets of the shards: offsets[r] = sum of shards[0..r-1]. */
void tpb_partition_offsets(const long *shards, int t, long *offsets);

/** Length of the dimension that split cuts: K for row, N for col. */
long tpb_split_total(const tpb_shape_t *sh, tpb_split_t split);

/**
 * Work-based emulation of speed factor f for a GEMM with n output columns: run
 * it `full` times in all, plus one more over extra_cols columns, so that the
 * work is about n / f columns (used by the host's --emulate-mode work and the
 * GPU's fallback when green contexts are unavailable). Pure.
 */
void tpb_repeat_plan(double f, long n, int *full, long *extra_cols);

#endif /* TPB_PARTITION_H */
