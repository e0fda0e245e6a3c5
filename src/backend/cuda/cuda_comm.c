/*
 * cuda_comm.c - collectives of a TP group on GPUs: NCCL (one communicator per
 * group, its unique id broadcast over the group's MPI communicator), or MPI
 * through pinned host buffers (--comm mpi: Debian's Open MPI is not
 * CUDA-aware, and this lets several ranks share one GPU). Each post takes a
 * collective descriptor (backend.h); the waits for the GPU are in cuda_watch.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/cuda/cuda_internal.h"
#include "backend/cuda/cuda_plan.h"

/* The NCCL type of a collective's elements: the dtype's storage. fp8 only ever moves (the
 * all-gather of X; its GEMM writes bf16): a byte type, as old as NCCL's first release
 * (ncclFloat8e4m3 needs NCCL 2.24). No default: -Wswitch names a new dtype here. */
static ncclDataType_t nccl_type(tpb_dtype_t dt)
{
    switch (dt) {
    case TPB_DTYPE_FP64: return ncclFloat64;
    case TPB_DTYPE_FP32:
    case TPB_DTYPE_TF32: return ncclFloat32;
    case TPB_DTYPE_FP16: return ncclFloat16;
    case TPB_DTYPE_BF16: return ncclBfloat16;
    case TPB_DTYPE_FP8: return ncclUint8;
    case TPB_DTYPE_COUNT: break;
    }
    return ncclFloat32; /* not a dtype */
}

/* NCCL needs one GPU per rank: compare the group's GPU UUIDs. */
static tpb_status_t check_group_devices(tpb_cuda_comm_t *c)
{
    char(*ids)[TPB_CUDA_ID_LEN] = calloc((size_t)c->size, TPB_CUDA_ID_LEN);
    char me[TPB_CUDA_ID_LEN] = {0};
    snprintf(me, sizeof(me), "%s", c->be->uuid);
    tpb_status_t st = TPB_OK;
    if (!ids)
        st = tpb_err_set(TPB_ERR_NOMEM, "cuda backend: out of memory");
    else if (MPI_Allgather(me, TPB_CUDA_ID_LEN, MPI_CHAR, ids, TPB_CUDA_ID_LEN, MPI_CHAR, c->mpi) !=
             MPI_SUCCESS)
        st = tpb_err_call(TPB_ERR_MPI, "MPI_Allgather", "GPUs of a TP group", __FILE__, __LINE__);
    if (st == TPB_OK)
        st = tpb_cuda_check_sharing(ids, c->size, c->be->args.cfg.comm);
    free(ids);
    return st;
}

/* Poll a non-blocking communicator until its last call finished, under --timeout: so a
 * blocking step (ncclCommInitRank, the first collective making connections) cannot hang
 * the rank unwatched. */
static tpb_status_t nccl_settle(tpb_cuda_comm_t *c, const char *what)
{
    double start = tpb_clock_now_us(NULL), limit = c->be->args.cfg.timeout_s * 1e6;
    ncclResult_t r = ncclInProgress;
    while (r == ncclInProgress) {
        if (ncclCommGetAsyncError(c->nccl, &r) != ncclSuccess)
            break;
        if (r == ncclInProgress && limit > 0 && tpb_clock_now_us(NULL) - start > limit) {
            ncclCommAbort(c->nccl);
            c->nccl = NULL; /* aborted: freed by NCCL, never destroyed again */
            return tpb_err_set(TPB_ERR_TIMEOUT,
                               "%s did not complete within --timeout %g s on rank %d (a rank of "
                               "the TP group did not join)",
                               what, c->be->args.cfg.timeout_s, c->be->args.world_rank);
        }
        if (r == ncclInProgress)
            usleep(100);
    }
    if (r != ncclSuccess)
        return tpb_nccl_err(r, what, __FILE__, __LINE__);
    return TPB_OK;
}

