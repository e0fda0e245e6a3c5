/*
 * detect.h - a straggler that persists, told from one that passed: each config's measured
 * iterations are cut into blocks (its interleaved rounds, spread over its set's time, or
 * consecutive fifths), and in every block and TP group the rank computing at the lowest
 * rate (its work over its median compute in the block) is noted with its deficit. Over a
 * whole run's blocks a rank is a persistent straggler when it was the slowest of its
 * group in more blocks than chance allows at a stated false-alarm rate (a binomial test
 * against 1/tp, over the ranks, at the blocks' effective number: neighbours in time are
 * alike) and by at least TPB_DETECT_MIN_DEFICIT on median; a
 * rank that was the slowest in most blocks of one config only is a transient. Pure.
 */
#ifndef TPB_DETECT_H
#define TPB_DETECT_H

#include "base/timeline.h"

/** A slowdown below this (3 %) is not named, whatever the blocks say. */
#define TPB_DETECT_MIN_DEFICIT 0.03

/** The false-alarm rate the test is held to: 1 % (blocks independent, ranks equal). */
#define TPB_DETECT_ALPHA 0.01

/** One block of one TP group: its slowest rank (by position) and by how much. */
typedef struct {
    int rank;       /**< position of the rank with the lowest rate (-1: unknown) */
    double deficit; /**< 1 - its rate / the median of the others' rates in the group */
} tpb_slow_t;

/** Blocks of a config of `iters` iterations measured in `rounds` interleaved rounds
 *  (0: alone): its rounds, else 5 (fewer with fewer than 10 iterations: iters / 2). */
int tpb_detect_nblocks(int iters, int rounds);

/**
 * marks[world * iters] of a config (rank-major), work[world] each position's FLOPs: for
 * every block b of `blocks` and group g, out[b * (world / tp) + g]; and every position's
 * log rate over the median of the others' in its group, dev[b * world + r] (NaN:
 * unknown). Pure.
 */
void tpb_detect_blocks(const tpb_mark_t *marks, const double *work, int world, int tp, int iters,
                       int blocks, tpb_slow_t *out, double *dev);

/** What a run's blocks say of one rank. */
typedef struct {
    int rank;          /**< the rank most often slowest (-1: none) */
    int slowest, of;   /**< in this many blocks of this many */
    double deficit;    /**< its median deficit in those blocks */
    int persistent;    /**< more than chance allows at TPB_DETECT_ALPHA, by >= the minimum */
    int need;          /**< blocks a rank must be slowest in to be persistent */
    int effective;     /**< the blocks' worth of independent evidence (AR(1)) */
    double detectable; /**< the smallest slowdown these blocks would call persistent */
} tpb_persistent_t;

/**
 * Over nb blocks of a world of `world` ranks in groups of tp: s[nb * (world / tp)] and
 * dev[nb * world] as tpb_detect_blocks gives them (ranks as the caller names them): the
 * rank most often the slowest, and whether that persists. The smallest detectable
 * slowdown: with that rank's log rates against the others' spread by sigma over the blocks
 * (1.4826 x their median absolute deviation, which a steady slowdown does not move), the
 * slowdown s at which it would fall below them in `need` of the blocks,
 * Phi(-log(1 - s) / sigma) = need / blocks, at least TPB_DETECT_MIN_DEFICIT. Pure.
 */
tpb_persistent_t tpb_detect_persistent(const tpb_slow_t *s, const double *dev, int nb, int world,
                                       int tp);

/** tpb_detect_persistent's verdict from what it gathers of the blocks (for a caller that
 *  streams them: record/answer.c): the rank best (-1: none) slowest in count of the known
 *  blocks that named one, its deficits d[k] in them (NULL: unknown) and its log rate
 *  against the others' x[m] in every block, in time order. Pure. */
tpb_persistent_t tpb_detect_persistent_of(int best, int count, int known, const double *d, int k,
                                          const double *x, int m, int tp);

/** Blocks a rank must be slowest in, of n, to be more than chance (1/tp each) at alpha
 *  over tp ranks: the least k with tp P(Bin(n, 1/tp) >= k) <= alpha (n + 1: never). */
int tpb_detect_need(int n, int tp, double alpha);

#endif /* TPB_DETECT_H */
