/*
 * coll_allreduce.c - the sum-all-reduce of the M x N partial outputs into Y on every
 * rank (row; col with --col-collective allreduce): the payload is M x N whatever the
 * shards. A chunk all-reduces its rows of the partial into the same rows of Y.
 */
#include "run/layer_impl.h"

/* nccl-tests' all-reduce: each rank sends and receives 2(t-1)/t of the message. */
static double ar_busbw_factor(int t)
{
    return 2.0 * (t - 1) / t;
}

static double ar_bytes(const tpb_layer_desc_t *d)
{
    return (double)d->m * (double)d->n * (double)tpb_dtype_out_size(d->dtype);
}

static double ar_extra(const tpb_layer_desc_t *d, long len)
{
    return (double)d->m * (double)d->n;
}

static tpb_status_t ar_setup(tpb_layer_t *l)
{
    if (!l->d.comm_only)
        return TPB_OK;
    return tpb_backend_fill(l->dev, l->part, l->d.m, l->d.n, 0, 0, l->d.seed, TPB_MAT_X, 1.0,
                            tpb_dtype_out(l->d.dtype));
}

static void ar_describe(const tpb_layer_t *l, long r0, long rows, const tpb_coll_desc_t *prev,
                        tpb_coll_desc_t *c)
{
    size_t at = (size_t)r0 * (size_t)l->d.n * tpb_dtype_out_size(l->d.dtype);
    c->kind = TPB_COLL_ALLREDUCE;
    c->dtype = tpb_dtype_out(l->d.dtype);
    c->send = (const char *)l->part + at;
    c->recv = (char *)l->y + at;
    c->count = (size_t)rows * (size_t)l->d.n;
}

/* A comm-only message: the whole 1 x n reduced, whatever the blocks. */
static void ar_comm_sizes(const tpb_layer_desc_t *d, long len, double *nsend, double *nrecv)
{
    *nsend = *nrecv = (double)d->m * (double)d->n;
}

static void ar_comm_describe(const tpb_layer_t *l, tpb_coll_desc_t *c)
{
    ar_describe(l, 0, l->d.m, NULL, c);
}

static long ar_y_index(const tpb_layer_t *l, long i, long j)
{
    return i * l->d.n + j;
}

const tpb_coll_ops_t tpb_coll_allreduce = {
    .kind = TPB_COLL_ALLREDUCE,
    .sums = 1,
    .busbw_factor = ar_busbw_factor,
    .bytes = ar_bytes,
    .extra = ar_extra,
    .setup = ar_setup,
    .describe = ar_describe,
    .comm_sizes = ar_comm_sizes,
    .comm_describe = ar_comm_describe,
    .y_index = ar_y_index,
};
