/*
 * gather.h - a config's timelines to rank 0 without every mark (--gather parts): whoever
 * holds whole TP groups' marks (in tpbal, each group's first rank, once the group gathered
 * its marks to it) analyses them in parts (base/timeline_part.h); the per-iteration
 * summaries are reduced to rank 0 (MPI_Reduce with an order-free operation: a tree over
 * the ranks; Open MPI's hierarchical component, han, where enabled, reduces per node first);
 * every group's fixed-size record is gathered (1,112 bytes a group at TP 8 and 5 blocks: 139
 * a rank); rank 0 finishes the analysis, picks the groups whose whole timelines it keeps (the
 * straggler's, the step setters', a sample) and gathers only theirs. Every count and
 * displacement MPI sees is in groups (a datatype per group record, per group's marks), at
 * most the number of groups: none can overflow at any world size MPI allows
 * (tpb_gather_counts, tests/test_gather.c).
 */
#ifndef TPB_GATHER_H
#define TPB_GATHER_H

#include <mpi.h>

#include "base/timeline_part.h"
#include "record/result.h"

/** What is gathered. */
typedef struct {
    int world, tp, iters;
    int nb;         /**< blocks per group for base/detect.h (0: none) */
    int max_groups; /**< groups whose marks rank 0 keeps (>= 1) */
} tpb_gather_spec_t;

/** Rank 0's, after tpb_gather_parts; free with tpb_gathered_free. */
typedef struct {
    tpb_rank_stats_t *ranks; /**< [world] */
    tpb_config_stats_t cfg;
    tpb_whatif_t whatif;
    double *steps;     /**< [iters] */
    int nb;            /**< blocks per group */
    tpb_slow_t *slow;  /**< [nb * groups] (NULL at nb 0) */
    double *dev;       /**< [nb * world] */
    int ngroups;       /**< the picked groups */
    int *groups;       /**< [ngroups], ascending */
    tpb_mark_t *marks; /**< [ngroups * tp * iters], group by group */
} tpb_gathered_t;

/** The marks of local group j (of the caller's nlocal), tp * iters of them, rank-major. */
typedef const tpb_mark_t *(*tpb_group_marks_fn)(void *ctx, int j);

/**
 * Collective over comm (rank 0 receives): each rank holds nlocal whole groups, first_group
 * first (consecutive), already analysed into records (nlocal of them) and sums[iters]
 * (tpb_timeline_part; nlocal 0: init'ed sums). marks(ctx, j) gives local group j's marks
 * when rank 0 picks it. On rank 0, out receives the analysis. TPB_ERR_MPI, TPB_ERR_NOMEM
 * (rank 0's), agreed by the caller.
 */
tpb_status_t tpb_gather_parts(MPI_Comm comm, const tpb_gather_spec_t *spec, int nlocal,
                              int first_group, const void *records, const tpb_iter_sum_t *sums,
                              tpb_group_marks_fn marks, void *ctx, tpb_gathered_t *out);

void tpb_gathered_free(tpb_gathered_t *g);

/** What the gather analysed, into res (borrowed from g: free g after res is recorded);
 *  res's world and tp are set. */
void tpb_gathered_into(const tpb_gathered_t *g, tpb_result_t *res);

/**
 * The counts and displacements of the two gathers, in groups: have[2 * size] each rank's
 * (nlocal, first_group); picks[npick] ascending. rec_*: every group record (rank r sends
 * its nlocal at first_group); mark_*: the picked groups' marks (rank r sends the picks in
 * its range, placed at the first one's index in picks). Pure.
 */
void tpb_gather_counts(const int *have, int size, const int *picks, int npick, int *rec_counts,
                       int *rec_displs, int *mark_counts, int *mark_displs);

#endif /* TPB_GATHER_H */
