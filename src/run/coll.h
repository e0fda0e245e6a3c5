/*
 * coll.h - the collectives of a TP layer as a table, in the spirit of nccl-tests'
 * struct testColl (one small file per collective, its bus-bandwidth factor beside it):
 * a collective owns the bytes it moves (nccl-tests' S), its factor, its buffers, the
 * descriptor (backend.h) of the whole layer's collective and of each chunk's
 * (--overlap chunked: rows [r0, r0 + rows) of M), its comm-only inputs, and where each
 * element of Y ends up on a rank (--check).
 *
 *   all-reduce       row, and col with --col-collective allreduce: the M x N partial
 *                    summed into Y on every rank
 *   all-gather       col: each rank's M x n_r block of Y gathered (blocks in rank order)
 *   reduce-scatter   row with sequence parallelism: the M x N partials summed, each rank
 *                    keeping its rows of Y (M split evenly, chunk by chunk)
 *   all-gather of X  col with sequence parallelism: X gathered along M from each rank's
 *                    rows before the GEMM; Y_r stays on its rank. The iteration runs the
 *                    GEMM and then the next iteration's all-gather, so that arriving at
 *                    it is the end of the GEMM as for every other collective (the first
 *                    gather runs untimed when the layer is built).
 */
#ifndef TPB_COLL_H
#define TPB_COLL_H

#include "run/layer.h"

struct tpb_coll_ops {
    tpb_coll_t kind;
    int gathers_x; /**< 1: gathers the GEMM's input (X) rather than reducing its output */
    int scatters;  /**< 1: a rank holds part of Y (rows, or its Y_r), 0: all of Y */
    int even_rows; /**< 1: its blocks are M's rows split evenly over the group (equal
                        blocks when every chunk's rows divide by t) */
    int sums;      /**< 1: it sums M x N inputs (all-reduce, reduce-scatter): an orientation
                        whose output is a column block writes it into a zeroed M x N
                        buffer */
    /** nccl-tests' bus-bandwidth factor over t ranks: busbw = algbw x factor (0 at t = 1).
     *  Pure. */
    double (*busbw_factor)(int t);
    /** Bytes of the whole collective (nccl-tests' S: the gathered or reduced array). Pure. */
    double (*bytes)(const tpb_layer_desc_t *d);
    /** Elements of the buffer it adds to the orientation's (Y in the output's dtype, or
     *  this rank's rows of X in the input's) on a rank whose shard is len. Pure. */
    double (*extra)(const tpb_layer_desc_t *d, long len);
    /** Fill what it owns of the inputs: a comm-only message (l->part), this rank's rows of
     *  X (l->xs); nothing for the others. */
    tpb_status_t (*setup)(tpb_layer_t *l);
    /** The descriptor of rows [r0, r0 + rows) of M (the whole layer: 0, M), after the one
     *  of the rows before (prev; NULL for the first). c->counts and c->displs point to
     *  t entries to fill. */
    void (*describe)(const tpb_layer_t *l, long r0, long rows, const tpb_coll_desc_t *prev,
                     tpb_coll_desc_t *c);
    /** --comm-only: elements of its send and receive buffers for a 1 x n message split
     *  into the layer's shards along n. Pure. */
    void (*comm_sizes)(const tpb_layer_desc_t *d, long len, double *nsend, double *nrecv);
    /** --comm-only: the descriptor of the message (send: l->part, recv: l->y). */
    void (*comm_describe)(const tpb_layer_t *l, tpb_coll_desc_t *c);
    /** Where element (i, j) of Y is on this rank: its index in the result buffer
     *  (tpb_layer_result), or -1 if this rank does not hold it. */
    long (*y_index)(const tpb_layer_t *l, long i, long j);
};

extern const tpb_coll_ops_t tpb_coll_allreduce, tpb_coll_allgather, tpb_coll_reduce_scatter,
    tpb_coll_allgather_x;

/** The collective of split with --col-collective col_collective and sequence parallelism
 *  sp: row + all-reduce (sp: reduce-scatter); col + all-gather or all-reduce (sp: the
 *  all-gather of X). */
const tpb_coll_ops_t *tpb_coll_of(tpb_split_t split, tpb_coll_t col_collective, tpb_seqpar_t sp);

/** 1 if the t counts are all equal (a comm-only message whose blocks NCCL's equal-count
 *  calls can take), else 0. Pure. */
static inline int tpb_coll_counts_equal(const size_t *counts, int t)
{
    for (int q = 1; q < t; q++)
        if (counts[q] != counts[0])
            return 0;
    return 1;
}

#endif /* TPB_COLL_H */
