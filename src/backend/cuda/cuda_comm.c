/*
 * cuda_comm.c - collectives of a TP group on GPUs: NCCL (one communicator per
 * group, its unique id broadcast over the group's MPI communicator), or MPI
 * through pinned host buffers (--comm mpi: Debian's Open MPI is not
 * CUDA-aware, and this lets several ranks share one GPU). Also the watchdog
 * that ends a hung collective after --timeout and names the ranks that never
 * arrived.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/cuda/cuda_internal.h"
#include "backend/cuda/cuda_plan.h"

#define TPB_TAG_ARRIVE 7300

static ncclDataType_t nccl_type(tpb_dtype_t dt)
{
    switch (dt) {
    case TPB_DTYPE_FP64: return ncclFloat64;
    case TPB_DTYPE_FP16: return ncclFloat16;
    case TPB_DTYPE_BF16: return ncclBfloat16;
    default: return ncclFloat32;
    }
}

/* NCCL needs one GPU per rank: compare the group's GPU UUIDs. */
static tpb_status_t check_group_devices(tpb_comm_t *c)
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
static tpb_status_t nccl_settle(tpb_comm_t *c, const char *what)
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
static tpb_status_t nccl_call(tpb_comm_t *c, ncclResult_t r, const char *what)
{
    if (r == ncclInProgress)
        return nccl_settle(c, what);
    if (r != ncclSuccess)
        return tpb_nccl_err(r, what, __FILE__, __LINE__);
    return TPB_OK;
}

static tpb_status_t nccl_open(tpb_comm_t *c)
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
    tpb_backend_t *be = c->be;
    if (be->nwatch < 8)
        be->watch[be->nwatch++] = c;
    return TPB_OK;
}

tpb_status_t tpb_cuda_comm_open(tpb_backend_t *be, MPI_Comm group, tpb_comm_t **out)
{
    tpb_comm_t *c = calloc(1, sizeof(*c));
    if (!c)
        return tpb_err_set(TPB_ERR_NOMEM, "cuda backend: out of memory");
    c->be = be;
    if (MPI_Comm_dup(group, &c->mpi) != MPI_SUCCESS) {
        free(c);
        return tpb_err_call(TPB_ERR_MPI, "MPI_Comm_dup", "TP group", __FILE__, __LINE__);
    }
    MPI_Comm_rank(c->mpi, &c->rank);
    MPI_Comm_size(c->mpi, &c->size);
    tpb_status_t st = check_group_devices(c);
    if (st == TPB_OK && be->args.cfg.comm == TPB_COMM_NCCL)
        st = nccl_open(c);
    if (st == TPB_OK && be->args.cfg.comm == TPB_COMM_MPI) {
        st = tpb_watch_open(&c->watch, c->mpi, be->args.world_rank, be->args.cfg.timeout_s);
        c->watched = st == TPB_OK;
    }
    if (st != TPB_OK) {
        tpb_cuda_comm_close(c);
        return st;
    }
    *out = c;
    return TPB_OK;
}

void tpb_cuda_comm_close(tpb_comm_t *c)
{
    if (!c)
        return;
    tpb_backend_t *be = c->be;
    for (int i = 0; i < be->nwatch; i++) {
        if (be->watch[i] == c) {
            be->watch[i] = be->watch[--be->nwatch];
            break;
        }
    }
    if (c->nccl) { /* NULL after an abort: NCCL freed it */
        cudaStreamSynchronize(be->comm_stream);
        /* a non-blocking communicator is finalized (polled, under --timeout) first */
        if (nccl_call(c, ncclCommFinalize(c->nccl), "ncclCommFinalize") == TPB_OK)
            ncclCommDestroy(c->nccl);
        else if (c->nccl)
            ncclCommAbort(c->nccl);
    }
    if (c->watched)
        tpb_watch_close(&c->watch);
    MPI_Comm_free(&c->mpi);
    free(c);
}

/* Order the collective after the GEMM (separate streams when emulating). */
static tpb_status_t comm_begin(tpb_backend_t *be)
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

static tpb_status_t comm_end(tpb_backend_t *be)
{
    if (be->gemm_stream != be->comm_stream) {
        TPB_CUDA_RET(cudaEventRecord(be->comm_done, be->comm_stream));
        be->comm_pending = 1;
    }
    return TPB_OK;
}

