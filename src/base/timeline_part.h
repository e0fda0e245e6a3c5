/*
 * timeline_part.h - the timeline analysis in parts, for a gather that does not bring every
 * mark to rank 0 (run/gather.h). Each part (a set of whole TP groups, analysed where their
 * marks are) gives what its groups say of themselves, a fixed-size record per group (its
 * ranks' statistics, its violations, its blocks of base/detect.h), and one summary per
 * iteration over its groups, which merges with another part's by a commutative,
 * associative operation (the step-setting group by the largest step, the least group on
 * ties as tpb_timeline_analyse takes it; maxima and minima). From the merged summaries and
 * every group's record, rank 0 finishes the config's statistics, the steps and the what-if
 * replays (the straggler's one with its group's marks): the same figures, bit for bit, as
 * tpb_timeline_analyse, tpb_whatif_replay, tpb_timeline_violations and tpb_detect_blocks
 * on all the marks (tests/test_gather.c). Pure: no MPI, no I/O.
 */
#ifndef TPB_TIMELINE_PART_H
#define TPB_TIMELINE_PART_H

#include <stddef.h>

#include "base/detect.h"
#include "base/timeline.h"
#include "base/whatif.h"

/** One iteration over a set of groups. */
typedef struct {
    double step;        /**< largest group step, max x1 - min c0 */
    double set_group;   /**< the group that set it (the least on ties) */
    double set_last;    /**< the position of its last arrival */
    double set_xfer;    /**< its max x1 - A */
    double set_comp;    /**< its ranks' mean compute */
    double xfer;        /**< the largest max x1 - A over the groups */
    double free_x;      /**< the least x1 - c1 over the ranks */
    double all_step;    /**< the largest all-ranks replayed step (base/whatif.h) */
    double none1;       /**< the largest un-replayed group step */
    double none1_group; /**< whose */
    double none2;       /**< the second largest (the largest without none1's group) */
} tpb_iter_sum_t;

/** The doubles of one iteration's summary (its MPI type: that many MPI_DOUBLE). */
#define TPB_ITER_SUM_DOUBLES ((int)(sizeof(tpb_iter_sum_t) / sizeof(double)))

/** sums[iters] set to the summary of no group (the identity of the merge). */
void tpb_iter_sum_init(tpb_iter_sum_t *sums, int iters);

/** into[i] = the summary over into[i]'s groups and from[i]'s (commutative, associative). */
void tpb_iter_sum_merge(tpb_iter_sum_t *into, const tpb_iter_sum_t *from, int iters);

/** Bytes of one group's record at tp ranks and nb blocks (a multiple of 8). */
size_t tpb_part_record_bytes(int tp, int nb);

/** A group's record, as views into its bytes. */
typedef struct {
    tpb_rank_stats_t *ranks; /**< [tp] */
    tpb_slow_t *slow;        /**< [nb]: the group's slowest rank per block (a position) */
    double *dev;             /**< [nb * tp]: its ranks' log rates per block */
    double *violations;      /**< [1]: its (rank, iteration) causality violations */
} tpb_part_view_t;

/** The views of the record at rec (tpb_part_record_bytes(tp, nb) bytes). */
tpb_part_view_t tpb_part_view(void *rec, int tp, int nb);

/**
 * Analyse ngroups whole groups whose marks are here (marks[ngroups * tp * iters],
 * rank-major, group first_group first). unc[ngroups * tp]: the ranks' clock
 * uncertainties (NULL: 0); work[ngroups * tp]: their FLOPs (NULL or nb 0: no blocks).
 * records receive ngroups records, sums[iters] the summary over these groups.
 * TPB_ERR_NOMEM if scratch space cannot be had (outputs partial).
 */
tpb_status_t tpb_timeline_part(const tpb_mark_t *marks, int ngroups, int tp, int iters,
                               int first_group, const double *unc, const double *work, int nb,
                               void *records, tpb_iter_sum_t *sums);

/**
 * Rank 0's part: from the merged sums[iters] and every group's record (records of
 * world / tp groups in group order), ranks[world] and slow[nb * groups], dev[nb * world]
 * (tpb_detect_blocks' layout; NULL: not wanted), step[iters] and cfg, as
 * tpb_timeline_analyse gives them (its causality violations: the records' sum). scratch:
 * 4 iters doubles.
 */
void tpb_timeline_finish(const tpb_iter_sum_t *sums, const void *records, int world, int tp,
                         int iters, int nb, tpb_rank_stats_t *ranks, tpb_slow_t *slow, double *dev,
                         double *step, double *scratch, tpb_config_stats_t *cfg);

/**
 * The what-if replays from the merged sums and, for the straggler's, the marks of its group
 * (gmarks[tp * iters]; NULL or straggler < 0: none), as tpb_whatif_replay gives them.
 * TPB_ERR_NOMEM if scratch space cannot be had.
 */
tpb_status_t tpb_whatif_from_parts(const tpb_iter_sum_t *sums, int iters, int tp,
                                   const tpb_mark_t *gmarks, int straggler, double step_med,
                                   tpb_whatif_t *out);

/**
 * The groups whose whole timelines rank 0 keeps, at most max (>= 1), ascending in out[]:
 * the straggler's, the groups that set the step of the spikes, then of the most
 * iterations, then a sample spread evenly over the rest. Returns how many.
 */
int tpb_timeline_pick_groups(const tpb_iter_sum_t *sums, int iters, int groups, int tp,
                             const tpb_config_stats_t *cfg, int max, int *out);

#endif /* TPB_TIMELINE_PART_H */
