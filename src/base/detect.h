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

/** --budget measures a set again while its blocks could still miss a persistent straggler
 *  this much slower (10 %): neither named one nor could have named one of this size. */
#define TPB_DETECT_BUDGET_TARGET 0.10

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

/**
 * rate[blocks * world] (a position's rate in a block, e.g. FLOPs over its median compute;
 * NaN or <= 0: unknown) of groups of tp consecutive positions: the slowest of every block
 * and group into out[b * (world / tp) + g] and every position's log rate over the median of
 * the others' in its group into dev[b * world + r] (NaN: unknown), as tpb_detect_blocks.
 * Pure.
 */
void tpb_detect_rate_blocks(const double *rate, int world, int tp, int blocks, tpb_slow_t *out,
                            double *dev);

/** A block's rate: work over the median of comp[n] (a rank's compute times in the block);
 *  NaN where either is unknown. Pure. */
double tpb_detect_block_rate(const double *comp, int n, double work);

/** What a run's blocks say of one rank. */
typedef struct {
    int rank;          /**< the rank most often slowest (-1: none) */
    int slowest, of;   /**< in this many blocks of this many */
    double deficit;    /**< its median deficit in those blocks */
    int persistent;    /**< more than chance allows at TPB_DETECT_ALPHA, by >= the minimum */
    int need;          /**< blocks a rank must be slowest in to be persistent */
    int effective;     /**< the blocks' worth of independent evidence (AR(1)) */
    double detectable; /**< the smallest slowdown these blocks would call persistent */
    double alpha;      /**< the false-alarm rate the test was held to */
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

/** x[n] less the median of its finite values (the log rates of one config's blocks around
 *  their level, before configs are put end to end for tpb_detect_persistent_of: their
 *  lag-1 correlation and spread are then the blocks' own, not the configs' differences; a
 *  slowdown's size is its deficits', which this leaves alone). Pure. */
void tpb_detect_center(double *x, int n);

/** tpb_detect_persistent with the test held to alpha. Pure. */
tpb_persistent_t tpb_detect_persistent_at(const tpb_slow_t *s, const double *dev, int nb, int world,
                                          int tp, double alpha);

/** tpb_detect_persistent's verdict from what it gathers of the blocks (for a caller that
 *  streams them: record/answer.c): the rank best (-1: none) slowest in count of the known
 *  blocks that named one, its deficits d[k] in them (NULL: unknown) and its log rate
 *  against the others' x[m] in every block, in time order (several configs' end to end,
 *  each centred first: tpb_detect_center). Pure. */
tpb_persistent_t tpb_detect_persistent_of(int best, int count, int known, const double *d, int k,
                                          const double *x, int m, int tp);

/** tpb_detect_persistent_of with the test held to alpha (a --budget look's share of
 *  TPB_DETECT_ALPHA, base/sequential.h) instead of TPB_DETECT_ALPHA. Pure. */
tpb_persistent_t tpb_detect_persistent_of_at(int best, int count, int known, const double *d, int k,
                                             const double *x, int m, int tp, double alpha);

/** 1 where p leaves the straggler open for --budget: not persistent, and its blocks could
 *  not have named a slowdown of TPB_DETECT_BUDGET_TARGET (or any: too few). Pure. */
int tpb_detect_open(const tpb_persistent_t *p);

/** Blocks a rank must be slowest in, of n, to be more than chance (1/tp each) at alpha
 *  over tp ranks: the least k with tp P(Bin(n, 1/tp) >= k) <= alpha (n + 1: never). */
int tpb_detect_need(int n, int tp, double alpha);

#endif /* TPB_DETECT_H */
