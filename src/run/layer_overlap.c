/*
 * layer_overlap.c - --overlap chunked: the rows of X, the partial output and Y cut
 * into C chunks (an even split of M). Per iteration:
 *
 *   c0 | GEMM 0 (in `polls` pieces, a progress call after each) | start coll 0 |
 *        GEMM 1 ... | start coll 1 | ... GEMM C-1 | start coll C-1 | c1 | wait all | x1
 *
 * so chunk i's collective runs beside chunk i+1's GEMM. Every chunk marks its GEMM's
 * begin and end and its collective's completion (backend.h: coll_start). A chunk of
 * the row split (or col + all-reduce) is M_i x N rows of the partial, all-reduced in
 * place of rows of Y; a chunk of the col + all-gather split is M_i rows of every rank's
 * block of Y, gathered with per-chunk counts and offsets. The result equals the
 * serial one (--check).
 */
#include "run/layer_impl.h"

#include <stdint.h>
#include <stdlib.h>

#include "base/partition.h"

/* The collective of chunk j: rows [r0, r0 + rows) of the partial and of Y. */
static void chunk_coll(tpb_layer_t *l, int j, long r0, long rows)
{
    const tpb_layer_desc_t *d = &l->d;
    int t = d->tp;
    size_t out = tpb_dtype_out_size(d->dtype);
    if (d->split->coll == TPB_COLL_ALLREDUCE) { /* partial and Y are both M x N */
        size_t at = (size_t)r0 * (size_t)d->n;
        l->csend[j] = (const uint8_t *)l->part + at * out;
        l->crecv[j] = (uint8_t *)l->y + at * out;
        l->ccount[j] = (size_t)rows * (size_t)d->n;
        return;
    }
    l->csend[j] = (const uint8_t *)l->part + (size_t)r0 * (size_t)l->len * out;
    l->crecv[j] = l->y;
    for (int r = 0; r < t; r++) { /* rank r's block is M x n_r at displs[r] */
        l->ccounts[j * t + r] = (size_t)rows * (size_t)l->shards[r];
        l->cdispls[j * t + r] = l->displs[r] + (size_t)r0 * (size_t)l->shards[r];
    }
}

/* GEMM rows [r0, r0 + rows) of the shard's GEMM. */
static tpb_gemm_t rows_of(const tpb_layer_t *l, long r0, long rows)
{
    size_t in = tpb_dtype_in_size(l->d.dtype), out = tpb_dtype_out_size(l->d.dtype);
    tpb_gemm_t g = l->gemm;
    g.m = rows;
    g.a = (const uint8_t *)g.a + (size_t)r0 * (size_t)g.lda * in;
    g.c = (uint8_t *)g.c + (size_t)r0 * (size_t)g.ldc * out;
    return g;
}

tpb_status_t tpb_layer_overlap_setup(tpb_layer_t *l)
{
    const tpb_layer_desc_t *d = &l->d;
    int C = d->chunks, P = d->polls, t = d->tp;
    long rows[C], pieces[P];
    TPB_CHECK_RET(tpb_partition_even(d->m, C, 1, rows));
    l->piece = calloc((size_t)C * P, sizeof(*l->piece));
    l->csend = calloc((size_t)C, sizeof(*l->csend));
    l->crecv = calloc((size_t)C, sizeof(*l->crecv));
    l->ccount = calloc((size_t)C, sizeof(*l->ccount));
    l->ccounts = calloc((size_t)C * t, sizeof(*l->ccounts));
    l->cdispls = calloc((size_t)C * t, sizeof(*l->cdispls));
    if (!l->piece || !l->csend || !l->crecv || !l->ccount || !l->ccounts || !l->cdispls)
        return tpb_err_set(TPB_ERR_NOMEM, "layer: out of memory for %d chunks", C);
    long r0 = 0;
    for (int j = 0; j < C; j++) {
        int np = rows[j] < P ? (int)rows[j] : P; /* a piece has at least one row */
        TPB_CHECK_RET(tpb_partition_even(rows[j], np, 1, pieces));
        long p0 = r0;
        for (int q = 0; q < P; q++) {
            tpb_gemm_t *g = &l->piece[j * P + q];
            *g = rows_of(l, p0, q < np ? pieces[q] : 0); /* m = 0: nothing to run */
            g->chunk = j > 0 || q > 0;
            p0 += q < np ? pieces[q] : 0;
        }
        chunk_coll(l, j, r0, rows[j]);
        r0 += rows[j];
    }
    return TPB_OK;
}