/* Pinned host staging buffers of at least bytes each (--comm mpi). */
static tpb_status_t staging(tpb_backend_t *be, size_t bytes)
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

static tpb_status_t mpi_allreduce(tpb_comm_t *c, const void *send, void *recv, size_t count,
                                  tpb_dtype_t dt)
{
    tpb_backend_t *be = c->be;
    size_t bytes = count * tpb_dtype_in_size(dt);
    if (count > 0x7fffffff)
        return tpb_err_set(TPB_ERR_UNSUPPORTED, "--comm mpi: %zu elements exceed an int", count);
    TPB_CHECK_RET(staging(be, bytes));
    TPB_CUDA_RET(
        cudaMemcpyAsync(be->host_send, send, bytes, cudaMemcpyDeviceToHost, be->comm_stream));
    TPB_CUDA_RET(cudaStreamSynchronize(be->comm_stream));
    tpb_watch_enter(&c->watch, "all-reduce");
    int rc = MPI_Allreduce(be->host_send, be->host_recv, (int)count,
                           dt == TPB_DTYPE_FP64 ? MPI_DOUBLE : MPI_FLOAT, MPI_SUM, c->mpi);
    tpb_watch_leave(&c->watch);
    if (rc != MPI_SUCCESS)
        return tpb_err_call(TPB_ERR_MPI, "MPI_Allreduce", "--comm mpi", __FILE__, __LINE__);
    TPB_CUDA_RET(
        cudaMemcpyAsync(recv, be->host_recv, bytes, cudaMemcpyHostToDevice, be->comm_stream));
    return TPB_OK;
}

tpb_status_t tpb_cuda_allreduce(tpb_comm_t *c, const void *send, void *recv, size_t count,
                                tpb_dtype_t dt)
{
    tpb_backend_t *be = c->be;
    TPB_CHECK_RET(comm_begin(be));
    if (c->nccl)
        TPB_CHECK_RET(nccl_call(
            c, ncclAllReduce(send, recv, count, nccl_type(dt), ncclSum, c->nccl, be->comm_stream),
            "ncclAllReduce"));
    else
        TPB_CHECK_RET(mpi_allreduce(c, send, recv, count, dt));
    return comm_end(be);
}

/* NCCL has no all-gather-v: one broadcast per rank, grouped. The even split takes the same
 * path (never ncclAllGather), so that even and weighted compare one algorithm. */
static tpb_status_t nccl_allgatherv(tpb_comm_t *c, const void *send, void *recv,
                                    const size_t *counts, const size_t *displs, tpb_dtype_t dt)
{
    size_t esz = tpb_dtype_in_size(dt);
    TPB_CHECK_RET(nccl_call(c, ncclGroupStart(), "ncclGroupStart"));
    for (int r = 0; r < c->size; r++) {
        ncclResult_t e = ncclBroadcast(r == c->rank ? send : NULL, (char *)recv + displs[r] * esz,
                                       counts[r], nccl_type(dt), r, c->nccl, c->be->comm_stream);
        if (e != ncclSuccess && e != ncclInProgress) {
            ncclGroupEnd();
            return tpb_nccl_err(e, "ncclBroadcast", __FILE__, __LINE__);
        }
    }
    return nccl_call(c, ncclGroupEnd(), "ncclGroupEnd (all-gather-v)");
}

static tpb_status_t mpi_allgatherv(tpb_comm_t *c, const void *send, void *recv,
                                   const size_t *counts, const size_t *displs, tpb_dtype_t dt)
{
    tpb_backend_t *be = c->be;
    size_t esz = tpb_dtype_in_size(dt), total = 0;
    int ic[c->size], id[c->size];
    for (int r = 0; r < c->size; r++) {
        if ((counts[r] + displs[r]) * esz > 0x7fffffff)
            return tpb_err_set(TPB_ERR_UNSUPPORTED, "--comm mpi: blocks exceed an int of bytes");
        ic[r] = (int)(counts[r] * esz);
        id[r] = (int)(displs[r] * esz);
        total += counts[r] * esz;
    }
    TPB_CHECK_RET(staging(be, total));
    TPB_CUDA_RET(cudaMemcpyAsync(be->host_send, send, (size_t)ic[c->rank], cudaMemcpyDeviceToHost,
                                 be->comm_stream));
    TPB_CUDA_RET(cudaStreamSynchronize(be->comm_stream));
    tpb_watch_enter(&c->watch, "all-gather-v");
    int rc = MPI_Allgatherv(be->host_send, ic[c->rank], MPI_BYTE, be->host_recv, ic, id, MPI_BYTE,
                            c->mpi);
    tpb_watch_leave(&c->watch);
    if (rc != MPI_SUCCESS)
        return tpb_err_call(TPB_ERR_MPI, "MPI_Allgatherv", "--comm mpi", __FILE__, __LINE__);
    TPB_CUDA_RET(
        cudaMemcpyAsync(recv, be->host_recv, total, cudaMemcpyHostToDevice, be->comm_stream));
    return TPB_OK;
}

