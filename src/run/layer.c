/* layer.c - buffers, one timed iteration and verification of a TP layer. */
#include "run/layer_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/partition.h"
#include "base/clock.h"
#include "base/stamp.h"
#include "base/testfault.h"

/* Elements of the buffers in the input's dtype (x, w, xs) and in the output's (part,
 * y) on a rank whose shard is len. */
static void sizes(const tpb_layer_desc_t *d, long len, double *nin, double *nout)
{
    if (d->comm_only) { /* only the collective's buffers: the message in the output's dtype */
        double ns, nr;
        d->coll->comm_sizes(d, len, &ns, &nr);
        *nin = 0.0;
        *nout = ns + nr;
        return;
    }
    double nx, nw, np, extra = d->coll->extra(d, len);
    d->orient->sizes(d, len, &nx, &nw, &np);
    *nin = nx + nw + (d->coll->gathers_x ? extra : 0.0);
    *nout = np + (d->coll->gathers_x ? 0.0 : extra);
}

double tpb_layer_bytes(const tpb_layer_desc_t *d)
{
    double nin, nout;
    sizes(d, d->shards[d->group_rank], &nin, &nout);
    return nin * (double)tpb_dtype_in_size(d->dtype) + nout * (double)tpb_dtype_out_size(d->dtype);
}

double tpb_layer_rank_flop(const tpb_layer_desc_t *d)
{
    if (d->comm_only)
        return 0.0;
    if (!tpb_layer_sparse(d))
        return d->orient->flop(d, d->shards[d->group_rank]);
    long off = 0;
    for (int r = 0; r < d->group_rank; r++)
        off += d->shards[r];
    return tpb_layer_sparse_flop(d, off, d->shards[d->group_rank]);
}

double tpb_layer_flop(const tpb_layer_desc_t *d)
{
    tpb_layer_desc_t r = *d;
    double f = 0.0;
    for (r.group_rank = 0; r.group_rank < d->tp; r.group_rank++)
        f += tpb_layer_rank_flop(&r);
    return f;
}

/* TPBAL_TEST_FAULT=shard-offset (tpbal's own tests): group rank 1 fills its W shard from one
 * row (col) or column (row) before its place, an off-by-one shard offset --check must catch. */
static int shard_offset_planted(const tpb_layer_t *l, int id)
{
    return tpb_test_fault("shard-offset") && id == TPB_MAT_W && l->d.group_rank == 1;
}

/* Seeded matrix id (TPB_MAT_X: M x K, TPB_MAT_W: N x K, scaled by 1/sqrt(K)) of d's shape. */
static tpb_inputs_block_t matrix(const tpb_layer_desc_t *d, int id)
{
    return (tpb_inputs_block_t){.rows = id == TPB_MAT_W ? d->n : d->m,
                                .cols = d->k,
                                .seed = d->seed,
                                .id = (uint32_t)id,
                                .scale = id == TPB_MAT_W ? 1.0 / sqrt((double)d->k) : 1.0,
                                .dtype = d->dtype};
}

int tpb_layer_inputs(const tpb_layer_desc_t *d, tpb_inputs_block_t m[2])
{
    if (d->comm_only)
        return 0;
    m[0] = matrix(d, TPB_MAT_X);
    m[1] = matrix(d, TPB_MAT_W);
    return 2;
}

tpb_status_t tpb_layer_fill(tpb_layer_t *l, void *dst, long rows, long cols, long row0, long col0,
                            int id)
{
    if (shard_offset_planted(l, id)) {
        if (row0 > 0)
            row0--;
        else if (col0 > 0)
            col0--;
    }
    tpb_inputs_block_t b = matrix(&l->d, id);
    b.r0 = row0;
    b.c0 = col0;
    b.nr = rows;
    b.nc = cols;
    return tpb_inputs_fill(l->dev, dst, &b);
}

static tpb_status_t alloc(tpb_layer_t *l, double n, size_t esz, void **p)
{
    return tpb_dev_alloc(l->dev, (size_t)n * esz, p);
}

