/*
 * costprofile.h - work that is not uniform along the split dimension
 * (--cost-profile): one relative cost per block of the dimension ("thick and
 * thin layers"), and the block-sparse weight that has that cost. Pure functions:
 * no MPI, no I/O; parsing allocates the cost array only.
 *
 * Geometry. The dimension of length total is cut into units of the granularity
 * g (U = total / g, the last unit also takes total mod g elements, as for the
 * shards) and the B blocks of a profile are whole runs of units: block b starts
 * at unit floor(b U / B). So B <= U, every block edge is a shard edge a
 * partition can use, and on a GPU every block starts at an aligned offset.
 *
 * The workload. Block b has density d_b = cost_b / max(cost): of the L inner
 * entries of each of its weight rows (K for the col split, N for the row split)
 * the first kept_b = ceil(d_b L) (rounded up to a multiple of 16, at most L) are
 * non-zero and the rest are zero; the GEMMs skip the zero part, so a block's
 * work is d_b of a dense block's, and --check compares with a reference that
 * has the same zeros.
 */
#ifndef TPB_COSTPROFILE_H
#define TPB_COSTPROFILE_H

#include <stddef.h>

#include "base/tpb_status.h"

#define TPB_COST_MAX_BLOCKS 65536 /**< blocks of a profile */
#define TPB_COST_MAX_RATIO 1e6    /**< largest max / min cost */

typedef struct {
    int nblocks;       /**< 0: no profile (dense, uniform) */
    double *cost;      /**< relative cost of every block, > 0 (owned) */
    double max;        /**< the largest cost (block densities are cost / max) */
    char source[1024]; /**< "skew:4" or the file's path, for the record */
} tpb_cost_profile_t;

/**
 * Parse a profile from text[len]: numbers separated by white space or commas, '#'
 * to the end of a line a comment. TPB_ERR_INVALID (naming `what`, the block and the
 * text) for a token that is not a number, a cost that is not finite and > 0, no
 * block, more than TPB_COST_MAX_BLOCKS, or max / min over TPB_COST_MAX_RATIO.
 * *out is set only on success.
 */
tpb_status_t tpb_cost_profile_parse(const char *text, size_t len, const char *what,
                                    tpb_cost_profile_t *out);

/** 1 if spec names a built-in profile ("skew:..."), 0 if it is a file's path. */
int tpb_cost_profile_is_builtin(const char *spec);

/**
 * A built-in profile: "skew:R" is two blocks, the first half of the dimension R times
 * as costly as the second (R in [1, TPB_COST_MAX_RATIO]). TPB_ERR_INVALID for
 * anything else. *out is set only on success.
 */
tpb_status_t tpb_cost_profile_builtin(const char *spec, tpb_cost_profile_t *out);

void tpb_cost_profile_free(tpb_cost_profile_t *p);

/** TPB_OK if the profile's blocks fit a dimension of total elements at granularity g
 *  (B <= total / g), else TPB_ERR_INVALID saying what to change. */
tpb_status_t tpb_cost_fits(const tpb_cost_profile_t *p, long total, long g);

/** First element of block b (0 <= b <= B; b = B gives total). */
long tpb_cost_block_start(const tpb_cost_profile_t *p, long total, long g, int b);

/** Non-zero inner entries kept by block b out of inner (see the header comment). */
long tpb_cost_kept(const tpb_cost_profile_t *p, int b, long inner);

/** Block of element e (0 <= e < total). */
int tpb_cost_block_of(const tpb_cost_profile_t *p, long total, long g, long e);

/** The cost of each of the total / g units (ucost[U]): its block's cost, the last unit
 *  scaled by its length (g + total mod g) / g. */
void tpb_cost_units(const tpb_cost_profile_t *p, long total, long g, double *ucost);

/** The cost of elements [lo, hi) (each element its block's cost). */
double tpb_cost_range(const tpb_cost_profile_t *p, long total, long g, long lo, long hi);

#endif /* TPB_COSTPROFILE_H */
