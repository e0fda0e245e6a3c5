/*
 * split_row.c - row-parallel (Megatron RowParallelLinear): W split along K and
 * X along its columns; rank r computes the partial P_r = X[:, k_r] W[k_r, :]
 * (M x N) and the group all-reduces the sum. The payload is M x N whatever the
 * split: weighting changes compute only.
 */
#include "run/layer_impl.h"

static void row_sizes(const tpb_layer_desc_t *d, long len, double *nx, double *nw, double *np)
{
    *nx = (double)d->m * len;
    *nw = (double)len * d->n;
    *np = (double)d->m * d->n;
}

static double row_flop(const tpb_layer_desc_t *d, long len)
{
    return 2.0 * d->m * d->n * (double)len;
}

/* W is generated and stored as W^T (N x K, [out, in]). */
static tpb_status_t row_setup(tpb_layer_t *l)
{
    const tpb_layer_desc_t *d = &l->d;
    tpb_gemm_t *g = &l->gemm;
    TPB_CHECK_RET(tpb_layer_fill(l, l->x, d->m, l->len, 0, l->off, TPB_MAT_X));
    TPB_CHECK_RET(tpb_layer_fill(l, l->w, d->n, l->len, 0, l->off, TPB_MAT_W));
    g->n = g->ldc = d->n;
    g->k = g->lda = g->ldb = l->len;
    g->c = l->part;
    return TPB_OK;
}

/* nccl-tests' all-reduce: each rank sends and receives 2(t-1)/t of the message. */
static double row_busbw_factor(int t)
{
    return 2.0 * (t - 1) / t;
}

static tpb_status_t row_collect(tpb_layer_t *l)
{
    return l->ops->allreduce(l->comm, l->part, l->y, (size_t)l->d.m * (size_t)l->d.n,
                             tpb_dtype_out(l->d.dtype));
}

static double row_y_at(const tpb_layer_t *l, const double *y, long i, long j, const long *offs)
{
    return y[i * l->d.n + j];
}

const tpb_split_ops_t tpb_split_row = {
    .split = TPB_SPLIT_ROW,
    .coll = TPB_COLL_ALLREDUCE,
    .busbw_factor = row_busbw_factor,
    .sizes = row_sizes,
    .flop = row_flop,
    .coll_bytes = tpb_layer_out_bytes,
    .setup = row_setup,
    .collect = row_collect,
    .y_at = row_y_at,
};
