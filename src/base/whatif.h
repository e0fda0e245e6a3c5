/*
 * whatif.h - what-if replay of a config's timeline: the step each iteration
 * would have taken without its straggler, as in the straggler analyses of
 * large training fleets. Pure: no MPI, no I/O.
 *
 * Replay of iteration i in group g, with comp'_r the replaced compute time:
 *   A'    = max_r (c0_r + comp'_r)           the replayed last arrival
 *   xfer  = max_r x1_r - A  (not below 0)    the collective once all arrived
 *   step' = A' + xfer - min_r c0_r
 * The replaced compute is always what the *other* ranks took, never a figure
 * the straggler is part of (the median of two ranks is their mean: it would
 * keep half the straggler's delay):
 *   straggler replay: rank s's compute = the median of its peers' that
 *                     iteration (the others keep theirs);
 *   all-ranks replay: every rank's compute = the median of the group without
 *                     that iteration's slowest rank (at TP 1, its own).
 * The iteration's replayed step is the largest over the groups, as for the
 * measured step (base/timeline.h); the config's is its median over iterations.
 * bench/validate holds it against reruns without the fault (doc/METRICS.md).
 */
#ifndef TPB_WHATIF_H
#define TPB_WHATIF_H

#include "base/timeline.h"
#include "base/tpb_status.h"

typedef struct {
    double step_us;            /**< every rank's compute = the group's median without its
                                    slowest rank, that iteration */
    double slowdown;           /**< S = measured median step / step_us */
    double straggler_step_us;  /**< only the straggler's compute replaced by its peers'
                                    median (NaN at tp 1) */
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
 *  collective ends before the last arrival), or only rank only_rank's (by its
 *  peers' median). scratch holds 2 tp doubles. */
double tpb_whatif_group_step(const tpb_mark_t *marks, int tp, int iters, int g, int i,
                             int only_rank, double *scratch);

#endif /* TPB_WHATIF_H */
