/*
 * layer_overlap.c - --overlap chunked: the rows of M cut into C chunks (an even split
 * of M). Per iteration:
 *
 *   c0 | GEMM 0 (in `polls` pieces, a progress call after each) | start coll 0 |
 *        GEMM 1 ... | start coll 1 | ... GEMM C-1 | start coll C-1 | c1 | wait all | x1
 *
 * so chunk i's collective runs beside chunk i+1's GEMM. Every chunk marks its GEMM's
 * begin and end and its collective's completion (tpb_coll_desc_t.mark). A chunk's
 * collective is the layer's collective over the chunk's rows (run/coll.h describes it).
 * The result equals the serial one (--check, right after the measured loop).
 * TPBAL_TEST_FAULT=chunk-offset (for tpbal's own tests) moves the second chunk's
 * collective one row up, so that one row of Y is never made: --check must fail.
 */
#include "run/layer_impl.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/testfault.h"

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

/* Chunk j's GEMM, rows [r0, r0 + rows), in `polls` pieces (a piece has a row at least). */
static void chunk_pieces(tpb_layer_t *l, int j, long r0, long rows)
{
    int P = l->d.polls, np = rows < P ? (int)rows : P;
    long p0 = r0, piece, start;
    for (int q = 0; q < P; q++) {
        tpb_gemm_t *g = &l->piece[j * P + q];
        piece = 0;
        if (q < np)
            tpb_layer_row_share(rows, np, q, &piece, &start);
        *g = rows_of(l, p0, piece); /* m = 0: nothing to run */
        g->chunk = j > 0 || q > 0;
        g->beside_comm = 1;
        p0 += piece;
    }
}

/* The planted fault of TPBAL_TEST_FAULT=chunk-offset: chunk 1 one row up. */
static long fault_shift(int j)
{
    return j == 1 && tpb_test_fault("chunk-offset") ? -1 : 0;
}

tpb_status_t tpb_layer_overlap_setup(tpb_layer_t *l)
{
    const tpb_layer_desc_t *d = &l->d;
    int C = d->chunks, t = d->tp;
    l->piece = calloc((size_t)C * (size_t)d->polls, sizeof(*l->piece));
    l->cdesc = calloc((size_t)C, sizeof(*l->cdesc));
    l->ccounts = calloc((size_t)C * t, sizeof(*l->ccounts));
    l->cdispls = calloc((size_t)C * t, sizeof(*l->cdispls));
    if (!l->piece || !l->cdesc || !l->ccounts || !l->cdispls)
        return tpb_err_set(TPB_ERR_NOMEM, "layer: out of memory for %d chunks", C);
    long r0 = 0;
    for (int j = 0; j < C; r0 += l->crows[j], j++) {
        chunk_pieces(l, j, r0, l->crows[j]);
        tpb_coll_desc_t *c = &l->cdesc[j];
        *c = (tpb_coll_desc_t){.counts = &l->ccounts[j * t], .displs = &l->cdispls[j * t]};
        d->coll->describe(l, r0 + fault_shift(j), l->crows[j], j ? &l->cdesc[j - 1] : NULL, c);
        c->nonblocking = 1;
        c->mark = TPB_NO_MARK;
    }
    return TPB_OK;
}

void tpb_layer_overlap_free(tpb_layer_t *l)
{
    free(l->piece);
    free(l->cdesc);
    free(l->ccounts);
    free(l->cdispls);
}

/* Chunk j's GEMM pieces, each followed by a progress call (progress 0: none). */
static tpb_status_t chunk_gemm(tpb_layer_t *l, int j, double delay_us, int progress)
{
    for (int q = 0; q < l->d.polls; q++) {
        tpb_gemm_t *g = &l->piece[j * l->d.polls + q];
        if (g->m == 0)
            continue;
        g->delay_us = j == 0 && q == 0 ? delay_us : 0.0;
        TPB_CHECK_RET(tpb_dev_gemm(l->dev, g));
        if (progress)
            TPB_CHECK_RET(tpb_comm_progress(l->comm));
    }
    return TPB_OK;
}

static tpb_status_t start_coll(tpb_layer_t *l, int j, size_t mark)
{
    if (!tpb_layer_collects(&l->d))
        return mark == TPB_NO_MARK ? TPB_OK : tpb_dev_mark(l->dev, mark, TPB_MARK_COMPUTE_END);
    tpb_coll_desc_t c = l->cdesc[j];
    c.mark = mark;
    return tpb_comm_post(l->comm, &c);
}

tpb_status_t tpb_layer_overlap_iter(tpb_layer_t *l, size_t slot, double delay_us, int record)
{
    const tpb_layer_desc_t *d = &l->d;
    const tpb_marks_layout_t *m = &d->marks;
    if (record)
        TPB_CHECK_RET(tpb_dev_mark(l->dev, tpb_marks_iter(slot, 0), TPB_MARK_COMPUTE_BEGIN));
    for (int j = 0; j < d->chunks; j++) {
        /* a chunk's begin is a compute begin: a GPU holds its stream there until the chunk's
         * GEMM and end mark are queued (chunk 0's within c0's hold) */
        if (record)
            TPB_CHECK_RET(tpb_dev_mark(l->dev, tpb_marks_chunk(m, slot, j, TPB_CHUNK_GEMM_BEGIN),
                                       TPB_MARK_COMPUTE_BEGIN));
        TPB_CHECK_RET(chunk_gemm(l, j, delay_us, j > 0));
        if (record)
            TPB_CHECK_RET(tpb_dev_mark(l->dev, tpb_marks_chunk(m, slot, j, TPB_CHUNK_GEMM_END),
                                       TPB_MARK_COMPUTE_END));
        /* c1 right behind the last chunk's GEMM, before its collective is started: a staged
         * one (--comm mpi) holds the host until it ends, and c1 then would be recorded late */
        if (record && j == d->chunks - 1)
            TPB_CHECK_RET(tpb_dev_mark(l->dev, tpb_marks_iter(slot, 1), TPB_MARK_COMPUTE_END));
        TPB_CHECK_RET(start_coll(
            l, j, record ? tpb_marks_chunk(m, slot, j, TPB_CHUNK_COMM_END) : TPB_NO_MARK));
    }
    if (tpb_layer_collects(d))
        TPB_CHECK_RET(tpb_comm_wait(l->comm));
    return record ? tpb_dev_mark(l->dev, tpb_marks_iter(slot, 2), TPB_MARK_COMM) : TPB_OK;
}

tpb_status_t tpb_layer_gemm_whole(tpb_layer_t *l)
{
    return tpb_dev_gemm(l->dev, &l->gemm);
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
    return tpb_layer_collects(&l->d) ? tpb_comm_wait(l->comm) : TPB_OK;
}

tpb_status_t tpb_layer_comm_whole(tpb_layer_t *l)
{
    return tpb_layer_collects(&l->d) ? tpb_comm_post(l->comm, &l->whole) : TPB_OK;
}
