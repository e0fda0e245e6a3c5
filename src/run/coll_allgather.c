/*
 * coll_allgather.c - the all-gathers of a TP layer (nccl-tests' all-gather: busbw
 * factor (t-1)/t, S the whole gathered array):
 *   tpb_coll_allgather    col: rank q's M x n_q block of Y (its GEMM's output) gathered
 *                         into Y, blocks in rank order (an all-gather-v when the shards
 *                         differ); a chunk gathers its rows of every block.
 *   tpb_coll_allgather_x  col with sequence parallelism: X gathered along M, each rank
 *                         holding its rows (M split evenly, chunk by chunk); equal
 *                         blocks when the rows divide by t (ncclAllGather). Y_r stays on
 *                         its rank, in the GEMM's output.
 */
#include <stdint.h>

#include "base/partition.h"
#include "run/layer_impl.h"

static double ag_busbw_factor(int t)
{
    return (double)(t - 1) / t;
}

/* ---- the column blocks of Y ---- */

static double agc_bytes(const tpb_layer_desc_t *d)
{
    return (double)d->m * (double)d->n * (double)tpb_dtype_out_size(d->dtype);
}

static double agc_extra(const tpb_layer_desc_t *d, long len)
{
    return (double)d->m * (double)d->n;
}

/* comm-only: this rank's block of the 1 x n message (at its offset along n). */
static tpb_status_t agc_setup(tpb_layer_t *l)
{
    if (!l->d.comm_only)
        return TPB_OK;
    return tpb_backend_fill(l->dev, l->part, l->d.m, l->len, 0, l->off, l->d.seed, TPB_MAT_X, 1.0,
                            tpb_dtype_out(l->d.dtype));
}

/* Rank q's block is M x n_q at M * off_q; rows [r0, r0 + rows) of each. */
static void agc_describe(const tpb_layer_t *l, long r0, long rows, const tpb_coll_desc_t *prev,
                         tpb_coll_desc_t *c)
{
    const tpb_layer_desc_t *d = &l->d;
    size_t *counts = c->counts, *displs = c->displs;
    long off = 0;
    for (int q = 0; q < d->tp; off += l->shards[q], q++) {
        counts[q] = (size_t)rows * (size_t)l->shards[q];
        displs[q] = (size_t)d->m * (size_t)off + (size_t)r0 * (size_t)l->shards[q];
    }
    c->kind = TPB_COLL_ALLGATHER;
    c->dtype = tpb_dtype_out(d->dtype);
    c->send = (const uint8_t *)l->part + (size_t)r0 * (size_t)l->len * tpb_dtype_out_size(d->dtype);
    c->recv = l->y;
}

static void agc_comm_sizes(const tpb_layer_desc_t *d, long len, double *nsend, double *nrecv)
{
    *nsend = (double)d->m * (double)len;
    *nrecv = (double)d->m * (double)d->n;
}

static void agc_comm_describe(const tpb_layer_t *l, tpb_coll_desc_t *c)
{
    agc_describe(l, 0, l->d.m, NULL, c);
}

/* Y is rank q's M x n_q block, then the next rank's. */
static long agc_y_index(const tpb_layer_t *l, long i, long j)
{
    long off = 0;
    int q = 0;
    while (q + 1 < l->d.tp && off + l->shards[q] <= j)
        off += l->shards[q++];
    return l->d.m * off + i * l->shards[q] + (j - off);
}

const tpb_coll_ops_t tpb_coll_allgather = {
    .kind = TPB_COLL_ALLGATHER,
    .busbw_factor = ag_busbw_factor,
    .bytes = agc_bytes,
    .extra = agc_extra,
    .setup = agc_setup,
    .describe = agc_describe,
    .comm_sizes = agc_comm_sizes,
    .comm_describe = agc_comm_describe,
    .y_index = agc_y_index,
};

/* ---- the rows of X (sequence parallelism) ---- */

static double agx_bytes(const tpb_layer_desc_t *d)
{
    if (d->comm_only) /* its message is the column all-gather's (agx_comm_describe) */
        return agc_bytes(d);
    return (double)d->m * (double)d->k * (double)tpb_dtype_in_size(d->dtype);
}

static double agx_extra(const tpb_layer_desc_t *d, long len)
{
    return (double)tpb_layer_rows_held(d) * (double)d->k;
}

/* This rank's rows of X, chunk by chunk, back to back in xs (comm-only: its block of the
 * message, as the column all-gather's). */
static tpb_status_t agx_setup(tpb_layer_t *l)
{
    const tpb_layer_desc_t *d = &l->d;
    if (d->comm_only)
        return agc_setup(l);
    size_t row = (size_t)d->k * tpb_dtype_in_size(d->dtype);
    long r0 = 0, rows, start, share, at;
    uint8_t *xs = l->xs;
    for (int j = 0; j < tpb_layer_nchunks(d); r0 += rows, j++) {
        tpb_layer_row_share(d->m, tpb_layer_nchunks(d), j, &rows, &start);
        tpb_layer_row_share(rows, d->tp, d->group_rank, &share, &at);
        TPB_CHECK_RET(tpb_layer_fill(l, xs, share, d->k, r0 + at, 0, TPB_MAT_X));
        xs += (size_t)share * row;
    }
    return TPB_OK;
}

static void agx_describe(const tpb_layer_t *l, long r0, long rows, const tpb_coll_desc_t *prev,
                         tpb_coll_desc_t *c)
{
    const tpb_layer_desc_t *d = &l->d;
    size_t *counts = c->counts, *displs = c->displs;
    size_t in = tpb_dtype_in_size(d->dtype);
    long share, start;
    for (int q = 0; q < d->tp; q++) {
        tpb_layer_row_share(rows, d->tp, q, &share, &start);
        counts[q] = (size_t)share * (size_t)d->k;
        displs[q] = (size_t)(r0 + start) * (size_t)d->k;
    }
    c->kind = TPB_COLL_ALLGATHER;
    c->dtype = d->dtype;
    c->equal = 1;
    c->send = prev ? (const uint8_t *)prev->send + prev->counts[d->group_rank] * in : l->xs;
    c->recv = l->x;
}

static void agx_comm_describe(const tpb_layer_t *l, tpb_coll_desc_t *c)
{
    agc_describe(l, 0, l->d.m, NULL, c);
    c->equal = tpb_coll_counts_equal(c->counts, l->d.tp); /* planned so with NCCL */
}

/* Y_r (M x n_r) stays in the GEMM's output. */
static long agx_y_index(const tpb_layer_t *l, long i, long j)
{
    return j >= l->off && j < l->off + l->len ? i * l->len + (j - l->off) : -1;
}

const tpb_coll_ops_t tpb_coll_allgather_x = {
    .kind = TPB_COLL_ALLGATHER,
    .gathers_x = 1,
    .scatters = 1,
    .even_rows = 1,
    .busbw_factor = ag_busbw_factor,
    .bytes = agx_bytes,
    .extra = agx_extra,
    .setup = agx_setup,
    .describe = agx_describe,
    .comm_sizes = agc_comm_sizes,
    .comm_describe = agx_comm_describe,
    .y_index = agx_y_index,
};
