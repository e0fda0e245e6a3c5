/*
 * gpu_staging.c - --comm mpi on a GPU backend: each collective through
 * page-locked host buffers and MPI's blocking call (Debian's Open MPI is not
 * CUDA-aware, and this lets several ranks share one GPU), under the group's
 * watchdog (mpi_watch.h).
 */
#include "backend/gpu/gpu.h"

/* Page-locked host staging buffers of at least bytes each. */
static tpb_status_t staging(tpb_gpu_t *g, size_t bytes)
{
    if (bytes <= g->host_bytes)
        return TPB_OK;
    g->v->host_free(g->host_send);
    g->v->host_free(g->host_recv_base);
    g->host_send = g->host_recv = g->host_recv_base = NULL;
    g->host_bytes = 0;
    TPB_CHECK_RET(g->v->host_alloc(bytes, &g->host_send));
    TPB_CHECK_RET(g->v->host_alloc(bytes + 1088, &g->host_recv_base));
    g->host_recv = (char *)g->host_recv_base + 1088; /* not at host_send's page offset */
    g->host_bytes = bytes;
    return TPB_OK;
}

/* A block list's extent: the largest displacement plus its count (elements). */
static size_t extent(const tpb_coll_desc_t *d, int size)
{
    size_t end = 0;
    for (int r = 0; r < size; r++) {
        size_t e = (d->displs ? d->displs[r] : 0) + d->counts[r];
        end = e > end ? e : end;
    }
    return end;
}

/* The blocks as MPI's byte counts and displacements. */
static tpb_status_t byte_blocks(const tpb_gpu_comm_t *c, const tpb_coll_desc_t *d, size_t esz,
                                int *ic, int *id)
{
    if (extent(d, c->size) * esz > 0x7fffffff)
        return tpb_err_set(TPB_ERR_UNSUPPORTED, "--comm mpi: %s blocks exceed an int of bytes",
                           tpb_coll_label(d->kind));
    for (int r = 0; r < c->size; r++) {
        ic[r] = (int)(d->counts[r] * esz);
        id[r] = (int)((d->displs ? d->displs[r] : 0) * esz);
    }
    return TPB_OK;
}

/* The blocking MPI call on the staged buffers (which hold what the GPU sent), under the
 * watchdog. The sums reduce in the dtype's MPI type. */
static tpb_status_t mpi_call(tpb_gpu_comm_t *c, const tpb_coll_desc_t *d, const int *ic,
                             const int *id)
{
    tpb_gpu_t *g = c->gpu;
    MPI_Datatype t = d->dtype == TPB_DTYPE_FP64 ? MPI_DOUBLE : MPI_FLOAT;
    int rc = MPI_SUCCESS, esz = (int)tpb_dtype_in_size(d->dtype);
    const char *name = NULL;
    int counts[c->size];
    tpb_watch_enter(&c->watch, tpb_coll_label(d->kind));
    switch (d->kind) { /* no default: a new kind fails the build until it has its call */
    case TPB_COLL_ALLREDUCE:
        name = "MPI_Allreduce";
        rc = MPI_Allreduce(g->host_send, g->host_recv, (int)d->count, t, MPI_SUM, c->mpi);
        break;
    case TPB_COLL_ALLGATHER:
        name = "MPI_Allgatherv";
        rc = MPI_Allgatherv(g->host_send, ic[c->rank], MPI_BYTE, g->host_recv, ic, id, MPI_BYTE,
                            c->mpi);
        break;
    case TPB_COLL_REDUCE_SCATTER:
        for (int r = 0; r < c->size; r++)
            counts[r] = ic[r] / esz;
        name = "MPI_Reduce_scatter";
        rc = MPI_Reduce_scatter(g->host_send, g->host_recv, counts, t, MPI_SUM, c->mpi);
        break;
    }
    tpb_watch_leave(&c->watch);
    if (!name)
        return tpb_err_set(TPB_ERR_UNSUPPORTED, "collective kind %d", (int)d->kind);
    if (rc != MPI_SUCCESS)
        return tpb_err_call(TPB_ERR_MPI, name, "--comm mpi", __FILE__, __LINE__);
    return TPB_OK;
}

/* Stage what this rank sends in host memory, run the MPI call, copy what it received back
 * to where the descriptor places it. An all-gather's blocks are staged at their
 * displacements and copied back block by block to the same places of recv; a
 * reduce-scatter sends its blocks back to back (MPI's layout) from the first one's. */
tpb_status_t tpb_gpu_staged_post(tpb_gpu_comm_t *c, const tpb_coll_desc_t *d)
{
    tpb_gpu_t *g = c->gpu;
    size_t esz = tpb_dtype_in_size(d->dtype), in = 0, out = 0, from = 0;
    int ic[c->size], id[c->size];
    /* the host waits here (its syncs, a pinned buffer's growth: cudaFreeHost waits for the
     * device): never behind a stream held by the start gate */
    g->v->gate_release(g);
    g->release_due = g->gemm_queued = 0;
    switch (d->kind) { /* what this rank stages out and back (no default, as mpi_call) */
    case TPB_COLL_ALLREDUCE:
        if (d->count > 0x7fffffff)
            return tpb_err_set(TPB_ERR_UNSUPPORTED, "--comm mpi: %zu elements exceed an int",
                               d->count);
        in = out = d->count * esz;
        break;
    case TPB_COLL_ALLGATHER:
        TPB_CHECK_RET(byte_blocks(c, d, esz, ic, id));
        in = (size_t)ic[c->rank];
        out = extent(d, c->size) * esz;
        break;
    case TPB_COLL_REDUCE_SCATTER:
        TPB_CHECK_RET(byte_blocks(c, d, esz, ic, id));
        from = (size_t)id[0];
        in = extent(d, c->size) * esz - from;
        out = (size_t)ic[c->rank];
        break;
    }
    TPB_CHECK_RET(staging(g, in > out ? in : out));
    TPB_CHECK_RET(
        g->v->copy_async(g, g->host_send, (const char *)d->send + from, in, TPB_GPU_TO_HOST));
    TPB_CHECK_RET(g->v->stream_sync(g, TPB_GPU_COMM));
    TPB_CHECK_RET(mpi_call(c, d, ic, id));
    if (d->kind != TPB_COLL_ALLGATHER)
        TPB_CHECK_RET(g->v->copy_async(g, d->recv, g->host_recv, out, TPB_GPU_TO_DEVICE));
    for (int r = 0; d->kind == TPB_COLL_ALLGATHER && r < c->size; r++)
        TPB_CHECK_RET(g->v->copy_async(g, (char *)d->recv + id[r], (char *)g->host_recv + id[r],
                                       (size_t)ic[r], TPB_GPU_TO_DEVICE));
    return TPB_OK;
}
