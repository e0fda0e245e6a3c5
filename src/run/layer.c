/* layer.c - buffers, one timed iteration and verification of a TP layer. */
#include "run/layer_impl.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/partition.h"
#include "base/clock.h"
#include "base/rng.h"

/* --comm-only: 1 if the collective reduces the whole message (row, col + all-reduce). */
static int comm_whole(const tpb_layer_desc_t *d)
{
    return d->split->coll == TPB_COLL_ALLREDUCE;
}

/* Elements of X, W, the partial output and Y on this rank. */
static void sizes(const tpb_layer_desc_t *d, long len, double *nx, double *nw, double *np,
                  double *ny)
{
    d->split->sizes(d, len, nx, nw, np);
    *ny = (double)d->m * (double)d->n;
    if (d->comm_only) { /* only the collective's buffers: an all-reduce's input is the whole
                         * message, an all-gather's this rank's block */
        *nx = *nw = 0.0;
        *np = comm_whole(d) ? *ny : (double)d->m * (double)len;
    }
}

double tpb_layer_bytes(const tpb_layer_desc_t *d)
{
    double nx, nw, np, ny;
    sizes(d, d->shards[d->group_rank], &nx, &nw, &np, &ny);
    return (nx + nw) * (double)tpb_dtype_in_size(d->dtype) +
           (np + ny) * (double)tpb_dtype_out_size(d->dtype);
}

double tpb_layer_rank_flop(const tpb_layer_desc_t *d)
{
    if (d->comm_only)
        return 0.0;
    if (!tpb_layer_sparse(d))
        return d->split->flop(d, d->shards[d->group_rank]);
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

static tpb_status_t alloc_buffers(tpb_layer_t *l)
{
    double nx, nw, np, ny;
    size_t in = tpb_dtype_in_size(l->d.dtype), out = tpb_dtype_out_size(l->d.dtype);
    sizes(&l->d, l->len, &nx, &nw, &np, &ny);
    if (!l->d.comm_only) {
        TPB_CHECK_RET(l->ops->alloc(l->be, (size_t)nx * in, &l->x));
        TPB_CHECK_RET(l->ops->alloc(l->be, (size_t)nw * in, &l->w));
    }
    TPB_CHECK_RET(l->ops->alloc(l->be, (size_t)np * out, &l->part));
    return l->ops->alloc(l->be, (size_t)ny * out, &l->y);
}

/* Inputs and the GEMM of this rank's shard (comm-only: the collective's input, seeded). */
static tpb_status_t setup_shard(tpb_layer_t *l)
{
    if (l->d.comm_only) {
        long cols = comm_whole(&l->d) ? l->d.n : l->len;
        return tpb_backend_fill(l->ops, l->be, l->part, l->d.m, cols, 0, l->off, l->d.seed,
                                TPB_MAT_X, 1.0, tpb_dtype_out(l->d.dtype));
    }
    l->gemm.m = l->d.m;
    l->gemm.dtype = l->d.dtype;
    l->gemm.a = l->x;
    l->gemm.b = l->w;
    TPB_CHECK_RET(l->d.split->setup(l));
    if (l->d.chunks > 0)
        TPB_CHECK_RET(tpb_layer_overlap_setup(l));
    return tpb_layer_sparse(&l->d) ? tpb_layer_sparse_setup(l) : TPB_OK;
}

/* All-gather-v blocks (in elements) and this rank's shard. */
static void plan_blocks(tpb_layer_t *l)
{
    const tpb_layer_desc_t *d = &l->d;
    long offs[d->tp];
    tpb_partition_offsets(d->shards, d->tp, offs);
    for (int r = 0; r < d->tp; r++) {
        l->counts[r] = (size_t)d->m * (size_t)d->shards[r];
        l->displs[r] = (size_t)d->m * (size_t)offs[r];
    }
    l->off = offs[d->group_rank];
    l->len = d->shards[d->group_rank];
}

/* The compute phase: the shard's GEMM, or its blocks' (the injected delay in the first). */
static tpb_status_t run_gemms(tpb_layer_t *l)
{
    if (!l->sub)
        return l->ops->gemm(l->be, &l->gemm);
    l->sub[0].delay_us = l->gemm.delay_us;
    for (int i = 0; i < l->nsub; i++)
        TPB_CHECK_RET(l->ops->gemm(l->be, &l->sub[i]));
    return TPB_OK;
}

tpb_status_t tpb_layer_create(const tpb_backend_ops_t *ops, tpb_backend_t *be, tpb_comm_t *comm,
                              const tpb_layer_desc_t *d, tpb_layer_t **out)
{
    tpb_status_t st = TPB_ERR_NOMEM;
    tpb_layer_t *l = calloc(1, sizeof(*l));
    if (!l)
        return tpb_err_set(TPB_ERR_NOMEM, "layer: out of memory");
    l->ops = ops;
    l->be = be;
    l->comm = comm;
    l->d = *d;
    l->shards = malloc((size_t)d->tp * sizeof(long));
    l->counts = malloc((size_t)d->tp * sizeof(size_t));
    l->displs = malloc((size_t)d->tp * sizeof(size_t));
    if (!l->shards || !l->counts || !l->displs) {
        st = tpb_err_set(TPB_ERR_NOMEM, "layer: out of memory");
        goto err;
    }
    memcpy(l->shards, d->shards, (size_t)d->tp * sizeof(long));
    l->d.shards = l->shards;
    plan_blocks(l);
    TPB_CHECK_GOTO(alloc_buffers(l), st, err);
    TPB_CHECK_GOTO(setup_shard(l), st, err);
    /* one untimed GEMM: a backend's per-shape set-up (cuBLASLt's heuristic) and
     * its errors happen here, where every rank agrees on them, not in a timed loop */
    if (!d->comm_only)
        TPB_CHECK_GOTO(run_gemms(l), st, err);
    *out = l;
    return TPB_OK;
err:
    tpb_layer_destroy(l);
    return st;
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
    void *bufs[4] = {l->x, l->w, l->part, l->y};
    for (int i = 0; i < 4; i++)
        if (bufs[i])
            l->ops->free(l->be, bufs[i]);
    free(l->sub);
    tpb_layer_overlap_free(l);
    free(l->shards);
    free(l->counts);
    free(l->displs);
    free(l);
}

tpb_status_t tpb_layer_iter(tpb_layer_t *l, size_t slot, double delay_us, int record)
{
    const tpb_backend_ops_t *ops = l->ops;
    if (l->d.chunks > 0)
        return tpb_layer_overlap_iter(l, slot, delay_us, record);
    l->gemm.delay_us = delay_us;
    /* comm-only: c0 is marked as a compute end, which holds no start gate (a GPU backend
     * holds an idle stream at a compute begin until the GEMM is queued; there is none) */
    if (record)
        TPB_CHECK_RET(ops->mark(l->be, 3 * slot,
                                l->d.comm_only ? TPB_MARK_COMPUTE_END : TPB_MARK_COMPUTE_BEGIN));
    if (l->d.comm_only) {
        if (delay_us > 0.0) /* --inject-delay: the rank arrives late */
            tpb_spin_us(delay_us);
    } else {
        TPB_CHECK_RET(run_gemms(l));
    }
    if (record)
        TPB_CHECK_RET(ops->mark(l->be, 3 * slot + 1, TPB_MARK_COMPUTE_END));
    TPB_CHECK_RET(l->d.split->collect(l));
    return record ? ops->mark(l->be, 3 * slot + 2, TPB_MARK_COMM) : TPB_OK;
}

/* Reference Y = X W (= X (W^T)^T) in fp64 from the same (quantised) generated inputs. */
static tpb_status_t reference(const tpb_layer_desc_t *d, double *ref)
{
    size_t nx = (size_t)d->m * d->k, nw = (size_t)d->k * d->n;
    double *x = malloc(nx * sizeof(double)), *w = malloc(nw * sizeof(double));
    void *q = malloc((nx > nw ? nx : nw) * tpb_dtype_in_size(d->dtype));
    tpb_status_t st = TPB_OK;
    if (!x || !w || !q) {
        st = tpb_err_set(TPB_ERR_NOMEM, "--check: no host memory for the reference of %ldx%ldx%ld",
                         d->m, d->n, d->k);
        goto out;
    }
    tpb_rng_fill(x, d->m, d->k, d->k, 0, 0, d->seed, TPB_MAT_X, 1.0);
    tpb_rng_fill(w, d->n, d->k, d->k, 0, 0, d->seed, TPB_MAT_W, 1.0 / sqrt((double)d->k));
    if (tpb_layer_sparse(d))
        TPB_CHECK_GOTO(tpb_layer_sparse_mask(d, w), st, out);
    tpb_dtype_encode(d->dtype, x, q, nx);
    tpb_dtype_decode(d->dtype, q, x, nx);
    tpb_dtype_encode(d->dtype, w, q, nw);
    tpb_dtype_decode(d->dtype, q, w, nw);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)d->m, (int)d->n, (int)d->k, 1.0, x,
                (int)d->k, w, (int)d->k, 0.0, ref, (int)d->n);
