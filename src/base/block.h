/*
 * block.h - a transformer block measured as one step (--block): its GEMMs run back to
 * back in every iteration, each with its own marks; the block's step and its tokens per
 * second come from those marks. Pure: no MPI, no I/O.
 *
 *   step_i   = max over the groups g of (max over r in g of x1 of the last GEMM
 *              - min over r in g of c0 of the first GEMM): the slowest group's block
 *   tokens/s per rank = M / (t * step): each of the world / t groups turns M tokens per
 *              step, over the world's ranks
 */
#ifndef TPB_BLOCK_H
#define TPB_BLOCK_H

#include "base/timeline.h"

/**
 * The block's step of every measured iteration into steps[iters]: marks[j] are GEMM j's
 * marks (world x iters, rank-major as tpb_timeline_analyse reads them, on one clock) for
 * j in [0, ngemm), in the order the block runs them; groups of tp consecutive ranks.
 */
void tpb_block_steps(const tpb_mark_t *const *marks, int ngemm, int world, int tp, int iters,
                     double *steps);

/** Tokens per second per rank of a block of `tokens` rows (M) at TP degree tp whose step
 *  takes step_us (NaN when the step is not > 0). */
double tpb_block_tokens_per_s(long tokens, int tp, double step_us);

#endif /* TPB_BLOCK_H */