void tpb_layer_overlap_free(tpb_layer_t *l)
{
    free(l->piece);
    free(l->csend);
    free(l->crecv);
    free(l->ccount);
    free(l->ccounts);
    free(l->cdispls);
}

/* Chunk j's GEMM pieces, each followed by a progress call (progress 0: none). */
static tpb_status_t chunk_gemm(tpb_layer_t *l, int j, double delay_us, int progress)
{
    const tpb_backend_ops_t *ops = l->ops;
    for (int q = 0; q < l->d.polls; q++) {
        tpb_gemm_t *g = &l->piece[j * l->d.polls + q];
        if (g->m == 0)
            continue;
        g->delay_us = j == 0 && q == 0 ? delay_us : 0.0;
        TPB_CHECK_RET(ops->gemm(l->be, g));
        if (progress)
            TPB_CHECK_RET(ops->coll_progress(l->comm));
    }
    return TPB_OK;
}

static tpb_status_t start_coll(tpb_layer_t *l, int j, size_t mark)
{
    int t = l->d.tp, gather = l->d.split->coll != TPB_COLL_ALLREDUCE;
    return l->ops->coll_start(l->comm, l->csend[j], l->crecv[j], l->ccount[j],
                              gather ? &l->ccounts[j * t] : NULL,
                              gather ? &l->cdispls[j * t] : NULL, tpb_dtype_out(l->d.dtype), mark);
}

tpb_status_t tpb_layer_overlap_iter(tpb_layer_t *l, size_t slot, double delay_us, int record)
{
    const tpb_backend_ops_t *ops = l->ops;
    const tpb_layer_desc_t *d = &l->d;
    if (record)
        TPB_CHECK_RET(ops->mark(l->be, 3 * slot, TPB_MARK_COMPUTE_BEGIN));
    for (int j = 0; j < d->chunks; j++) {
        /* a chunk's begin is marked as a compute end: no start gate is held there */
        if (record)
            TPB_CHECK_RET(
                ops->mark(l->be, tpb_layer_chunk_mark(d, slot, j, 0), TPB_MARK_COMPUTE_END));
        TPB_CHECK_RET(chunk_gemm(l, j, delay_us, j > 0));
        if (record)
            TPB_CHECK_RET(
                ops->mark(l->be, tpb_layer_chunk_mark(d, slot, j, 1), TPB_MARK_COMPUTE_END));
        TPB_CHECK_RET(start_coll(l, j, record ? tpb_layer_chunk_mark(d, slot, j, 2) : TPB_NO_MARK));
    }
    if (record)
        TPB_CHECK_RET(ops->mark(l->be, 3 * slot + 1, TPB_MARK_COMPUTE_END));
    TPB_CHECK_RET(ops->coll_wait(l->comm));
    return record ? ops->mark(l->be, 3 * slot + 2, TPB_MARK_COMM) : TPB_OK;
}

tpb_status_t tpb_layer_gemm_whole(tpb_layer_t *l)
{
    return l->ops->gemm(l->be, &l->gemm);
}

tpb_status_t tpb_layer_gemm_chunks(tpb_layer_t *l)
{
    for (int j = 0; j < l->d.chunks; j++)
        TPB_CHECK_RET(chunk_gemm(l, j, 0.0, 0));
    return TPB_OK;
}

tpb_status_t tpb_layer_comm_chunks(tpb_layer_t *l)
{
    for (int j = 0; j < l->d.chunks; j++)
        TPB_CHECK_RET(start_coll(l, j, TPB_NO_MARK));
    return l->ops->coll_wait(l->comm);
}

tpb_status_t tpb_layer_comm_whole(tpb_layer_t *l)
{
    return l->d.split->collect(l);
}
