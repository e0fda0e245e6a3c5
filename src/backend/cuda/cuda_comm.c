/*
 * cuda_comm.c - NCCL, the CUDA backend's collective library behind the generic
 * GPU layer (gpu_comm.c): one communicator per TP group, its unique id broadcast
 * over the group's MPI communicator, non-blocking so that every wait is polled
 * under the watchdog (gpu_watch.c). --comm mpi's staging is generic
 * (gpu_staging.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/cuda/cuda_internal.h"
#include "base/stamp.h"
#include "backend/cuda/cuda_plan.h"

#define NCCL_OF(c) ((ncclComm_t)(c)->ccl)

/* The NCCL type of a collective's elements: the dtype's storage. fp8 only ever moves (the
 * all-gather of X; its GEMM writes bf16): a byte type, as old as NCCL's first release
 * (ncclFloat8e4m3 needs NCCL 2.24). No default: -Wswitch-enum names a new dtype here, in every
 * build. */
static ncclDataType_t nccl_type(tpb_dtype_t dt)
{
    switch (dt) {
    case TPB_DTYPE_FP64: return ncclFloat64;
    case TPB_DTYPE_FP32:
    case TPB_DTYPE_TF32: return ncclFloat32;
    case TPB_DTYPE_FP16: return ncclFloat16;
    case TPB_DTYPE_BF16: return ncclBfloat16;
    case TPB_DTYPE_FP8: return ncclUint8;
    }
    return ncclFloat32; /* not a dtype */
}

/* Poll a non-blocking communicator until its last call finished, under --timeout: so a
 * blocking step (ncclCommInitRank, the first collective making connections) cannot hang
 * the rank unwatched. */
static tpb_status_t nccl_settle(tpb_gpu_comm_t *c, const char *what)
{
    double start = tpb_clock_now_us(NULL), limit = c->gpu->args.cfg.timeout_s * 1e6;
    ncclResult_t r = ncclInProgress;
    while (r == ncclInProgress) {
        if (ncclCommGetAsyncError(NCCL_OF(c), &r) != ncclSuccess)
            break;
        if (r == ncclInProgress && limit > 0 && tpb_clock_now_us(NULL) - start > limit) {
            ncclCommAbort(NCCL_OF(c));
            c->ccl = NULL; /* aborted: freed by NCCL, never destroyed again */
            return tpb_err_set(TPB_ERR_TIMEOUT,
                               "%s did not complete within --timeout %g s on rank %d (a rank of "
                               "the TP group did not join)",
                               what, c->gpu->args.cfg.timeout_s, c->gpu->args.world_rank);
        }
        if (r == ncclInProgress)
            usleep(100);
    }
    if (r != ncclSuccess)
        return tpb_nccl_err(r, what, __FILE__, __LINE__);
    return TPB_OK;
}

/* The result of a call on a non-blocking communicator: in progress is not an error. */
static tpb_status_t nccl_call(tpb_gpu_comm_t *c, ncclResult_t r, const char *what)
{
    if (r == ncclInProgress)
        return nccl_settle(c, what);
    if (r != ncclSuccess)
        return tpb_nccl_err(r, what, __FILE__, __LINE__);
    return TPB_OK;
}

/* The group's NCCL communicator, after checking that its ranks drive distinct GPUs. */
tpb_status_t tpb_cuda_ccl_open(tpb_gpu_comm_t *c)
{
    TPB_CHECK_RET(tpb_gpu_check_group(c));
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
    ncclComm_t comm = NULL;
    ncclResult_t r = ncclCommInitRankConfig(&comm, c->size, msg.id, c->rank, &cfg);
    c->ccl = comm;
    return nccl_call(c, r, "ncclCommInitRankConfig");
}

/* NCCL has no all-gather-v: one broadcast per rank, grouped. The even split of a layer's
 * output takes the same path (never ncclAllGather), so that even and weighted compare one
 * algorithm; blocks equal by construction (sequence parallelism) take ncclAllGather. */
static tpb_status_t nccl_allgather(tpb_gpu_comm_t *c, const tpb_coll_desc_t *d)
{
    size_t esz = tpb_dtype_in_size(d->dtype);
    ncclDataType_t t = nccl_type(d->dtype);
    if (d->equal)
        return nccl_call(c,
                         ncclAllGather(d->send, (char *)d->recv + d->displs[0] * esz,
                                       d->counts[c->rank], t, NCCL_OF(c),
                                       tpb_cuda_of(c->gpu)->comm_stream),
                         "ncclAllGather");
    TPB_CHECK_RET(nccl_call(c, ncclGroupStart(), "ncclGroupStart"));
    for (int r = 0; r < c->size; r++) {
        ncclResult_t e =
            ncclBroadcast(r == c->rank ? d->send : NULL, (char *)d->recv + d->displs[r] * esz,
                          d->counts[r], t, r, NCCL_OF(c), tpb_cuda_of(c->gpu)->comm_stream);
        if (e != ncclSuccess && e != ncclInProgress) {
            ncclGroupEnd();
            return tpb_nccl_err(e, "ncclBroadcast", __FILE__, __LINE__);
        }
    }
    return nccl_call(c, ncclGroupEnd(), "ncclGroupEnd (all-gather-v)");
}

