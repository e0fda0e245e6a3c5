/*
 * orient.h - split orientations as a table: which dimension of W a TP group cuts,
 * and what that makes of one rank's GEMM. An orientation owns the sizes of X, W and
 * the GEMM's output on a rank whose shard is len, its FLOPs and its set-up (the
 * inputs filled, the GEMM described); the collective that follows (or, for sequence
 * parallelism's column layer, precedes) it is a separate table (run/coll.h).
 *   row: W split along K, X along its columns; P_r = X[:, k_r] W[k_r, :] (M x N).
 *   col: W split along N; Y_r = X W[:, n_r] (M x n_r).
 * The shard dimension of a split is tpb_split_total (base/partition.h).
 */
#ifndef TPB_ORIENT_H
#define TPB_ORIENT_H

#include "run/layer.h"

struct tpb_orient_ops {
    tpb_split_t split; /**< the dimension of W that is cut */
    /** Elements of X (as the GEMM reads it), W and the GEMM's output on a rank whose shard
     *  is len. Pure. */
    void (*sizes)(const tpb_layer_desc_t *d, long len, double *nx, double *nw, double *np);
    /** FLOPs of the GEMM of a rank whose shard is len. Pure. */
    double (*flop)(const tpb_layer_desc_t *d, long len);
    /** Fill this rank's W shard (and X, unless the collective gathers it) and set up its
     *  GEMM in l->gemm. */
    tpb_status_t (*setup)(tpb_layer_t *l);
};

extern const tpb_orient_ops_t tpb_orient_row, tpb_orient_col;

/** The orientation of split. */
const tpb_orient_ops_t *tpb_orient_of(tpb_split_t split);

#endif /* TPB_ORIENT_H */
