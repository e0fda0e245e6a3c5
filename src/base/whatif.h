/*
 * whatif.h - what-if replay of a config's timeline: the step each iteration
 * would have taken had the ranks computed at their group's median speed, as
 * in the straggler analyses of large training fleets. Pure: no MPI, no I/O.
 *
 * Replay of iteration i in group g, with comp'_r the replaced compute time:
 *   A'    = max_r (c0_r + comp'_r)           the replayed last arrival
 *   xfer  = max_r x1_r - A  (not below 0)    the collective once all arrived
 *   step' = A' + xfer - min_r c0_r
 * The iteration's replayed step is the largest over the groups, as for the
 * measured step (base/timeline.h); the config's is its median over iterations.
 */
#ifndef TPB_WHATIF_H
#define TPB_WHATIF_H

#include "base/timeline.h"
#include "base/tpb_status.h"

typedef struct {
    double step_us;            /**< every rank's compute = its group's median that iteration */
    double slowdown;           /**< S = measured median step / step_us */
    double straggler_step_us;  /**< only the straggler's compute replaced (NaN at tp 1) */
    double straggler_slowdown; /**< measured median step / straggler_step_us */
} tpb_whatif_t;

/**
 * Replay marks[world * iters] (rank-major, groups of tp consecutive ranks).
 * straggler is the rank whose compute the second replay replaces (-1: none),
 * step_med the measured median step. TPB_ERR_NOMEM if scratch space cannot be
 * allocated (out untouched).
 */
tpb_status_t tpb_whatif_replay(const tpb_mark_t *marks, int world, int tp, int iters, int straggler,
                               double step_med, tpb_whatif_t *out);

enum { TPB_WHATIF_ALL = -1, TPB_WHATIF_NONE = -2 };

/** Replayed step of group g in iteration i: every rank's compute replaced
 *  (TPB_WHATIF_ALL), none (TPB_WHATIF_NONE: the measured step when no
 *  collective ends before the last arrival), or only rank only_rank's.
 *  scratch holds tp doubles. */
double tpb_whatif_group_step(const tpb_mark_t *marks, int tp, int iters, int g, int i,
                             int only_rank, double *scratch);

#endif /* TPB_WHATIF_H */
