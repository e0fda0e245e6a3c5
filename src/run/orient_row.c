/*
 * orient_row.c - row-parallel (Megatron RowParallelLinear): W split along K and X
 * along its columns; rank r computes the partial P_r = X[:, k_r] W[k_r, :] (M x N),
 * which its collective sums (all-reduce, or reduce-scatter with sequence
 * parallelism). Weighting changes compute only: the payload is M x N whatever the split.
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

const tpb_orient_ops_t tpb_orient_row = {
    .split = TPB_SPLIT_ROW,
    .sizes = row_sizes,
    .flop = row_flop,
    .setup = row_setup,
};

const tpb_orient_ops_t *tpb_orient_of(tpb_split_t split)
{
    return split == TPB_SPLIT_ROW ? &tpb_orient_row : &tpb_orient_col;
}