static tpb_status_t alloc_buffers(tpb_layer_t *l)
{
    const tpb_layer_desc_t *d = &l->d;
    size_t in = tpb_dtype_in_size(d->dtype), out = tpb_dtype_out_size(d->dtype);
    if (d->comm_only) {
        double ns, nr;
        d->coll->comm_sizes(d, l->len, &ns, &nr);
        TPB_CHECK_RET(alloc(l, ns, out, &l->part));
        return alloc(l, nr, out, &l->y);
    }
    double nx, nw, np, extra = d->coll->extra(d, l->len);
    d->orient->sizes(d, l->len, &nx, &nw, &np);
    TPB_CHECK_RET(alloc(l, nx, in, &l->x));
    TPB_CHECK_RET(alloc(l, nw, in, &l->w));
    TPB_CHECK_RET(alloc(l, np, out, &l->part));
    l->nresult = (size_t)(d->coll->gathers_x ? np : extra);
    return d->coll->gathers_x ? alloc(l, extra, in, &l->xs) : alloc(l, extra, out, &l->y);
}

/* The chunks of M (one when serial), the layer's collective and this rank's shard. */
static void plan_blocks(tpb_layer_t *l)
{
    const tpb_layer_desc_t *d = &l->d;
    long start;
    for (int j = 0; j < tpb_layer_nchunks(d); j++)
        tpb_layer_row_share(d->m, tpb_layer_nchunks(d), j, &l->crows[j], &start);
    l->off = 0;
    for (int r = 0; r < d->group_rank; r++)
        l->off += d->shards[r];
    l->len = d->shards[d->group_rank];
    l->whole = (tpb_coll_desc_t){.counts = l->counts, .displs = l->displs, .mark = TPB_NO_MARK};
}

/* Inputs and the GEMM of this rank's shard (comm-only: the collective's input, seeded). */
static tpb_status_t setup_shard(tpb_layer_t *l)
{
    if (l->d.comm_only) {
        l->d.coll->comm_describe(l, &l->whole);
        return l->d.coll->setup(l);
    }
    l->gemm.m = l->d.m;
    l->gemm.dtype = l->d.dtype;
    l->gemm.a = l->x;
    l->gemm.b = l->w;
    TPB_CHECK_RET(l->d.orient->setup(l));
    TPB_CHECK_RET(l->d.coll->setup(l));
    l->d.coll->describe(l, 0, l->d.m, NULL, &l->whole);
    if (l->d.chunks > 0)
        TPB_CHECK_RET(tpb_layer_overlap_setup(l));
    return tpb_layer_sparse(&l->d) ? tpb_layer_sparse_setup(l) : TPB_OK;
}

/* The compute phase: the shard's GEMM, or its blocks' (the injected delay in the first). */
static tpb_status_t run_gemms(tpb_layer_t *l)
{
    if (!l->sub)
        return tpb_dev_gemm(l->dev, &l->gemm);
    l->sub[0].delay_us = l->gemm.delay_us;
    for (int i = 0; i < l->nsub; i++)
        TPB_CHECK_RET(tpb_dev_gemm(l->dev, &l->sub[i]));
    return TPB_OK;
}

/* Sequence parallelism's column layer: X gathered as the iterations gather it (chunk by
 * chunk when chunked), before the first GEMM reads it. */
static tpb_status_t gather_x(tpb_layer_t *l)
{
    if (l->d.chunks == 0)
        return tpb_comm_post(l->comm, &l->whole);
    for (int j = 0; j < l->d.chunks; j++) {
        tpb_coll_desc_t c = l->cdesc[j];
        c.nonblocking = 0;
        TPB_CHECK_RET(tpb_comm_post(l->comm, &c));
    }
    return TPB_OK;
}