out:
    free(x);
    free(w);
    free(q);
    return st;
}

tpb_status_t tpb_layer_check(tpb_layer_t *l, double *max_rel_err)
{
    const tpb_layer_desc_t *d = &l->d;
    size_t mn = (size_t)d->m * d->n, osz = tpb_dtype_out_size(d->dtype);
    double *ref = malloc(mn * sizeof(double)), *y = malloc(mn * sizeof(double));
    void *raw = malloc(mn * osz);
    long *offs = malloc((size_t)d->tp * sizeof(long));
    tpb_status_t st;
    if (!ref || !y || !raw || !offs) {
        st = tpb_err_set(TPB_ERR_NOMEM, "--check: no host memory for %zu outputs", mn);
        goto out;
    }
    TPB_CHECK_GOTO(l->ops->copy(l->be, raw, l->y, mn * osz, TPB_COPY_TO_HOST), st,
                   out); /* waits for Y */
    tpb_dtype_decode(tpb_dtype_out(d->dtype), raw, y, mn);
    TPB_CHECK_GOTO(reference(d, ref), st, out);
    tpb_partition_offsets(l->shards, d->tp, offs);
    double max_err = 0.0, max_ref = 0.0;
    for (long i = 0; i < d->m; i++)
        for (long j = 0; j < d->n; j++) {
            double r = ref[i * d->n + j];
            max_ref = fmax(max_ref, fabs(r));
            double e = fabs(l->d.split->y_at(l, y, i, j, offs) - r);
            max_err = isnan(e) ? INFINITY : fmax(max_err, e);
        }
    *max_rel_err = max_ref > 0.0 ? max_err / max_ref : max_err;
out:
    free(ref);
    free(y);
    free(raw);
    free(offs);
    return st;
}
