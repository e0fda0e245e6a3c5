/*
 * host_comm.c - a TP group's collectives on the host: MPI on a duplicate of the group.
 * A blocking descriptor runs the blocking call (MPI_Allreduce, MPI_Allgatherv,
 * MPI_Reduce_scatter: what OSU and IMB time) under the node's watchdog, or with
 * --collectives nonblocking the non-blocking call waited for under the side
 * communicator's. A non-blocking descriptor (--overlap chunked) starts the non-blocking
 * call; progress tests every started one (Open MPI progresses a collective only inside
 * MPI calls) and takes its mark when a test first finds it complete; wait waits for the
 * rest under the --timeout watchdog.
 */
#include <limits.h>
#include <stdlib.h>

#include "backend/host/host_internal.h"
#include "base/clock.h"

/* The descriptor's counts and displacements as MPI's ints (counts only where displs is
 * NULL); TPB_ERR_UNSUPPORTED past INT_MAX. */
static tpb_status_t int_blocks(const tpb_host_comm_t *c, const tpb_coll_desc_t *d, int *ic, int *id)
{
    for (int r = 0; r < c->size; r++) {
        if (d->counts[r] > INT_MAX || (d->displs && d->displs[r] > INT_MAX))
            return tpb_err_set(TPB_ERR_UNSUPPORTED, "%s block of %zu elements: at most %d",
                               tpb_coll_label(d->kind), d->counts[r], INT_MAX);
        ic[r] = (int)d->counts[r];
        if (id)
            id[r] = (int)d->displs[r];
    }
    return TPB_OK;
}

/* MPI_Reduce_scatter takes the blocks in rank order, back to back. */
static tpb_status_t check_contiguous(const tpb_host_comm_t *c, const tpb_coll_desc_t *d)
{
    size_t at = d->displs ? d->displs[0] : 0;
    for (int r = 0; d->displs && r < c->size; at += d->counts[r], r++)
        if (d->displs[r] != at)
            return tpb_err_set(TPB_ERR_UNSUPPORTED, "reduce-scatter: the blocks must follow each "
                                                    "other in rank order");
    return TPB_OK;
}

/* Start (req != NULL) or run the collective of d; rc is MPI's. A switch without a default:
 * a new kind of collective fails the build here until it is given its MPI call. */
static tpb_status_t call(tpb_host_comm_t *c, const tpb_coll_desc_t *d, MPI_Request *req,
                         const char **name)
{
    int ic[c->size], id[c->size], rc = MPI_SUCCESS;
    MPI_Datatype t = tpb_host_mpi_type(d->dtype);
    const char *send = d->send;
    *name = NULL;
    switch (d->kind) {
    case TPB_COLL_ALLREDUCE:
        if (d->count > INT_MAX)
            return tpb_err_set(TPB_ERR_UNSUPPORTED, "all-reduce of %zu elements: at most %d",
                               d->count, INT_MAX);
        *name = req ? "MPI_Iallreduce" : "MPI_Allreduce";
        rc = req ? MPI_Iallreduce(d->send, d->recv, (int)d->count, t, MPI_SUM, c->comm, req)
                 : MPI_Allreduce(d->send, d->recv, (int)d->count, t, MPI_SUM, c->comm);
        break;
    case TPB_COLL_ALLGATHER:
        TPB_CHECK_RET(int_blocks(c, d, ic, id));
        *name = req ? "MPI_Iallgatherv" : "MPI_Allgatherv";
        rc = req ? MPI_Iallgatherv(d->send, ic[c->rank], t, d->recv, ic, id, t, c->comm, req)
                 : MPI_Allgatherv(d->send, ic[c->rank], t, d->recv, ic, id, t, c->comm);
        break;
    case TPB_COLL_REDUCE_SCATTER:
        TPB_CHECK_RET(check_contiguous(c, d));
        TPB_CHECK_RET(int_blocks(c, d, ic, NULL));
        send += d->displs ? d->displs[0] * tpb_dtype_out_size(d->dtype) : 0;
        *name = req ? "MPI_Ireduce_scatter" : "MPI_Reduce_scatter";
        rc = req ? MPI_Ireduce_scatter(send, d->recv, ic, t, MPI_SUM, c->comm, req)
                 : MPI_Reduce_scatter(send, d->recv, ic, t, MPI_SUM, c->comm);
        break;
    }
    if (!*name)
        return tpb_err_set(TPB_ERR_UNSUPPORTED, "collective kind %d", (int)d->kind);
    if (rc != MPI_SUCCESS)
        return tpb_err_call(TPB_ERR_MPI, *name, "TP group", __FILE__, __LINE__);
    return TPB_OK;
}

