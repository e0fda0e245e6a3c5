/*
 * host_overlap.c - the non-blocking collectives of --overlap chunked on the host:
 * MPI_Iallreduce / MPI_Iallgatherv started after each chunk's GEMM, MPI_Test on each
 * between the pieces of the next chunk's GEMM (Open MPI progresses a collective only
 * inside MPI calls), each one's mark taken when a test first finds it complete, and
 * the rest waited for under the --timeout watchdog.
 */
#include <limits.h>

#include "backend/host/host_internal.h"
#include "base/clock.h"

static void take_mark(tpb_comm_t *c, int i)
{
    if (c->mark[i] != TPB_NO_MARK && c->mark[i] < c->be->nmarks)
        c->be->marks[c->mark[i]] = tpb_clock_now_us(c->be->args.clock);
    c->mark[i] = TPB_NO_MARK; /* once */
}

static tpb_status_t start_allgatherv(tpb_comm_t *c, const void *send, void *recv,
                                     const size_t *counts, const size_t *displs, tpb_dtype_t dt,
                                     MPI_Request *req)
{
    int ic[c->size], id[c->size];
    for (int r = 0; r < c->size; r++) {
        if (counts[r] > INT_MAX || displs[r] > INT_MAX)
            return tpb_err_set(TPB_ERR_UNSUPPORTED, "all-gather block of %zu elements: at most %d",
                               counts[r], INT_MAX);
        ic[r] = (int)counts[r];
        id[r] = (int)displs[r];
    }
    MPI_Datatype t = tpb_host_mpi_type(dt);
    if (MPI_Iallgatherv(send, ic[c->rank], t, recv, ic, id, t, c->comm, req) != MPI_SUCCESS)
        return tpb_err_call(TPB_ERR_MPI, "MPI_Iallgatherv", "TP group chunk", __FILE__, __LINE__);
    return TPB_OK;
}

tpb_status_t tpb_host_coll_start(tpb_comm_t *c, const void *send, void *recv, size_t count,
                                 const size_t *counts, const size_t *displs, tpb_dtype_t dt,
                                 size_t mark)
{
    if (c->nstarted == TPB_MAX_CHUNKS)
        return tpb_err_set(TPB_ERR_UNSUPPORTED, "more than %d collectives in flight",
                           TPB_MAX_CHUNKS);
    int i = c->nstarted;
    MPI_Request *req = &c->req[i];
    if (counts) {
        TPB_CHECK_RET(start_allgatherv(c, send, recv, counts, displs, dt, req));
        c->what[i] = "all-gather-v chunk";
    } else {
        if (count > INT_MAX)
            return tpb_err_set(TPB_ERR_UNSUPPORTED, "all-reduce of %zu elements: at most %d", count,
                               INT_MAX);
        if (MPI_Iallreduce(send, recv, (int)count, tpb_host_mpi_type(dt), MPI_SUM, c->comm, req) !=
            MPI_SUCCESS)
            return tpb_err_call(TPB_ERR_MPI, "MPI_Iallreduce", "TP group chunk", __FILE__,
                                __LINE__);
        c->what[i] = "all-reduce chunk";
    }
    c->mark[i] = mark;
    c->nstarted++;
    return TPB_OK;
}

tpb_status_t tpb_host_coll_progress(tpb_comm_t *c)
{
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

tpb_status_t tpb_host_coll_wait(tpb_comm_t *c)
{
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