tpb_status_t tpb_cuda_allgatherv(tpb_comm_t *c, const void *send, void *recv, const size_t *counts,
                                 const size_t *displs, tpb_dtype_t dt)
{
    TPB_CHECK_RET(comm_begin(c->be));
    if (c->nccl)
        TPB_CHECK_RET(nccl_allgatherv(c, send, recv, counts, displs, dt));
    else
        TPB_CHECK_RET(mpi_allgatherv(c, send, recv, counts, displs, dt));
    return comm_end(c->be);
}

/* ---- the watchdog ---- */

typedef struct {
    MPI_Request req[2 * 64];
    unsigned token[64];
    int nreq, npeer;
} arrivals_t;

/* Tell the peers of the first watched group that this rank reached the wait. */
static void arrivals_post(tpb_backend_t *be, arrivals_t *a)
{
    a->nreq = a->npeer = 0;
    if (!be->nwatch)
        return;
    MPI_Comm g = be->watch[0]->mpi;
    int rank, size;
    MPI_Comm_rank(g, &rank);
    MPI_Comm_size(g, &size);
    int tag = TPB_TAG_ARRIVE + (int)(be->wait_seq % 1000);
    for (int p = 0; p < size && a->npeer < 64; p++) {
        if (p == rank)
            continue;
        MPI_Irecv(&a->token[a->npeer], 1, MPI_UNSIGNED, p, tag, g, &a->req[a->nreq++]);
        MPI_Isend(&be->wait_seq, 1, MPI_UNSIGNED, p, tag, g, &a->req[a->nreq++]);
        a->npeer++;
    }
}

static int streams_done(tpb_backend_t *be, cudaError_t *err)
{
    cudaError_t a = cudaStreamQuery(be->gemm_stream), b = cudaStreamQuery(be->comm_stream);
    *err = a != cudaErrorNotReady && a != cudaSuccess   ? a
           : b != cudaErrorNotReady && b != cudaSuccess ? b
                                                        : cudaSuccess;
    return a == cudaSuccess && b == cudaSuccess;
}

/* Requests still pending when the wait ends early: cancelled and freed, never left on the
 * stack of a returned function. */
static void arrivals_cancel(arrivals_t *a)
{
    for (int i = 0; i < a->nreq; i++) {
        int done = 0;
        if (a->req[i] == MPI_REQUEST_NULL)
            continue;
        MPI_Test(&a->req[i], &done, MPI_STATUS_IGNORE);
        if (!done) {
            MPI_Cancel(&a->req[i]);
            MPI_Request_free(&a->req[i]);
        }
    }
    a->nreq = 0;
}

static tpb_status_t timed_out(tpb_backend_t *be, arrivals_t *a)
{
    char missing[256] = "";
    MPI_Comm g = be->watch[0]->mpi;
    int rank, world_rank = be->args.world_rank;
    MPI_Comm_rank(g, &rank);
    for (int i = 0, p = 0; i < a->npeer; i++, p++) {
        p += p == rank;
        int done = 0;
        MPI_Test(&a->req[2 * i], &done, MPI_STATUS_IGNORE);
        if (!done) {
            size_t len = strlen(missing);
            snprintf(missing + len, sizeof(missing) - len, "%s%d", len ? "," : "",
                     world_rank - rank + p);
        }
    }
    arrivals_cancel(a);
    for (int i = 0; i < be->nwatch; i++) { /* abort frees the comm: forget the handle */
        if (be->watch[i]->nccl)
            ncclCommAbort(be->watch[i]->nccl);
        be->watch[i]->nccl = NULL;
    }
    be->nwatch = 0;
    return tpb_err_set(TPB_ERR_TIMEOUT,
                       "a collective did not complete within --timeout %g s on rank %d; ranks "
                       "that did not arrive: %s",
                       be->args.cfg.timeout_s, world_rank, missing[0] ? missing : "unknown");
}

