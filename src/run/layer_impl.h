/*
 * layer_impl.h - the layer's state, shared by layer.c, layer_overlap.c,
 * layer_sparse.c, the orientations (orient_*.c) and the collectives (coll_*.c)
 * only.
 */
#ifndef TPB_LAYER_IMPL_H
#define TPB_LAYER_IMPL_H

#include <math.h>

#include "run/coll.h"
#include "run/inputs.h"
#include "run/layer.h"
#include "run/orient.h"

enum { TPB_MAT_X = 1, TPB_MAT_W = 2 };

struct tpb_layer {
    tpb_device_t *dev;
    tpb_comm_t *comm;
    tpb_layer_desc_t d;
    long *shards;  /* copy of d.shards */
    long off, len; /* this rank's shard */
    /* x: X as the GEMM reads it; xs: this rank's rows of X (gathered into x: sequence
     * parallelism); w: the W shard; part: the GEMM's output; y: the collective's */
    void *x, *xs, *w, *part, *y;
    size_t nresult;  /* elements of the buffer that holds this rank's Y (tpb_layer_result) */
    tpb_gemm_t gemm; /* the dense GEMM of the shard */
    tpb_gemm_t *sub; /* --cost-profile: the GEMMs of its blocks, run instead */
    int nsub;
    tpb_coll_desc_t whole;   /* the layer's collective */
    size_t *counts, *displs; /* its blocks (t each) */
    long *crows;             /* rows of each chunk (one chunk of M when serial) */
    /* --overlap chunked: chunk j's GEMM pieces (polls of them) and collective */
    tpb_gemm_t *piece;         /* chunks x polls */
    tpb_coll_desc_t *cdesc;    /* chunks */
    size_t *ccounts, *cdispls; /* chunks x t */
};

/** 1 if the layer's W is block-sparse (--cost-profile). */
static inline int tpb_layer_sparse(const tpb_layer_desc_t *d)
{
    return d->profile && d->profile->nblocks > 0 && !d->comm_only;
}

/** A group of one rank has no collective: its GEMM's output is the layer's (TP 1 runs
 *  none, so that it books no transfer). */
static inline int tpb_layer_collects(const tpb_layer_desc_t *d)
{
    return d->tp > 1;
}

/** The buffer that holds this rank's Y after an iteration (y, or part where the
 *  collective gathers X, or where there is none: Y_r stays where the GEMM wrote it). */
static inline void *tpb_layer_result(const tpb_layer_t *l)
{
    return l->d.coll->gathers_x || !tpb_layer_collects(&l->d) ? l->part : l->y;
}

/** The chunks of M: C with --overlap chunked, else 1 (the whole layer). */
static inline int tpb_layer_nchunks(const tpb_layer_desc_t *d)
{
    return d->chunks > 0 ? d->chunks : 1;
}

/** --overlap chunked: the chunks' GEMM pieces and collectives (layer_overlap.c). */
tpb_status_t tpb_layer_overlap_setup(tpb_layer_t *l);
void tpb_layer_overlap_free(tpb_layer_t *l);

/** One chunked iteration (marks as tpb_layer_iter, plus the chunks' own). */
tpb_status_t tpb_layer_overlap_iter(tpb_layer_t *l, size_t slot, double delay_us, int record);

/** FLOPs of the block-sparse shard [off, off + len) (layer_sparse.c). Pure. */
double tpb_layer_sparse_flop(const tpb_layer_desc_t *d, long off, long len);

/** The GEMMs of this rank's blocks into l->sub (after the orientation's setup). */
tpb_status_t tpb_layer_sparse_setup(tpb_layer_t *l);

/**
 * Zero the entries of the reference W^T (fp64) that the profile makes zero; w holds its rows
 * (out features) row0 .. row0 + rows - 1, K each.
 */
tpb_status_t tpb_layer_sparse_mask(const tpb_layer_desc_t *d, double *w, long row0, long rows);

/** Rows x cols of seeded matrix id (X: M x K, W: N x K) at (row0, col0) into backend memory
 *  dst (W is scaled by 1/sqrt(K) so that Y stays of order 1 for every K), out of the matrix
 *  generated once for every config of the shape (run/inputs.h). */
tpb_status_t tpb_layer_fill(tpb_layer_t *l, void *dst, long rows, long cols, long row0, long col0,
                            int id);

/** rows split evenly over t parts, the first ones taking the extra rows (as
 *  tpb_partition_even at granularity 1): part q's length and where it starts. Makes the
 *  chunks of M and the rows of sequence parallelism's collectives. Pure. */
static inline void tpb_layer_row_share(long rows, int t, int q, long *share, long *start)
{
    long base = rows / t, extra = rows % t;
    *share = base + (q < extra);
    *start = (long)q * base + (q < extra ? q : extra);
}

/** Rows of M this rank holds where M is split evenly over the group chunk by chunk (the
 *  rows of sequence parallelism). Pure. */
static inline long tpb_layer_rows_held(const tpb_layer_desc_t *d)
{
    long held = 0, rows, start, share, at;
    for (int j = 0; j < tpb_layer_nchunks(d); j++) {
        tpb_layer_row_share(d->m, tpb_layer_nchunks(d), j, &rows, &start);
        tpb_layer_row_share(rows, d->tp, d->group_rank, &share, &at);
        held += share;
    }
    return held;
}

#endif /* TPB_LAYER_IMPL_H */
