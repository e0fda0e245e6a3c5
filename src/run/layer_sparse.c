/*
 * layer_sparse.c - the block-sparse weight of --cost-profile (base/costprofile.h):
 * block b of the split dimension keeps kept_b of its inner entries, and a rank runs
 * one GEMM per block of its shard over that part alone.
 *   col (blocks along N): Y_r[:, seg] = X[:, :kept] W^T[seg, :kept]^T
 *   row (blocks along K): P_r[:, :kept] += X[:, seg] W^T[:kept, seg]^T, the block
 *        keeping the most columns first (it writes, the others add), the columns no
 *        block keeps zeroed once.
 */
#include "run/layer_impl.h"

#include <stdint.h>
#include <stdlib.h>

#include "base/partition.h"

/* The inner length a block's weight rows have: K (col) or N (row). */
static long inner_len(const tpb_layer_desc_t *d)
{
    return d->orient->split == TPB_SPLIT_COL ? d->k : d->n;
}

/* Block b's part of [off, off + len) in *s, *e; 0 if none. */
static int segment(const tpb_layer_desc_t *d, int b, long off, long len, long *s, long *e)
{
    long total = tpb_split_total(&(tpb_shape_t){.m = d->m, .n = d->n, .k = d->k}, d->orient->split);
    long bs = tpb_cost_block_start(d->profile, total, d->granularity, b);
    long be = tpb_cost_block_start(d->profile, total, d->granularity, b + 1);
    *s = bs > off ? bs : off;
    *e = be < off + len ? be : off + len;
    return *e > *s;
}

double tpb_layer_sparse_flop(const tpb_layer_desc_t *d, long off, long len)
{
    double f = 0.0;
    long s, e, inner = inner_len(d);
    for (int b = 0; b < d->profile->nblocks; b++)
        if (segment(d, b, off, len, &s, &e))
            f += 2.0 * (double)d->m * (double)(e - s) * (double)tpb_cost_kept(d->profile, b, inner);
    return f;
}

/* Row: the block keeping the most columns first, so that it writes P_r and the rest add. */
static int by_columns(const void *a, const void *b)
{
    long na = ((const tpb_gemm_t *)a)->n, nb = ((const tpb_gemm_t *)b)->n;
    return (na < nb) - (na > nb);
}

/* Zero P_r (M x N) once: the columns no block of the shard keeps are never written. */
static tpb_status_t zero_partial(tpb_layer_t *l)
{
    size_t bytes = (size_t)l->d.m * (size_t)l->d.n * tpb_dtype_out_size(l->d.dtype);
    void *z = calloc(1, bytes);
    if (!z)
        return tpb_err_set(TPB_ERR_NOMEM, "--cost-profile: no host memory for %zu bytes", bytes);
    tpb_status_t st = tpb_dev_copy(l->dev, l->part, z, bytes, TPB_COPY_TO_BACKEND);
    free(z);
    return st;
}

tpb_status_t tpb_layer_sparse_setup(tpb_layer_t *l)
{
    const tpb_layer_desc_t *d = &l->d;
    int col = d->orient->split == TPB_SPLIT_COL;
    size_t in = tpb_dtype_in_size(d->dtype), out = tpb_dtype_out_size(d->dtype);
    long inner = inner_len(d), s, e;
    l->sub = malloc((size_t)d->profile->nblocks * sizeof(*l->sub));
    if (!l->sub)
        return tpb_err_set(TPB_ERR_NOMEM, "layer: out of memory");
    l->nsub = 0;
    for (int b = 0; b < d->profile->nblocks; b++) {
        if (!segment(d, b, l->off, l->len, &s, &e))
            continue;
        tpb_gemm_t *g = &l->sub[l->nsub++];
        size_t at = (size_t)(s - l->off);
        *g = l->gemm;
        if (col) { /* rows seg of W^T (ld K), columns seg of Y_r (ld len) */
            g->n = e - s;
            g->k = tpb_cost_kept(d->profile, b, inner);
            g->b = (const uint8_t *)l->w + at * (size_t)d->k * in;
            g->c = (uint8_t *)l->part + at * out;
        } else { /* columns seg of X and of W^T (ld len), the first kept columns of P_r */
            g->n = tpb_cost_kept(d->profile, b, inner);
            g->k = e - s;
            g->a = (const uint8_t *)l->x + at * in;
            g->b = (const uint8_t *)l->w + at * in;
            g->accumulate = 1;
        }
    }
    if (col)
        return TPB_OK;
    qsort(l->sub, (size_t)l->nsub, sizeof(*l->sub), by_columns);
    l->sub[0].accumulate = 0;
    return zero_partial(l);
}

tpb_status_t tpb_layer_sparse_mask(const tpb_layer_desc_t *d, double *w, long row0, long rows)
{
    const tpb_cost_profile_t *p = d->profile;
    int col = d->orient->split == TPB_SPLIT_COL;
    long total = col ? d->n : d->k, inner = inner_len(d);
    long *keep = malloc((size_t)total * sizeof(long)); /* kept entries of each weight row */
    if (!keep)
        return tpb_err_set(TPB_ERR_NOMEM, "--check: out of memory");
    for (long a = 0; a < total; a++)
        keep[a] = tpb_cost_kept(p, tpb_cost_block_of(p, total, d->granularity, a), inner);
    for (long i = 0; i < rows; i++)
        for (long j = 0; j < d->k; j++) /* W^T[row0 + i][j]: out feature row0 + i, in j */
            if (col ? j >= keep[row0 + i] : row0 + i >= keep[j])
                w[i * d->k + j] = 0.0;
    free(keep);
    return TPB_OK;
}
