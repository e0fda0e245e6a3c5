/*
 * split_col_ar.c - column-parallel with an all-reduce (--col-collective
 * allreduce), as some frameworks do: rank r writes its columns Y_r into a
 * zeroed M x N buffer and the group all-reduces it.
 */
#include "run/layer_impl.h"

static void colar_sizes(const tpb_layer_desc_t *d, long len, double *nx, double *nw, double *np)
{
    *nx = (double)d->m * d->k;
    *nw = (double)d->k * len;
    *np = (double)d->m * d->n;
}

static double colar_flop(const tpb_layer_desc_t *d, long len)
{
    return 2.0 * d->m * (double)len * d->k;
}

/* The GEMM writes its n_r columns at column off of the (zeroed) M x N buffer. */
static tpb_status_t colar_setup(tpb_layer_t *l)
{
    const tpb_layer_desc_t *d = &l->d;
    tpb_gemm_t *g = &l->gemm;
    TPB_CHECK_RET(tpb_layer_fill(l, l->x, d->m, d->k, 0, 0, TPB_MAT_X));
    TPB_CHECK_RET(tpb_layer_fill(l, l->w, l->len, d->k, l->off, 0, TPB_MAT_W));
    g->n = l->len;
    g->k = g->lda = g->ldb = d->k;
    g->c = (char *)l->part + (size_t)l->off * tpb_dtype_out_size(d->dtype);
    g->ldc = d->n;
    return TPB_OK;
}

/* nccl-tests' all-reduce: each rank sends and receives 2(t-1)/t of the message. */
static double colar_busbw_factor(int t)
{
    return 2.0 * (t - 1) / t;
}

static tpb_status_t colar_collect(tpb_layer_t *l)
{
    return l->ops->allreduce(l->comm, l->part, l->y, (size_t)l->d.m * (size_t)l->d.n,
                             tpb_dtype_out(l->d.dtype));
}

static double colar_y_at(const tpb_layer_t *l, const double *y, long i, long j, const long *offs)
{
    return y[i * l->d.n + j];
}

const tpb_split_ops_t tpb_split_col_allreduce = {
    .split = TPB_SPLIT_COL,
    .coll = TPB_COLL_ALLREDUCE,
    .busbw_factor = colar_busbw_factor,
    .sizes = colar_sizes,
    .flop = colar_flop,
    .coll_bytes = tpb_layer_out_bytes,
    .setup = colar_setup,
    .collect = colar_collect,
    .y_at = colar_y_at,
};
