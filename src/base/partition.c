/* partition.c - even and weighted (largest remainder) splits at a granularity. */
#include "base/partition.h"

#include <math.h>

static tpb_status_t check_sizes(long total, int t, long g)
{
    if (t < 1)
        return tpb_err_set(TPB_ERR_INVALID, "TP degree %d: must be at least 1", t);
    if (g < 1)
        return tpb_err_set(TPB_ERR_INVALID, "granularity %ld: must be at least 1", g);
    if (total / g < t)
        return tpb_err_set(TPB_ERR_INVALID,
                           "dimension %ld cannot be split into %d shards of at least %ld "
                           "(granularity): use a larger shape, a smaller --tp or --granularity",
                           total, t, g);
    return TPB_OK;
}

tpb_status_t tpb_partition_even(long total, int t, long g, long *shards)
{
    TPB_CHECK_RET(check_sizes(total, t, g));
    long units = total / g;
    for (int r = 0; r < t; r++)
        shards[r] = (units / t + (r < units % t ? 1 : 0)) * g;
    shards[t - 1] += total % g;
    return TPB_OK;
}

/* Index of the shard whose rounding went furthest in direction dir (+1: most under
 * its quota, -1: most over), among shards that may move that way. */
static int pick_shard(const long *units, const double *quota, int t, int dir)
{
    int best = -1;
    double best_gap = -INFINITY;
    for (int r = 0; r < t; r++) {
        if (dir < 0 && units[r] <= 1)
            continue;
        double gap = dir * (quota[r] - (double)units[r]);
        if (gap > best_gap) {
            best_gap = gap;
            best = r;
        }
    }
    return best;
}

tpb_status_t tpb_speeds_check(const double *speeds, int t, const char *what)
{
    double lo = INFINITY, hi = 0.0;
    for (int r = 0; r < t; r++) {
        if (!isfinite(speeds[r]) || speeds[r] <= 0.0)
            return tpb_err_set(TPB_ERR_INVALID,
                               "%s: speed of rank %d is %g: speeds must be positive finite "
                               "numbers",
                               what, r, speeds[r]);
        lo = fmin(lo, speeds[r]);
        hi = fmax(hi, speeds[r]);
    }
    if (t > 0 && hi / lo > TPB_SPEED_MAX_RATIO)
        return tpb_err_set(TPB_ERR_INVALID,
                           "%s: the fastest speed is %.3g times the slowest, more than the %.0e a "
                           "weighted split takes: check the numbers",
                           what, hi / lo, TPB_SPEED_MAX_RATIO);
    return TPB_OK;
}

tpb_status_t tpb_partition_weighted(long total, int t, long g, const double *speeds, long *shards,
                                    double *fractions)
{
    TPB_CHECK_RET(check_sizes(total, t, g));
    TPB_CHECK_RET(tpb_speeds_check(speeds, t, "weighted split"));
    double top = 0.0, sum = 0.0;
    for (int r = 0; r < t; r++)
        top = fmax(top, speeds[r]);
    for (int r = 0; r < t; r++) /* scaled by the largest: at most t, never infinite */
        sum += speeds[r] / top;
    long units_total = total / g;
    long units[t];
    double quota[t];
    long assigned = 0;
    for (int r = 0; r < t; r++) {
        quota[r] = (double)units_total * (speeds[r] / top) / sum;
        units[r] = (long)floor(quota[r]);
        if (units[r] < 1)
            units[r] = 1;
        assigned += units[r];
    }
    /* Each step moves one unit and the loop ends at the exact sum: with finite quotas and
     * units_total >= t a shard to move always exists (checked, never assumed). */
    while (assigned != units_total) {
        int dir = assigned < units_total ? +1 : -1, r = pick_shard(units, quota, t, dir);
        if (r < 0)
            return tpb_err_set(TPB_ERR_INVALID, "weighted split: no shard can move (internal)");
        units[r] += dir;
        assigned += dir;
    }
    for (int r = 0; r < t; r++) {
        shards[r] = units[r] * g;
        if (fractions)
            fractions[r] = (speeds[r] / top) / sum;
    }
    shards[t - 1] += total % g;
    return TPB_OK;
}

void tpb_partition_offsets(const long *shards, int t, long *offsets)
{
    long off = 0;
    for (int r = 0; r < t; r++) {
        offsets[r] = off;
        off += shards[r];
    }
}

long tpb_split_total(const tpb_shape_t *sh, tpb_split_t split)
{
    return split == TPB_SPLIT_ROW && !sh->comm_only ? sh->k : sh->n;
}

void tpb_repeat_plan(double f, long n, int *full, long *extra_cols)
{
    double work = (double)n / f; /* columns to compute in all */
    *full = (int)floor(work / (double)n);
    if (*full < 1)
        *full = 1;
    *extra_cols = lround(work - (double)*full * (double)n);
    if (*extra_cols < 0)
        *extra_cols = 0;
    if (*extra_cols > n)
        *extra_cols = n;
}