tpb_status_t tpb_layer_create(tpb_device_t *dev, tpb_comm_t *comm, const tpb_layer_desc_t *d,
                              tpb_layer_t **out)
{
    tpb_status_t st = TPB_ERR_NOMEM;
    tpb_layer_t *l = calloc(1, sizeof(*l));
    if (!l)
        return tpb_err_set(TPB_ERR_NOMEM, "layer: out of memory");
    l->dev = dev;
    l->comm = comm;
    l->d = *d;
    l->shards = malloc((size_t)d->tp * sizeof(long));
    l->counts = malloc((size_t)d->tp * sizeof(size_t));
    l->displs = malloc((size_t)d->tp * sizeof(size_t));
    l->crows = malloc((size_t)tpb_layer_nchunks(d) * sizeof(long));
    if (!l->shards || !l->counts || !l->displs || !l->crows) {
        st = tpb_err_set(TPB_ERR_NOMEM, "layer: out of memory");
        goto err;
    }
    memcpy(l->shards, d->shards, (size_t)d->tp * sizeof(long));
    l->d.shards = l->shards;
    plan_blocks(l);
    TPB_CHECK_GOTO(alloc_buffers(l), st, err);
    tpb_stamp(TPB_PHASE_INPUTS);
    TPB_CHECK_GOTO(setup_shard(l), st, err);
    tpb_stamp(TPB_PHASE_SETUP);
    if (!d->comm_only && d->coll->gathers_x)
        TPB_CHECK_GOTO(gather_x(l), st, err);
    /* one untimed GEMM: a backend's per-shape set-up (cuBLASLt's heuristic) and
     * its errors happen here, where every rank agrees on them, not in a timed loop */
    if (!d->comm_only)
        TPB_CHECK_GOTO(run_gemms(l), st, err);
    /* and every chunk piece of --overlap chunked (other shapes: a refusal of one is this
     * config's skip, not an abort of the sweep in its warm-up) */
    if (!d->comm_only && d->chunks > 0)
        TPB_CHECK_GOTO(tpb_layer_gemm_chunks(l), st, err);
    *out = l;
    return TPB_OK;
err:
    tpb_layer_destroy(l);
    return st;
}

tpb_status_t tpb_layer_warm(tpb_layer_t *l)
{
    if (l->d.comm_only)
        return TPB_OK;
    TPB_CHECK_RET(run_gemms(l));
    return l->d.chunks > 0 ? tpb_layer_gemm_chunks(l) : TPB_OK;
}

const tpb_gemm_t *tpb_layer_gemm(const tpb_layer_t *l)
{
    /* block-sparse: the first block's GEMM, which writes (never adds) what it computes; the
     * dense one would leave a row shard's unkept columns non-zero */
    return l->sub ? &l->sub[0] : &l->gemm;
}

void tpb_layer_destroy(tpb_layer_t *l)
{
    if (!l)
        return;
    void *bufs[5] = {l->x, l->xs, l->w, l->part, l->y};
    for (int i = 0; i < 5; i++)
        if (bufs[i])
            tpb_dev_free(l->dev, bufs[i]);
    free(l->sub);
    tpb_layer_overlap_free(l);
    free(l->shards);
    free(l->counts);
    free(l->displs);
    free(l->crows);
    free(l);
}

tpb_status_t tpb_layer_iter(tpb_layer_t *l, size_t slot, double delay_us, int record)
{
    if (l->d.chunks > 0)
        return tpb_layer_overlap_iter(l, slot, delay_us, record);
    l->gemm.delay_us = delay_us;
    /* comm-only: c0 is marked as a compute end, which holds no start gate (a GPU backend
     * holds an idle stream at a compute begin until the GEMM is queued; there is none) */
    if (record)
        TPB_CHECK_RET(tpb_dev_mark(l->dev, tpb_marks_iter(slot, 0),
                                   l->d.comm_only ? TPB_MARK_COMPUTE_END : TPB_MARK_COMPUTE_BEGIN));
    if (l->d.comm_only) {
        if (delay_us > 0.0) /* --inject-delay: the rank arrives late */
            tpb_spin_us(delay_us);
    } else {
        TPB_CHECK_RET(run_gemms(l));
    }
    if (record)
        TPB_CHECK_RET(tpb_dev_mark(l->dev, tpb_marks_iter(slot, 1), TPB_MARK_COMPUTE_END));
    if (tpb_layer_collects(&l->d))
        TPB_CHECK_RET(tpb_comm_post(l->comm, &l->whole));
    return record ? tpb_dev_mark(l->dev, tpb_marks_iter(slot, 2), TPB_MARK_COMM) : TPB_OK;
}
