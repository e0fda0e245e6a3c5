/*
 * orient_col.c - column-parallel (Megatron ColumnParallelLinear): W split along N;
 * rank r computes Y_r = X W[:, n_r] (M x n_r), which its collective gathers into Y
 * (all-gather, or all-reduce of a zeroed M x N buffer with --col-collective
 * allreduce); with sequence parallelism X is gathered along M first and Y_r stays.
 */
#include "run/layer_impl.h"

static void col_sizes(const tpb_layer_desc_t *d, long len, double *nx, double *nw, double *np)
{
    *nx = (double)d->m * d->k;
    *nw = (double)d->k * len;
    /* into a collective that sums, the GEMM writes its columns into a zeroed M x N buffer */
    *np = (double)d->m * (d->coll->sums ? d->n : len);
}

static double col_flop(const tpb_layer_desc_t *d, long len)
{
    return 2.0 * d->m * (double)len * d->k;
}

/* X whole (unless the collective gathers it), the W^T rows of the shard. */
static tpb_status_t col_setup(tpb_layer_t *l)
{
    const tpb_layer_desc_t *d = &l->d;
    tpb_gemm_t *g = &l->gemm;
    if (!d->coll->gathers_x)
        TPB_CHECK_RET(tpb_layer_fill(l, l->x, d->m, d->k, 0, 0, TPB_MAT_X));
    TPB_CHECK_RET(tpb_layer_fill(l, l->w, l->len, d->k, l->off, 0, TPB_MAT_W));
    int whole = d->coll->sums; /* columns off.. of an M x N buffer */
    g->n = l->len;
    g->k = g->lda = g->ldb = d->k;
    g->c = (char *)l->part + (whole ? (size_t)l->off * tpb_dtype_out_size(d->dtype) : 0);
    g->ldc = whole ? d->n : l->len;
    return TPB_OK;
}

const tpb_orient_ops_t tpb_orient_col = {
    .split = TPB_SPLIT_COL,
    .sizes = col_sizes,
    .flop = col_flop,
    .setup = col_setup,
};
