/*
 * layer_impl.h - the layer's state, shared by layer.c and the split
 * orientations (split_*.c) only.
 */
#ifndef TPB_LAYER_IMPL_H
#define TPB_LAYER_IMPL_H

#include <math.h>

#include "run/layer.h"
#include "run/split.h"

enum { TPB_MAT_X = 1, TPB_MAT_W = 2 };

struct tpb_layer {
    const tpb_backend_ops_t *ops;
    tpb_backend_t *be;
    tpb_comm_t *comm;
    tpb_layer_desc_t d;
    long *shards;  /* copy of d.shards */
    long off, len; /* this rank's shard */
    void *x, *w, *part, *y;
    size_t *counts, *displs; /* all-gather-v blocks, in elements */
    tpb_gemm_t gemm;         /* the dense GEMM of the shard */
    tpb_gemm_t *sub;         /* --cost-profile: the GEMMs of its blocks, run instead */
    int nsub;
    /* --overlap chunked: chunk j's GEMM pieces (polls of them) and its collective */
    tpb_gemm_t *piece;  /* chunks x polls */
    const void **csend; /* chunk j's collective: send, recv, count (all-reduce) */
    void **crecv;
    size_t *ccount;
    size_t *ccounts, *cdispls; /* all-gather-v: chunks x t blocks */
};

/** 1 if the layer's W is block-sparse (--cost-profile). */
static inline int tpb_layer_sparse(const tpb_layer_desc_t *d)
{
    return d->profile && d->profile->nblocks > 0 && !d->comm_only;
}

/** --overlap chunked: the chunks' GEMM pieces and collectives (layer_overlap.c). */
tpb_status_t tpb_layer_overlap_setup(tpb_layer_t *l);
void tpb_layer_overlap_free(tpb_layer_t *l);

/** One chunked iteration (marks as tpb_layer_iter, plus the chunks' own). */
tpb_status_t tpb_layer_overlap_iter(tpb_layer_t *l, size_t slot, double delay_us, int record);

/** FLOPs of the block-sparse shard [off, off + len) (layer_sparse.c). Pure. */
double tpb_layer_sparse_flop(const tpb_layer_desc_t *d, long off, long len);

/** The GEMMs of this rank's blocks into l->sub (after the split's setup). */
tpb_status_t tpb_layer_sparse_setup(tpb_layer_t *l);

/** Zero the entries of the reference W^T (N x K, fp64) that the profile makes zero. */
tpb_status_t tpb_layer_sparse_mask(const tpb_layer_desc_t *d, double *w);

/** Rows x cols of seeded matrix id at (row0, col0) into backend memory dst (W is
 *  scaled by 1/sqrt(K) so that Y stays of order 1 for every K). */
static inline tpb_status_t tpb_layer_fill(tpb_layer_t *l, void *dst, long rows, long cols,
                                          long row0, long col0, int id)
{
    return tpb_backend_fill(l->ops, l->be, dst, rows, cols, row0, col0, l->d.seed, (uint32_t)id,
                            id == TPB_MAT_W ? 1.0 / sqrt((double)l->d.k) : 1.0, l->d.dtype);
}

/** Bytes of the whole M x N output (nccl-tests' S for every orientation so far). Pure. */
static inline double tpb_layer_out_bytes(const tpb_layer_desc_t *d)
{
    return (double)d->m * (double)d->n * (double)tpb_dtype_out_size(d->dtype);
}

#endif /* TPB_LAYER_IMPL_H */
