/*
 * coll_reducescatter.c - sequence parallelism's row layer: the M x N partials summed
 * and scattered along M, each rank keeping its rows of Y (M split evenly, chunk by
 * chunk: a chunk reduce-scatters its rows); equal blocks when the rows divide by t
 * (ncclReduceScatter). nccl-tests' reduce-scatter: busbw factor (t-1)/t, S the whole
 * M x N input.
 */
#include <stdint.h>

#include "base/partition.h"
#include "run/layer_impl.h"

static double rs_busbw_factor(int t)
{
    return (double)(t - 1) / t;
}

static double rs_bytes(const tpb_layer_desc_t *d)
{
    return (double)d->m * (double)d->n * (double)tpb_dtype_out_size(d->dtype);
}

static double rs_extra(const tpb_layer_desc_t *d, long len)
{
    return (double)tpb_layer_rows_held(d) * (double)d->n;
}

static tpb_status_t rs_setup(tpb_layer_t *l)
{
    if (!l->d.comm_only)
        return TPB_OK;
    return tpb_backend_fill(l->dev, l->part, l->d.m, l->d.n, 0, 0, l->d.seed, TPB_MAT_X, 1.0,
                            tpb_dtype_out(l->d.dtype));
}

/* Rows [r0, r0 + rows) of the partial, rank q's share at r0 + start_q; this rank's rows
 * of Y follow those of the chunk before. */
static void rs_describe(const tpb_layer_t *l, long r0, long rows, const tpb_coll_desc_t *prev,
                        tpb_coll_desc_t *c)
{
    const tpb_layer_desc_t *d = &l->d;
    size_t *counts = c->counts, *displs = c->displs;
    size_t out = tpb_dtype_out_size(d->dtype);
    long share, start;
    for (int q = 0; q < d->tp; q++) {
        tpb_layer_row_share(rows, d->tp, q, &share, &start);
        counts[q] = (size_t)share * (size_t)d->n;
        displs[q] = (size_t)(r0 + start) * (size_t)d->n;
    }
    c->kind = TPB_COLL_REDUCE_SCATTER;
    c->dtype = tpb_dtype_out(d->dtype);
    c->equal = 1;
    c->send = l->part;
    c->recv = prev ? (uint8_t *)prev->recv + prev->counts[d->group_rank] * out : l->y;
}

static void rs_comm_sizes(const tpb_layer_desc_t *d, long len, double *nsend, double *nrecv)
{
    *nsend = (double)d->m * (double)d->n;
    *nrecv = (double)d->m * (double)len;
}

/* A comm-only message: the 1 x n input, rank q receiving its block of the shards. */
static void rs_comm_describe(const tpb_layer_t *l, tpb_coll_desc_t *c)
{
    size_t *counts = c->counts, *displs = c->displs;
    long off = 0;
    for (int q = 0; q < l->d.tp; off += l->shards[q], q++) {
        counts[q] = (size_t)l->d.m * (size_t)l->shards[q];
        displs[q] = (size_t)l->d.m * (size_t)off;
    }
    c->kind = TPB_COLL_REDUCE_SCATTER;
    c->dtype = tpb_dtype_out(l->d.dtype);
    c->equal = tpb_coll_counts_equal(counts, l->d.tp); /* planned so with NCCL */
    c->send = l->part;
    c->recv = l->y;
}

/* Row i of Y: in chunk j, rank q's share; held here at the rows of earlier chunks plus
 * its place in the share. */
static long rs_y_index(const tpb_layer_t *l, long i, long j)
{
    const tpb_layer_desc_t *d = &l->d;
    long r0 = 0, before = 0, share, start;
    for (int c = 0; c < tpb_layer_nchunks(d); c++) {
        long rows = l->crows[c];
        tpb_layer_row_share(rows, d->tp, d->group_rank, &share, &start);
        if (i < r0 + rows) {
            long at = i - r0 - start;
            return at >= 0 && at < share ? (before + at) * d->n + j : -1;
        }
        before += share;
        r0 += rows;
    }
    return -1;
}

const tpb_coll_ops_t tpb_coll_reduce_scatter = {
    .kind = TPB_COLL_REDUCE_SCATTER,
    .scatters = 1,
    .even_rows = 1,
    .sums = 1,
    .busbw_factor = rs_busbw_factor,
    .bytes = rs_bytes,
    .extra = rs_extra,
    .setup = rs_setup,
    .describe = rs_describe,
    .comm_sizes = rs_comm_sizes,
    .comm_describe = rs_comm_describe,
    .y_index = rs_y_index,
};
