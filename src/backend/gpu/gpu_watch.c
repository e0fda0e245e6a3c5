/*
 * gpu_watch.c - the --timeout watchdog of a GPU backend: every wait for the GPU
 * polls the streams, tells the TP group's peers that this rank arrived, and checks
 * the collective library's communicators for asynchronous errors; a wait past
 * --timeout aborts those communicators and names the ranks that never arrived.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "backend/gpu/gpu.h"
#include "base/stamp.h"

#define TPB_TAG_ARRIVE 7300

typedef struct {
    MPI_Request req[2 * 64];
    unsigned token[64];
    int nreq, npeer;
} arrivals_t;

void tpb_gpu_watch_add(tpb_gpu_comm_t *c)
{
    tpb_gpu_t *g = c->gpu;
    if (g->nwatch < 8)
        g->watch[g->nwatch++] = c;
}

void tpb_gpu_watch_remove(tpb_gpu_comm_t *c)
{
    tpb_gpu_t *g = c->gpu;
    for (int i = 0; i < g->nwatch; i++) {
        if (g->watch[i] == c) {
            g->watch[i] = g->watch[--g->nwatch];
            return;
        }
    }
}

/* Tell the peers of the first watched group that this rank reached the wait. */
static void arrivals_post(tpb_gpu_t *g, arrivals_t *a)
{
    a->nreq = a->npeer = 0;
    if (!g->nwatch)
        return;
    MPI_Comm grp = g->watch[0]->mpi;
    int rank, size;
    MPI_Comm_rank(grp, &rank);
    MPI_Comm_size(grp, &size);
    int tag = TPB_TAG_ARRIVE + (int)(g->wait_seq % 1000);
    for (int p = 0; p < size && a->npeer < 64; p++) {
        if (p == rank)
            continue;
        MPI_Irecv(&a->token[a->npeer], 1, MPI_UNSIGNED, p, tag, grp, &a->req[a->nreq++]);
        MPI_Isend(&g->wait_seq, 1, MPI_UNSIGNED, p, tag, grp, &a->req[a->nreq++]);
        a->npeer++;
    }
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

/* The world rank of rank p of communicator c (a spread group's ranks are not contiguous). */
static int world_rank_of(MPI_Comm c, int p)
{
    MPI_Group gg, wg;
    int w = MPI_UNDEFINED;
    MPI_Comm_group(c, &gg);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_translate_ranks(gg, 1, &p, wg, &w);
    MPI_Group_free(&gg);
    MPI_Group_free(&wg);
    return w;
}

/* The wait outlasted --timeout: the communicators aborted, and a message naming the ranks of
 * the first watched group that never arrived; with no group watched (TP 1, a set-up wait),
 * the device's own work is what did not end. */
static tpb_status_t timed_out(tpb_gpu_t *g, arrivals_t *a, int done_gpu)
{
    char missing[256] = "";
    if (!g->nwatch)
        return tpb_err_set(TPB_ERR_TIMEOUT,
                           "the GPU did not finish this rank's work within --timeout %g s on "
                           "rank %d (no collective in flight: a GEMM, a copy or the device "
                           "itself): look at that rank's GPU",
                           g->args.cfg.timeout_s, g->args.world_rank);
    MPI_Comm grp = g->watch[0]->mpi;
    int rank, world_rank = g->args.world_rank;
    MPI_Comm_rank(grp, &rank);
    for (int i = 0, p = 0; i < a->npeer; i++, p++) {
        p += p == rank;
        int done = 0;
        MPI_Test(&a->req[2 * i], &done, MPI_STATUS_IGNORE);
        if (!done) {
            size_t len = strlen(missing);
            snprintf(missing + len, sizeof(missing) - len, "%s%d", len ? "," : "",
                     world_rank_of(grp, p));
        }
    }
    arrivals_cancel(a);
    for (int i = 0; i < g->nwatch; i++) { /* an abort frees the comm: forget the handle */
        if (g->watch[i]->ccl)
            g->v->ccl_abort(g->watch[i]);
        g->watch[i]->ccl = NULL;
    }
    g->nwatch = 0;
    if (done_gpu && !missing[0]) /* the GPU is idle and every peer arrived: the library */
        snprintf(missing, sizeof(missing), "none (%s's work did not end)", g->v->name);
    return tpb_err_set(TPB_ERR_TIMEOUT,
                       "a collective did not complete within --timeout %g s on rank %d; ranks "
                       "that did not arrive: %s",
                       g->args.cfg.timeout_s, world_rank, missing[0] ? missing : "unknown");
}

/* One poll: the streams, the arrival tokens and the communicators' asynchronous errors. */
static tpb_status_t poll_once(tpb_gpu_t *g, arrivals_t *a, int *done_gpu, int *done_mpi)
{
    if (!*done_gpu) {
        int gemm = 0, comm = 0;
        TPB_CHECK_RET(g->v->stream_query(g, TPB_GPU_GEMM, &gemm));
        TPB_CHECK_RET(g->v->stream_query(g, TPB_GPU_COMM, &comm));
        *done_gpu = gemm && comm;
    }
    if (!*done_mpi)
        MPI_Testall(a->nreq, a->req, done_mpi, MPI_STATUSES_IGNORE);
    for (int i = 0; i < g->nwatch; i++)
        if (g->watch[i]->ccl)
            TPB_CHECK_RET(g->v->ccl_error(g->watch[i]));
    return TPB_OK;
}

static tpb_status_t wait_polled(tpb_gpu_t *g, int collective)
{
    arrivals_t a = {.nreq = 0, .npeer = 0};
    if (collective) {
        g->wait_seq++;
        arrivals_post(g, &a);
    }
    double start = tpb_clock_now_us(NULL), limit = g->args.cfg.timeout_s * 1e6;
    int done_gpu = 0, done_mpi = a.nreq == 0;
    while (!done_gpu || !done_mpi) {
        tpb_status_t st = poll_once(g, &a, &done_gpu, &done_mpi);
        if (st != TPB_OK) {
            arrivals_cancel(&a);
            return st;
        }
        if (limit > 0 && tpb_clock_now_us(NULL) - start > limit)
            return timed_out(g, &a, done_gpu);
        if (!done_gpu || !done_mpi)
            usleep(20);
    }
    return TPB_OK;
}

tpb_status_t tpb_gpu_wait(tpb_gpu_t *g, int collective)
{
    g->v->gate_release(g); /* never wait on a stream held by the gate */
    g->release_due = g->gemm_queued = 0;
    /* progress now (the watchdog's stamp): this wait's own --timeout ends it first */
    tpb_stamp_call(collective ? "a wait for the GPU and the TP group" : "a wait for the GPU");
    tpb_status_t st = wait_polled(g, collective);
    tpb_stamp_call(NULL);
    return st;
}
