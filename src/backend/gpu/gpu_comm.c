/*
 * gpu_comm.c - a TP group's communicator on a GPU backend: the vendor's
 * collective library (one communicator per group), MPI through host staging
 * (--comm mpi: gpu_staging.c) or, in a group of one, a copy. Each post takes a
 * collective descriptor (backend.h), on the comm stream after the GEMMs queued
 * so far; the waits for the GPU are in gpu_watch.c.
 */
#include <stdlib.h>

#include "backend/gpu/gpu.h"

static const tpb_comm_ops_t gpu_comm_ops;

static void close_comm(tpb_gpu_comm_t *c)
{
    tpb_gpu_watch_remove(c);
    if (c->ccl) /* NULL after an abort: the library freed it */
        c->gpu->v->ccl_close(c);
    c->ccl = NULL;
    if (c->watched)
        tpb_watch_close(&c->watch);
    MPI_Comm_free(&c->mpi);
    free(c);
}

tpb_status_t tpb_gpu_comm_open(tpb_device_t *dev, MPI_Comm group, tpb_comm_t **out)
{
    tpb_gpu_t *g = (tpb_gpu_t *)dev;
    tpb_gpu_comm_t *c = calloc(1, sizeof(*c));
    if (!c)
        return tpb_err_set(TPB_ERR_NOMEM, "gpu backend: out of memory");
    c->base.ops = &gpu_comm_ops;
    c->gpu = g;
    if (MPI_Comm_dup(group, &c->mpi) != MPI_SUCCESS) {
        free(c);
        return tpb_err_call(TPB_ERR_MPI, "MPI_Comm_dup", "TP group", __FILE__, __LINE__);
    }
    MPI_Comm_rank(c->mpi, &c->rank);
    MPI_Comm_size(c->mpi, &c->size);
    tpb_status_t st = TPB_OK;
    if (g->args.cfg.comm == TPB_COMM_CCL && c->size > 1) { /* a group of one: local_post */
        st = g->v->ccl_open(c);
        if (st == TPB_OK)
            tpb_gpu_watch_add(c);
    }
    if (st == TPB_OK && g->args.cfg.comm == TPB_COMM_MPI) {
        st = tpb_watch_open(&c->watch, c->mpi, g->args.world_rank, g->args.cfg.timeout_s);
        c->watched = st == TPB_OK;
    }
    if (st != TPB_OK) {
        close_comm(c);
        return st;
    }
    *out = &c->base;
    return TPB_OK;
}

/* A group of one rank (TP 1): its block copied where the collective would put it. */
static tpb_status_t local_post(tpb_gpu_comm_t *c, const tpb_coll_desc_t *d)
{
    size_t esz = tpb_dtype_in_size(d->dtype), n = 0;
    const char *from = d->send;
    char *to = d->recv;
    switch (d->kind) {
    case TPB_COLL_ALLREDUCE: n = d->count; break;
    case TPB_COLL_ALLGATHER:
        n = d->counts[0];
        to += d->displs[0] * esz;
        break;
    case TPB_COLL_REDUCE_SCATTER:
        n = d->counts[0];
        from += d->displs[0] * esz;
        break;
    }
    if (n == 0 || from == to)
        return TPB_OK;
    return c->gpu->v->copy_async(c->gpu, to, from, n * esz, TPB_GPU_ON_DEVICE);
}

/* The collective through the path of the group. */
static tpb_status_t post_on(tpb_gpu_comm_t *c, const tpb_coll_desc_t *d)
{
    if (c->size == 1)
        return local_post(c, d);
    if (c->gpu->args.cfg.comm == TPB_COMM_MPI)
        return tpb_gpu_staged_post(c, d);
    if (!c->ccl)
        return tpb_err_set(TPB_ERR_BACKEND, "%s: the group's %s communicator was aborted",
                           tpb_coll_label(d->kind), c->gpu->v->name);
    return c->gpu->v->ccl_post(c, d);
}

/* A collective on the comm stream after the GEMMs queued so far. Blocking: the next GEMM
 * waits for it (comm_done). Non-blocking (a chunk of --overlap chunked): the GEMM stream
 * goes on with the next chunk, its mark right behind it on the comm stream, and wait makes
 * the next iteration's first GEMM wait for the last chunk's collective. */
static tpb_status_t gpu_post(tpb_comm_t *comm, const tpb_coll_desc_t *d)
{
    tpb_gpu_comm_t *c = (tpb_gpu_comm_t *)comm;
    TPB_CHECK_RET(tpb_gpu_comm_after_gemm(c->gpu));
    TPB_CHECK_RET(post_on(c, d));
    if (!d->nonblocking)
        return tpb_gpu_comm_end(c->gpu);
    if (d->mark == TPB_NO_MARK)
        return TPB_OK;
    return tpb_gpu_mark_comm(c->gpu, d->mark);
}

static tpb_status_t gpu_progress(tpb_comm_t *comm)
{
    return TPB_OK; /* stream-ordered: the GPU runs them */
}

static tpb_status_t gpu_wait(tpb_comm_t *comm)
{
    return tpb_gpu_comm_end(((tpb_gpu_comm_t *)comm)->gpu);
}

static void gpu_close(tpb_comm_t *comm)
{
    close_comm((tpb_gpu_comm_t *)comm);
}

static const tpb_comm_ops_t gpu_comm_ops = {
    .post = gpu_post,
    .progress = gpu_progress,
    .wait = gpu_wait,
    .close = gpu_close,
};
