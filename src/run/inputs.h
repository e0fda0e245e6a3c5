/*
 * inputs.h - a config's seeded inputs (base/rng.h), each matrix generated once: the whole
 * matrix of (seed, id, scale, dtype, shape), encoded, by the process's threads, and kept in
 * host memory within a budget (the least recently used one leaves first), so that every
 * config of a shape - each TP degree, split, policy and chunking - copies its shard out of it
 * instead of drawing it again; the ranks of a sweep draw a matrix together (tpb_inputs_prepare),
 * each a share of its rows. Bit for bit what tpb_backend_fill writes for the same block.
 * A matrix larger than the budget is not kept: its block is drawn for each call.
 */
#ifndef TPB_INPUTS_H
#define TPB_INPUTS_H

#include <mpi.h>
#include <stdint.h>

#include "backend/backend.h"

/** A block of a seeded matrix: rows x cols of it, nr x nc from (r0, c0). */
typedef struct {
    long rows, cols;
    long r0, c0, nr, nc;
    uint64_t seed;
    uint32_t id;
    double scale;
    tpb_dtype_t dtype;
} tpb_inputs_block_t;

/** Block b, encoded as b->dtype's input type, into backend memory dst (nr x nc, row-major).
 *  TPB_ERR_NOMEM when neither the matrix nor the block fits in host memory. */
tpb_status_t tpb_inputs_fill(tpb_device_t *dev, void *dst, const tpb_inputs_block_t *b);

/** Block b's nr x nc elements' worth of b's matrix into dst, for a GEMM whose product nobody
 *  checks (the calibration): the first nr x nc elements of the kept matrix in one copy, not
 *  b's columns packed row by row; b's block, as tpb_inputs_fill, where the matrix is not kept. */
tpb_status_t tpb_inputs_fill_any(tpb_device_t *dev, void *dst, const tpb_inputs_block_t *b);

/** Every rank of comm (collective) keeps the matrices of m[0..n) (their block fields unused),
 *  drawn once by all of them: each rank draws a share of a matrix's rows, in threads, and the
 *  shares are gathered (MPI_Allgatherv), so that a matrix costs a rank 1/size of the draw
 *  wherever ranks share a node's CPUs or are bound to a core each. A matrix some rank cannot
 *  keep (its budget, memory) is drawn together by none: tpb_inputs_fill draws it on each rank
 *  alone, as without this call. Errors are this rank's; the caller agrees on them. */
tpb_status_t tpb_inputs_prepare(MPI_Comm comm, const tpb_inputs_block_t *m, int n);

/** The bytes of host memory the kept matrices may take: a quarter of the machine's shared by
 *  the ranks of its node (tpb_inputs_share), at most 8 GB. */
double tpb_inputs_budget(void);

/** The ranks of this node that keep matrices of their own (1 until said). */
void tpb_inputs_share(int local_ranks);

/** Seconds spent drawing matrices since the last call (a config's share of its host time). */
double tpb_inputs_drawn_s(void);

/** Drop every kept matrix (at the end of a run). */
void tpb_inputs_free(void);

#endif /* TPB_INPUTS_H */