/* The result of a call on a non-blocking communicator: in progress is not an error. */
static tpb_status_t nccl_call(tpb_cuda_comm_t *c, ncclResult_t r, const char *what)
{
    if (r == ncclInProgress)
        return nccl_settle(c, what);
    if (r != ncclSuccess)
        return tpb_nccl_err(r, what, __FILE__, __LINE__);
    return TPB_OK;
}

static tpb_status_t nccl_open(tpb_cuda_comm_t *c)
{
    struct {
        int rc; /* the group's rank 0 tells the others if it has no id */
        ncclUniqueId id;
    } msg;
    memset(&msg, 0, sizeof(msg));
    if (c->rank == 0)
        msg.rc = (int)ncclGetUniqueId(&msg.id);
    if (MPI_Bcast(&msg, sizeof(msg), MPI_BYTE, 0, c->mpi) != MPI_SUCCESS)
        return tpb_err_call(TPB_ERR_MPI, "MPI_Bcast", "NCCL unique id", __FILE__, __LINE__);
    if (msg.rc != ncclSuccess)
        return tpb_nccl_err((ncclResult_t)msg.rc, "ncclGetUniqueId (on the group's rank 0)",
                            __FILE__, __LINE__);
    ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
    cfg.blocking = 0; /* every wait is polled under the watchdog */
    TPB_CHECK_RET(nccl_call(c, ncclCommInitRankConfig(&c->nccl, c->size, msg.id, c->rank, &cfg),
                            "ncclCommInitRankConfig"));
    tpb_cuda_t *be = c->be;
    if (be->nwatch < 8)
        be->watch[be->nwatch++] = c;
    return TPB_OK;
}

static const tpb_comm_ops_t cuda_comm_ops;
static void close_comm(tpb_cuda_comm_t *c);

tpb_status_t tpb_cuda_comm_open(tpb_device_t *dev, MPI_Comm group, tpb_comm_t **out)
{
    tpb_cuda_t *be = (tpb_cuda_t *)dev;
    tpb_cuda_comm_t *c = calloc(1, sizeof(*c));
    if (!c)
        return tpb_err_set(TPB_ERR_NOMEM, "cuda backend: out of memory");
    c->base.ops = &cuda_comm_ops;
    c->be = be;
    if (MPI_Comm_dup(group, &c->mpi) != MPI_SUCCESS) {
        free(c);
        return tpb_err_call(TPB_ERR_MPI, "MPI_Comm_dup", "TP group", __FILE__, __LINE__);
    }
    MPI_Comm_rank(c->mpi, &c->rank);
    MPI_Comm_size(c->mpi, &c->size);
    tpb_status_t st = check_group_devices(c);
    if (st == TPB_OK && be->args.cfg.comm == TPB_COMM_NCCL && c->size > 1)
        st = nccl_open(c); /* a group of one: no communicator (local_post) */
    if (st == TPB_OK && be->args.cfg.comm == TPB_COMM_MPI) {
        st = tpb_watch_open(&c->watch, c->mpi, be->args.world_rank, be->args.cfg.timeout_s);
        c->watched = st == TPB_OK;
    }
    if (st != TPB_OK) {
        close_comm(c);
        return st;
    }
    *out = &c->base;
    return TPB_OK;
}

static void close_comm(tpb_cuda_comm_t *c)
{
    tpb_cuda_t *be = c->be;
    for (int i = 0; i < be->nwatch; i++) {
        if (be->watch[i] == c) {
            be->watch[i] = be->watch[--be->nwatch];
            break;
        }
    }
    if (c->nccl) { /* NULL after an abort: NCCL freed it */
        /* a clean-up: the error that ended the run keeps its message */
        char saved[1024];
        snprintf(saved, sizeof(saved), "%s", tpb_err_msg());
        cudaStreamSynchronize(be->comm_stream);
        ncclResult_t async = ncclSuccess;
        ncclCommGetAsyncError(c->nccl, &async);
        /* a broken communicator is aborted; a sound non-blocking one is finalized (polled,
         * under --timeout) first */
        if (async != ncclSuccess && async != ncclInProgress)
            ncclCommAbort(c->nccl);
        else if (nccl_call(c, ncclCommFinalize(c->nccl), "ncclCommFinalize") == TPB_OK)
            ncclCommDestroy(c->nccl);
        else if (c->nccl)
            ncclCommAbort(c->nccl);
        c->nccl = NULL;
        if (saved[0])
            tpb_err_set(TPB_ERR_BACKEND, "%s", saved);
    }
    if (c->watched)
        tpb_watch_close(&c->watch);
    MPI_Comm_free(&c->mpi);
    free(c);
}