/* NCCL's reduce-scatter takes equal blocks (planned so: its capability table, cuda_defaults.h). */
static tpb_status_t nccl_reduce_scatter(tpb_gpu_comm_t *c, const tpb_coll_desc_t *d)
{
    size_t esz = tpb_dtype_in_size(d->dtype);
    for (int r = 1; r < c->size; r++)
        if (d->counts[r] != d->counts[0])
            return tpb_err_set(TPB_ERR_UNSUPPORTED, "ncclReduceScatter needs equal blocks");
    return nccl_call(c,
                     ncclReduceScatter((const char *)d->send + d->displs[0] * esz, d->recv,
                                       d->counts[0], nccl_type(d->dtype), ncclSum, NCCL_OF(c),
                                       tpb_cuda_of(c->gpu)->comm_stream),
                     "ncclReduceScatter");
}

static tpb_status_t post(tpb_gpu_comm_t *c, const tpb_coll_desc_t *d)
{
    switch (d->kind) { /* no default: a new kind fails the build until it has its call */
    case TPB_COLL_ALLREDUCE:
        return nccl_call(c,
                         ncclAllReduce(d->send, d->recv, d->count, nccl_type(d->dtype), ncclSum,
                                       NCCL_OF(c), tpb_cuda_of(c->gpu)->comm_stream),
                         "ncclAllReduce");
    case TPB_COLL_ALLGATHER: return nccl_allgather(c, d);
    case TPB_COLL_REDUCE_SCATTER: return nccl_reduce_scatter(c, d);
    }
    return tpb_err_set(TPB_ERR_UNSUPPORTED, "collective kind %d", (int)d->kind);
}

tpb_status_t tpb_cuda_ccl_post(tpb_gpu_comm_t *c, const tpb_coll_desc_t *d)
{
    tpb_stamp_call("an NCCL call"); /* an enqueue can block the host (the watchdog sees it) */
    tpb_status_t st = post(c, d);
    tpb_stamp_call(NULL);
    return st;
}

/* The comm stream's work done, polled under --timeout (a collective that never ends must not
 * hang the close: cudaStreamSynchronize would). 0 if it finished. */
static int comm_stream_settle(tpb_gpu_comm_t *c)
{
    double start = tpb_clock_now_us(NULL), limit = c->gpu->args.cfg.timeout_s * 1e6;
    cudaStream_t s = tpb_cuda_of(c->gpu)->comm_stream;
    cudaError_t e;
    tpb_stamp_call("closing NCCL: a wait for its stream");
    while ((e = cudaStreamQuery(s)) == cudaErrorNotReady &&
           (limit <= 0 || tpb_clock_now_us(NULL) - start <= limit))
        usleep(50);
    tpb_stamp_call(NULL);
    return e != cudaSuccess;
}

/* A clean-up: a broken communicator is aborted; a sound non-blocking one is finalized
 * (polled, under --timeout) first. The error that ended the run keeps its message. */
void tpb_cuda_ccl_close(tpb_gpu_comm_t *c)
{
    char saved[1024];
    snprintf(saved, sizeof(saved), "%s", tpb_err_msg());
    int unfinished = comm_stream_settle(c);
    ncclResult_t async = ncclSuccess;
    ncclCommGetAsyncError(NCCL_OF(c), &async);
    if (unfinished || (async != ncclSuccess && async != ncclInProgress))
        ncclCommAbort(NCCL_OF(c)); /* its operations in flight end */
    else if (nccl_call(c, ncclCommFinalize(NCCL_OF(c)), "ncclCommFinalize") == TPB_OK)
        ncclCommDestroy(NCCL_OF(c));
    else if (c->ccl) /* NULL when the finalize timed out: aborted there */
        ncclCommAbort(NCCL_OF(c));
    c->ccl = NULL;
    if (saved[0])
        tpb_err_set(TPB_ERR_BACKEND, "%s", saved);
}

tpb_status_t tpb_cuda_ccl_error(tpb_gpu_comm_t *c)
{
    ncclResult_t async = ncclSuccess;
    ncclCommGetAsyncError(NCCL_OF(c), &async);
    if (async != ncclSuccess && async != ncclInProgress)
        return tpb_nccl_err(async, "ncclCommGetAsyncError", __FILE__, __LINE__);
    return TPB_OK;
}

void tpb_cuda_ccl_abort(tpb_gpu_comm_t *c)
{
    ncclCommAbort(NCCL_OF(c));
}
