/*
 * cuda_watch.c - the --timeout watchdog of the CUDA backend: every wait for the GPU
 * polls the streams, tells the TP group's peers that this rank arrived, and checks
 * the NCCL communicators' asynchronous errors; a wait past --timeout aborts the NCCL
 * communicators and names the ranks that never arrived.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "backend/cuda/cuda_internal.h"

#define TPB_TAG_ARRIVE 7300

typedef struct {
    MPI_Request req[2 * 64];
    unsigned token[64];
    int nreq, npeer;
} arrivals_t;

/* Tell the peers of the first watched group that this rank reached the wait. */
static void arrivals_post(tpb_cuda_t *be, arrivals_t *a)
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

static int streams_done(tpb_cuda_t *be, cudaError_t *err)
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

/* The world rank of rank p of communicator g (a spread group's ranks are not contiguous). */
static int world_rank_of(MPI_Comm g, int p)
{
    MPI_Group gg, wg;
    int w = MPI_UNDEFINED;
    MPI_Comm_group(g, &gg);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_translate_ranks(gg, 1, &p, wg, &w);
    MPI_Group_free(&gg);
    MPI_Group_free(&wg);
    return w;
}

static tpb_status_t timed_out(tpb_cuda_t *be, arrivals_t *a)
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
                     world_rank_of(g, p));
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
static tpb_status_t poll_once(tpb_cuda_t *be, arrivals_t *a, int *done_gpu, int *done_mpi)
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

tpb_status_t tpb_cuda_wait(tpb_cuda_t *be, int collective)
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
