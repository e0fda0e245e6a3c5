/* whatif.c - the replayed step with medians in place of each rank's compute. */
#include "base/whatif.h"

#include <math.h>
#include <stdlib.h>

#include "base/metrics.h"

#define M(r, i) marks[(size_t)(r)*iters + (i)]

/* Median of comp[0, tp) leaving out index skip (all of them when tp == 1). */
static double median_without(const double *comp, int tp, int skip, double *scratch)
{
    int n = 0;
    for (int r = 0; r < tp; r++)
        if (r != skip || tp == 1)
            scratch[n++] = comp[r];
    return tpb_stats_median(scratch, (size_t)n);
}

double tpb_whatif_group_step(const tpb_mark_t *marks, int tp, int iters, int g, int i,
                             int only_rank, double *scratch)
{
    int r0 = g * tp, slowest = 0;
    double *comp = scratch, a = -INFINITY, c0 = INFINITY, x1 = -INFINITY;
    for (int r = r0; r < r0 + tp; r++) {
        comp[r - r0] = M(r, i).c1 - M(r, i).c0;
        slowest = comp[r - r0] > comp[slowest] ? r - r0 : slowest;
        a = fmax(a, M(r, i).c1);
        c0 = fmin(c0, M(r, i).c0);
        x1 = fmax(x1, M(r, i).x1);
    }
    int skip = only_rank == TPB_WHATIF_ALL ? slowest : only_rank - r0;
    double ref = only_rank == TPB_WHATIF_NONE ? 0.0 : median_without(comp, tp, skip, scratch + tp);
    double arrive = -INFINITY;
    for (int r = r0; r < r0 + tp; r++) {
        int replace = only_rank == TPB_WHATIF_ALL || r == only_rank;
        arrive = fmax(arrive, replace ? M(r, i).c0 + ref : M(r, i).c1);
    }
    return arrive + fmax(x1 - a, 0.0) - c0;
}

/* Median over iterations of the largest replayed group step. */
static double replay(const tpb_mark_t *marks, int world, int tp, int iters, int only_rank,
                     double *scratch, double *steps)
{
    for (int i = 0; i < iters; i++) {
        steps[i] = -INFINITY;
        for (int g = 0; g < world / tp; g++) {
            int mine = only_rank == TPB_WHATIF_ALL || only_rank / tp == g;
            double s = tpb_whatif_group_step(marks, tp, iters, g, i,
                                             mine ? only_rank : TPB_WHATIF_NONE, scratch);
            steps[i] = fmax(steps[i], s);
        }
    }
    return tpb_stats_median(steps, (size_t)iters);
}

tpb_status_t tpb_whatif_replay(const tpb_mark_t *marks, int world, int tp, int iters, int straggler,
                               double step_med, tpb_whatif_t *out)
{
    double *scratch = malloc((2 * (size_t)tp + (size_t)iters) * sizeof(double));
    if (!scratch)
        return tpb_err_set(TPB_ERR_NOMEM, "what-if replay: out of memory (%d iterations)", iters);
    double *steps = scratch + 2 * tp;
    tpb_whatif_t w;
    w.step_us = replay(marks, world, tp, iters, TPB_WHATIF_ALL, scratch, steps);
    w.slowdown = w.step_us > 0.0 ? step_med / w.step_us : NAN;
    w.straggler_step_us = w.straggler_slowdown = NAN;
    if (straggler >= 0 && straggler < world && tp > 1) {
        w.straggler_step_us = replay(marks, world, tp, iters, straggler, scratch, steps);
        w.straggler_slowdown = w.straggler_step_us > 0.0 ? step_med / w.straggler_step_us : NAN;
    }
    free(scratch);
    *out = w;
    return TPB_OK;
}