/* A blocking descriptor: the blocking call under the node's watchdog, or (--collectives
 * nonblocking) the non-blocking one waited for under the side communicator's. */
static tpb_status_t run_blocking(tpb_host_comm_t *c, const tpb_coll_desc_t *d)
{
    const char *name = "";
    if (c->blocking) {
        tpb_watch_enter(&c->watch, tpb_coll_label(d->kind));
        tpb_status_t st = call(c, d, NULL, &name);
        tpb_watch_leave(&c->watch);
        return st;
    }
    MPI_Request req;
    TPB_CHECK_RET(call(c, d, &req, &name));
    return tpb_watch_wait(&c->watch, &req, tpb_coll_label(d->kind));
}

static tpb_status_t host_post(tpb_comm_t *comm, const tpb_coll_desc_t *d)
{
    tpb_host_comm_t *c = (tpb_host_comm_t *)comm;
    if (!d->nonblocking)
        return run_blocking(c, d);
    if (c->nstarted == TPB_MAX_CHUNKS)
        return tpb_err_set(TPB_ERR_UNSUPPORTED, "more than %d collectives in flight",
                           TPB_MAX_CHUNKS);
    int i = c->nstarted;
    const char *name = "";
    TPB_CHECK_RET(call(c, d, &c->req[i], &name));
    c->what[i] = tpb_coll_label(d->kind);
    c->mark[i] = d->mark;
    c->nstarted++;
    return TPB_OK;
}

static void take_mark(tpb_host_comm_t *c, int i)
{
    if (c->mark[i] != TPB_NO_MARK && c->mark[i] < c->h->nmarks)
        c->h->marks[c->mark[i]] = tpb_clock_now_us(c->h->args.clock);
    c->mark[i] = TPB_NO_MARK; /* once */
}

static tpb_status_t host_progress(tpb_comm_t *comm)
{
    tpb_host_comm_t *c = (tpb_host_comm_t *)comm;
    for (int i = 0; i < c->nstarted; i++) {
        if (c->req[i] == MPI_REQUEST_NULL)
            continue;
        int done = 0;
        if (MPI_Test(&c->req[i], &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            return tpb_err_call(TPB_ERR_MPI, "MPI_Test", "TP group chunk", __FILE__, __LINE__);
        if (done)
            take_mark(c, i);
    }
    return TPB_OK;
}

static tpb_status_t host_wait(tpb_comm_t *comm)
{
    tpb_host_comm_t *c = (tpb_host_comm_t *)comm;
    tpb_status_t st = TPB_OK;
    for (int i = 0; i < c->nstarted && st == TPB_OK; i++) {
        if (c->req[i] != MPI_REQUEST_NULL)
            st = tpb_watch_wait(&c->watch, &c->req[i], c->what[i]);
        if (st == TPB_OK)
            take_mark(c, i);
    }
    c->nstarted = 0;
    return st;
}

static void host_close(tpb_comm_t *comm)
{
    tpb_host_comm_t *c = (tpb_host_comm_t *)comm;
    tpb_watch_close(&c->watch);
    MPI_Comm_free(&c->comm);
    free(c);
}

static const tpb_comm_ops_t host_comm_ops = {
    .post = host_post,
    .progress = host_progress,
    .wait = host_wait,
    .close = host_close,
};

tpb_status_t tpb_host_comm_open(tpb_device_t *dev, MPI_Comm group, tpb_comm_t **comm)
{
    tpb_host_t *h = (tpb_host_t *)dev;
    tpb_host_comm_t *c = calloc(1, sizeof(*c));
    if (!c)
        return tpb_err_set(TPB_ERR_NOMEM, "host backend: out of memory");
    if (MPI_Comm_dup(group, &c->comm) != MPI_SUCCESS) {
        free(c);
        return tpb_err_call(TPB_ERR_MPI, "MPI_Comm_dup", "TP group", __FILE__, __LINE__);
    }
    c->base.ops = &host_comm_ops;
    c->blocking = h->args.cfg.collectives == TPB_COLLS_BLOCKING;
    c->h = h;
    MPI_Comm_rank(c->comm, &c->rank);
    MPI_Comm_size(c->comm, &c->size);
    tpb_status_t st = tpb_watch_open(&c->watch, group, h->args.world_rank, h->args.cfg.timeout_s);
    if (st != TPB_OK) {
        MPI_Comm_free(&c->comm);
        free(c);
        return st;
    }
    *comm = &c->base;
    return TPB_OK;
}
