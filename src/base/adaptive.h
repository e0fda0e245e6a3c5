/*
 * adaptive.h - the decision of the adaptive policy (seed 1's "camera in the
 * kitchen"): after a round of measured iterations, each rank's speed is its
 * shard over its median compute time; the group re-partitions by those speeds
 * only when the predicted gain exceeds the round's own noise (hysteresis).
 * Pure: the sweep measures and rebuilds, this decides.
 */
#ifndef TPB_ADAPTIVE_H
#define TPB_ADAPTIVE_H

#include "base/tpb_status.h"

/**
 * One rank's round, as every rank of the world sees it (all-gathered):
 * median compute time over the round, the relative IQR of those times, the
 * median of x1 - c0 (compute + wait + collective), the rank's shard during
 * the round. X(C type, name, MPI datatype): the struct and its MPI datatype
 * (run/wire.c) come from this one list.
 */
#define TPB_ROUND_RANK_FIELDS(X)                                                                   \
    X(double, compute_us, MPI_DOUBLE)                                                              \
    X(double, spread, MPI_DOUBLE) X(double, span_us, MPI_DOUBLE) X(long, shard, MPI_LONG)

#define TPB_ROUND_FIELD_(type, name, mpi) type name;
typedef struct {
    TPB_ROUND_RANK_FIELDS(TPB_ROUND_FIELD_)
} tpb_round_rank_t;
#undef TPB_ROUND_FIELD_

/** Largest group the adaptive policy re-partitions (larger groups keep their shards). */
#define TPB_ADAPTIVE_MAX_TP 4096

/** Smallest predicted gain that re-partitions, whatever the noise. */
#define TPB_ADAPTIVE_MIN_GAIN 0.03

/**
 * For the group of t ranks starting at world rank g0: speeds s_r = shard_r /
 * compute_r, the weighted split of total at granularity g by those speeds
 * into new_shards[t], and the predicted gain = max_r compute_r / max_r
 * (new_shard_r / s_r) - 1. Returns 1 if the group should re-partition: the
 * gain exceeds max(TPB_ADAPTIVE_MIN_GAIN, 2 x the largest spread of the
 * round) and the shards change; 0 otherwise (new_shards then holds the
 * current ones). *gain receives the predicted gain (0 if not computable).
 */
int tpb_adaptive_decide(const tpb_round_rank_t *world, int g0, int t, long total, long g,
                        long *new_shards, double *gain);

/** Load balance of the group's round: min compute / max compute. */
double tpb_adaptive_round_lb(const tpb_round_rank_t *world, int g0, int t);

#endif /* TPB_ADAPTIVE_H */