/* One poll: GPU streams, the arrival tokens and the NCCL comms' asynchronous errors. */
static tpb_status_t poll_once(tpb_backend_t *be, arrivals_t *a, int *done_gpu, int *done_mpi)
{
    cudaError_t err;
    if (!*done_gpu)
        *done_gpu = streams_done(be, &err);
    if (!*done_gpu && err != cudaSuccess)
        return tpb_cuda_err(err, "cudaStreamQuery", __FILE__, __LINE__);
    if (!*done_mpi)
        MPI_Testall(a->nreq, a->req, done_mpi, MPI_STATUSES_IGNORE);
    for (int i = 0; i < be->nwatch; i++) {
        ncclResult_t async = ncclSuccess;
        if (be->watch[i]->nccl)
            ncclCommGetAsyncError(be->watch[i]->nccl, &async);
        if (async != ncclSuccess && async != ncclInProgress)
            return tpb_nccl_err(async, "ncclCommGetAsyncError", __FILE__, __LINE__);
    }
    return TPB_OK;
}

tpb_status_t tpb_cuda_wait(tpb_backend_t *be, int collective)
{
    tpb_cuda_gate_release(be); /* never wait on a stream held by the gate */
    arrivals_t a = {.nreq = 0, .npeer = 0};
    if (collective) {
        be->wait_seq++;
        arrivals_post(be, &a);
    }
    double start = tpb_clock_now_us(NULL), limit = be->args.cfg.timeout_s * 1e6;
    int done_gpu = 0, done_mpi = a.nreq == 0;
    while (!done_gpu || !done_mpi) {
        tpb_status_t st = poll_once(be, &a, &done_gpu, &done_mpi);
        if (st != TPB_OK) {
            arrivals_cancel(&a);
            return st;
        }
        if (limit > 0 && tpb_clock_now_us(NULL) - start > limit)
            return timed_out(be, &a);
        if (!done_gpu || !done_mpi)
            usleep(20);
    }
    return TPB_OK;
}

/* --overlap chunked: a chunk's collective on the comm stream after the GEMMs queued so far
 * (the GEMM stream goes on with the next chunk: no comm_pending), its mark right behind
 * it on the comm stream. */
tpb_status_t tpb_cuda_coll_start(tpb_comm_t *c, const void *send, void *recv, size_t count,
                                 const size_t *counts, const size_t *displs, tpb_dtype_t dt,
                                 size_t mark)
{
    tpb_backend_t *be = c->be;
    TPB_CHECK_RET(comm_begin(be));
    if (counts && c->nccl)
        TPB_CHECK_RET(nccl_allgatherv(c, send, recv, counts, displs, dt));
    else if (counts)
        TPB_CHECK_RET(mpi_allgatherv(c, send, recv, counts, displs, dt));
    else if (c->nccl)
        TPB_CHECK_RET(nccl_call(
            c, ncclAllReduce(send, recv, count, nccl_type(dt), ncclSum, c->nccl, be->comm_stream),
            "ncclAllReduce"));
    else
        TPB_CHECK_RET(mpi_allreduce(c, send, recv, count, dt));
    if (mark == TPB_NO_MARK)
        return TPB_OK;
    /* as cuda_marks.c records a collective's mark: on the comm stream, in its pool */
    int s = be->comm_stream != be->gemm_stream;
    be->event_stream[mark] = (unsigned char)s;
    cudaError_t e = cudaEventRecord(be->ev[s][mark], s ? be->comm_stream : be->gemm_stream);
    return e == cudaSuccess ? TPB_OK
                            : tpb_cuda_err(e, "cudaEventRecord(chunk mark)", __FILE__, __LINE__);
}

tpb_status_t tpb_cuda_coll_progress(tpb_comm_t *c)
{
    return TPB_OK; /* stream-ordered: the GPU runs them */
}

/* The next iteration's first GEMM waits for the last chunk's collective (comm_done). */
tpb_status_t tpb_cuda_coll_wait(tpb_comm_t *c)
{
    return comm_end(c->be);
}