/* Order the collective after the GEMM (separate streams when emulating). */
tpb_status_t tpb_cuda_comm_after_gemm(tpb_cuda_t *be)
{
    if (be->gemm_stream != be->comm_stream) {
        tpb_cuda_green_enter(be);
        cudaError_t e = cudaEventRecord(be->gemm_done, be->gemm_stream);
        tpb_cuda_green_leave(be);
        if (e != cudaSuccess)
            return tpb_cuda_err(e, "cudaEventRecord(gemm_done)", __FILE__, __LINE__);
        TPB_CUDA_RET(cudaStreamWaitEvent(be->comm_stream, be->gemm_done, 0));
    }
    return TPB_OK;
}

static tpb_status_t comm_end(tpb_cuda_t *be)
{
    if (be->gemm_stream != be->comm_stream) {
        TPB_CUDA_RET(cudaEventRecord(be->comm_done, be->comm_stream));
        be->comm_pending = 1;
    }
    return TPB_OK;
}

/* Pinned host staging buffers of at least bytes each (--comm mpi). */
static tpb_status_t staging(tpb_cuda_t *be, size_t bytes)
{
    if (bytes <= be->host_bytes)
        return TPB_OK;
    cudaFreeHost(be->host_send);
    cudaFreeHost(be->host_recv_base);
    be->host_send = be->host_recv = be->host_recv_base = NULL;
    be->host_bytes = 0;
    TPB_CUDA_RET(cudaMallocHost(&be->host_send, bytes));
    TPB_CUDA_RET(cudaMallocHost(&be->host_recv_base, bytes + 1088));
    be->host_recv = (char *)be->host_recv_base + 1088; /* not at host_send's page offset */
    be->host_bytes = bytes;
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

/* --comm mpi: the blocks as MPI's byte counts and displacements. */
static tpb_status_t byte_blocks(const tpb_cuda_comm_t *c, const tpb_coll_desc_t *d, size_t esz,
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

/* --comm mpi: the blocking MPI call on the staged buffers (which hold what the GPU sent),
 * under the watchdog. The sums reduce in the dtype's MPI type. */
static tpb_status_t mpi_call(tpb_cuda_comm_t *c, const tpb_coll_desc_t *d, const int *ic,
                             const int *id)
{
    tpb_cuda_t *be = c->be;
    MPI_Datatype t = d->dtype == TPB_DTYPE_FP64 ? MPI_DOUBLE : MPI_FLOAT;
    int rc = MPI_SUCCESS, esz = (int)tpb_dtype_in_size(d->dtype);
    const char *name = NULL;
    int counts[c->size];
    tpb_watch_enter(&c->watch, tpb_coll_label(d->kind));
    switch (d->kind) { /* no default: a new kind fails the build until it has its call */
    case TPB_COLL_ALLREDUCE:
        name = "MPI_Allreduce";
        rc = MPI_Allreduce(be->host_send, be->host_recv, (int)d->count, t, MPI_SUM, c->mpi);
        break;
    case TPB_COLL_ALLGATHER:
        name = "MPI_Allgatherv";
        rc = MPI_Allgatherv(be->host_send, ic[c->rank], MPI_BYTE, be->host_recv, ic, id, MPI_BYTE,
                            c->mpi);
        break;
    case TPB_COLL_REDUCE_SCATTER:
        for (int r = 0; r < c->size; r++)
            counts[r] = ic[r] / esz;
        name = "MPI_Reduce_scatter";
        rc = MPI_Reduce_scatter(be->host_send, be->host_recv, counts, t, MPI_SUM, c->mpi);
        break;
    }
    tpb_watch_leave(&c->watch);
    if (!name)
        return tpb_err_set(TPB_ERR_UNSUPPORTED, "collective kind %d", (int)d->kind);
    if (rc != MPI_SUCCESS)
        return tpb_err_call(TPB_ERR_MPI, name, "--comm mpi", __FILE__, __LINE__);
    return TPB_OK;
}

/* --comm mpi: stage what this rank sends in host memory, run the MPI call, copy what it
 * received back to where the descriptor places it. An all-gather's blocks are staged at
 * their displacements and copied back block by block to the same places of recv; a
 * reduce-scatter sends its blocks back to back (MPI's layout) from the first one's. */
static tpb_status_t mpi_post(tpb_cuda_comm_t *c, const tpb_coll_desc_t *d)
{
    tpb_cuda_t *be = c->be;
    size_t esz = tpb_dtype_in_size(d->dtype), in = 0, out = 0, from = 0;
    int ic[c->size], id[c->size];
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
    TPB_CHECK_RET(staging(be, in > out ? in : out));
    TPB_CUDA_RET(cudaMemcpyAsync(be->host_send, (const char *)d->send + from, in,
                                 cudaMemcpyDeviceToHost, be->comm_stream));
    TPB_CUDA_RET(cudaStreamSynchronize(be->comm_stream));
    TPB_CHECK_RET(mpi_call(c, d, ic, id));
    if (d->kind != TPB_COLL_ALLGATHER)
        TPB_CUDA_RET(
            cudaMemcpyAsync(d->recv, be->host_recv, out, cudaMemcpyHostToDevice, be->comm_stream));
    for (int r = 0; d->kind == TPB_COLL_ALLGATHER && r < c->size; r++)
        TPB_CUDA_RET(cudaMemcpyAsync((char *)d->recv + id[r], (char *)be->host_recv + id[r],
                                     (size_t)ic[r], cudaMemcpyHostToDevice, be->comm_stream));
    return TPB_OK;
}

/* NCCL has no all-gather-v: one broadcast per rank, grouped. The even split of a layer's
 * output takes the same path (never ncclAllGather), so that even and weighted compare one
 * algorithm; blocks equal by construction (sequence parallelism) take ncclAllGather. */
static tpb_status_t nccl_allgather(tpb_cuda_comm_t *c, const tpb_coll_desc_t *d)
{
    size_t esz = tpb_dtype_in_size(d->dtype);
    ncclDataType_t t = nccl_type(d->dtype);
    if (d->equal)
        return nccl_call(c,
                         ncclAllGather(d->send, (char *)d->recv + d->displs[0] * esz,
                                       d->counts[c->rank], t, c->nccl, c->be->comm_stream),
                         "ncclAllGather");
    TPB_CHECK_RET(nccl_call(c, ncclGroupStart(), "ncclGroupStart"));
    for (int r = 0; r < c->size; r++) {
        ncclResult_t e =
            ncclBroadcast(r == c->rank ? d->send : NULL, (char *)d->recv + d->displs[r] * esz,
                          d->counts[r], t, r, c->nccl, c->be->comm_stream);
        if (e != ncclSuccess && e != ncclInProgress) {
            ncclGroupEnd();
            return tpb_nccl_err(e, "ncclBroadcast", __FILE__, __LINE__);
        }
    }
    return nccl_call(c, ncclGroupEnd(), "ncclGroupEnd (all-gather-v)");
}

/* NCCL's reduce-scatter takes equal blocks (planned so: tpb_backend_class_t.supports). */
static tpb_status_t nccl_reduce_scatter(tpb_cuda_comm_t *c, const tpb_coll_desc_t *d)
{
    size_t esz = tpb_dtype_in_size(d->dtype);
    for (int r = 1; r < c->size; r++)
        if (d->counts[r] != d->counts[0])
            return tpb_err_set(TPB_ERR_UNSUPPORTED, "ncclReduceScatter needs equal blocks");
    return nccl_call(c,
                     ncclReduceScatter((const char *)d->send + d->displs[0] * esz, d->recv,
                                       d->counts[0], nccl_type(d->dtype), ncclSum, c->nccl,
                                       c->be->comm_stream),
                     "ncclReduceScatter");
}

static tpb_status_t nccl_post(tpb_cuda_comm_t *c, const tpb_coll_desc_t *d)
{
    switch (d->kind) { /* no default: a new kind fails the build until it has its call */
    case TPB_COLL_ALLREDUCE:
        return nccl_call(c,
                         ncclAllReduce(d->send, d->recv, d->count, nccl_type(d->dtype), ncclSum,
                                       c->nccl, c->be->comm_stream),
                         "ncclAllReduce");
    case TPB_COLL_ALLGATHER: return nccl_allgather(c, d);
    case TPB_COLL_REDUCE_SCATTER: return nccl_reduce_scatter(c, d);
    }
    return tpb_err_set(TPB_ERR_UNSUPPORTED, "collective kind %d", (int)d->kind);
}

/* A group of one rank (TP 1): its block copied where the collective would put it. */
static tpb_status_t local_post(tpb_cuda_comm_t *c, const tpb_coll_desc_t *d)
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
    TPB_CUDA_RET(cudaMemcpyAsync(to, from, n * esz, cudaMemcpyDeviceToDevice, c->be->comm_stream));
    return TPB_OK;
}

/* A collective on the comm stream after the GEMMs queued so far. Blocking: the next GEMM
 * waits for it (comm_done). Non-blocking (a chunk of --overlap chunked): the GEMM stream
 * goes on with the next chunk, its mark right behind it on the comm stream, and wait makes
 * the next iteration's first GEMM wait for the last chunk's collective. */
static tpb_status_t cuda_post(tpb_comm_t *comm, const tpb_coll_desc_t *d)
{
    tpb_cuda_comm_t *c = (tpb_cuda_comm_t *)comm;
    tpb_cuda_t *be = c->be;
    TPB_CHECK_RET(tpb_cuda_comm_after_gemm(be));
    TPB_CHECK_RET(c->size == 1 ? local_post(c, d) : c->nccl ? nccl_post(c, d) : mpi_post(c, d));
    if (!d->nonblocking)
        return comm_end(be);
    if (d->mark == TPB_NO_MARK)
        return TPB_OK;
    /* as cuda_marks.c records a collective's mark: on the comm stream, in its pool */
    int s = be->comm_stream != be->gemm_stream;
    be->event_stream[d->mark] = (unsigned char)s;
    cudaError_t e = cudaEventRecord(be->ev[s][d->mark], s ? be->comm_stream : be->gemm_stream);
    return e == cudaSuccess ? TPB_OK
                            : tpb_cuda_err(e, "cudaEventRecord(chunk mark)", __FILE__, __LINE__);
}

static tpb_status_t cuda_progress(tpb_comm_t *comm)
{
    return TPB_OK; /* stream-ordered: the GPU runs them */
}

static tpb_status_t cuda_wait(tpb_comm_t *comm)
{
    return comm_end(((tpb_cuda_comm_t *)comm)->be);
}

static void cuda_close(tpb_comm_t *comm)
{
    close_comm((tpb_cuda_comm_t *)comm);
}

static const tpb_comm_ops_t cuda_comm_ops = {
    .post = cuda_post,
    .progress = cuda_progress,
    .wait = cuda_wait,
    .close = cuda_close,
};
