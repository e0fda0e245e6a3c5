/*
 * split_col_ag.c - column-parallel (Megatron ColumnParallelLinear) with an
 * all-gather: W split along N; rank r computes Y_r = X W[:, n_r] (M x n_r) and
 * the group all-gathers the Y_r as blocks in rank order (all-gather-v when the
 * shards differ).
 */
#include "run/layer_impl.h"

static void col_sizes(const tpb_layer_desc_t *d, long len, double *nx, double *nw, double *np)
{
    *nx = (double)d->m * d->k;
    *nw = (double)d->k * len;
    *np = (double)d->m * len;
}

static double col_flop(const tpb_layer_desc_t *d, long len)
{
    return 2.0 * d->m * (double)len * d->k;
}

static tpb_status_t col_setup(tpb_layer_t *l)
{
    const tpb_layer_desc_t *d = &l->d;
    tpb_gemm_t *g = &l->gemm;
    TPB_CHECK_RET(tpb_layer_fill(l, l->x, d->m, d->k, 0, 0, TPB_MAT_X));
    TPB_CHECK_RET(tpb_layer_fill(l, l->w, l->len, d->k, l->off, 0, TPB_MAT_W));
    g->n = g->ldc = l->len;
    g->k = g->lda = g->ldb = d->k;
    g->c = l->part;
    return TPB_OK;
}

/* nccl-tests' all-gather: each rank receives (t-1)/t of the gathered array. */
static double col_busbw_factor(int t)
{
    return (double)(t - 1) / t;
}

static tpb_status_t col_collect(tpb_layer_t *l)
{
    return l->ops->allgatherv(l->comm, l->part, l->y, l->counts, l->displs,
                              tpb_dtype_out(l->d.dtype));
}

/* Y is rank r's M x n_r block, then the next rank's. */
static double col_y_at(const tpb_layer_t *l, const double *y, long i, long j, const long *offs)
{
    int r = 0;
    while (r + 1 < l->d.tp && offs[r + 1] <= j)
        r++;
    return y[l->displs[r] + (size_t)i * l->shards[r] + (size_t)(j - offs[r])];
}

const tpb_split_ops_t tpb_split_col_allgather = {
    .split = TPB_SPLIT_COL,
    .coll = TPB_COLL_ALLGATHER,
    .busbw_factor = col_busbw_factor,
    .sizes = col_sizes,
    .flop = col_flop,
    .coll_bytes = tpb_layer_out_bytes,
    .setup = col_setup,
    .collect = col_collect,
    .y_at = col_y_at,
};
