/* mpi_watch.c - a watchdog for non-blocking collectives over a side communicator. */
#include "backend/mpi_watch.h"
#include "base/stamp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"

enum { TAG_QUERY = 7201, TAG_ANSWER = 7202 };

/* Seconds the ranks have to answer a query once a timeout is seen. */
#define GRACE_US 1e6

tpb_status_t tpb_watch_open(tpb_watch_t *w, MPI_Comm group, int world_rank, double timeout_s)
{
    memset(w, 0, sizeof(*w));
    w->timeout_us = timeout_s * 1e6;
    MPI_Comm_rank(group, &w->rank);
    MPI_Comm_size(group, &w->size);
    w->hosts = calloc((size_t)w->size, sizeof(*w->hosts));
    w->world_ranks = calloc((size_t)w->size, sizeof(int));
    w->node_slot = calloc((size_t)w->size, sizeof(int));
    w->gen = tpb_watchdog_next_gen();
    if (!w->hosts || !w->world_ranks || !w->node_slot) {
        tpb_watch_close(w);
        return tpb_err_set(TPB_ERR_NOMEM, "watchdog: out of memory");
    }
    char me[TPB_WATCH_HOST_LEN] = {0};
    int len = 0;
    char name[MPI_MAX_PROCESSOR_NAME];
    MPI_Get_processor_name(name, &len);
    memcpy(me, name, (size_t)(len < TPB_WATCH_HOST_LEN ? len : TPB_WATCH_HOST_LEN - 1));
    int rc = MPI_Comm_dup(group, &w->side);
    rc |= MPI_Allgather(me, TPB_WATCH_HOST_LEN, MPI_CHAR, w->hosts, TPB_WATCH_HOST_LEN, MPI_CHAR,
                        group);
    rc |= MPI_Allgather(&world_rank, 1, MPI_INT, w->world_ranks, 1, MPI_INT, group);
    if (rc != MPI_SUCCESS) {
        tpb_watch_close(w);
        return tpb_err_call(TPB_ERR_MPI, "MPI_Allgather", "watchdog set-up", __FILE__, __LINE__);
    }
    for (int r = 0; r < w->size; r++)
        w->node_slot[r] = tpb_watchdog_node_slot(w->world_ranks[r]);
    return TPB_OK;
}

void tpb_watch_close(tpb_watch_t *w)
{
    if (w->side != MPI_COMM_NULL && w->side)
        MPI_Comm_free(&w->side);
    free(w->hosts);
    free(w->world_ranks);
    free(w->node_slot);
    memset(w, 0, sizeof(*w));
}

/* Answer every pending query with the collective this rank is waiting in. */
static void answer_queries(tpb_watch_t *w)
{
    int flag = 1;
    while (flag) {
        MPI_Status st;
        MPI_Iprobe(MPI_ANY_SOURCE, TAG_QUERY, w->side, &flag, &st);
        if (!flag)
            break;
        unsigned q;
        MPI_Recv(&q, 1, MPI_UNSIGNED, st.MPI_SOURCE, TAG_QUERY, w->side, MPI_STATUS_IGNORE);
        MPI_Send(&w->seq, 1, MPI_UNSIGNED, st.MPI_SOURCE, TAG_ANSWER, w->side);
    }
}

/* Ask every other rank where it is; arrived[r] = 1 for those in this collective or later. */
static int ask_group(tpb_watch_t *w, MPI_Request *req, int *arrived)
{
    MPI_Request sends[w->size];
    int done = 0;
    for (int r = 0; r < w->size; r++) {
        arrived[r] = r == w->rank;
        sends[r] = MPI_REQUEST_NULL;
        if (r != w->rank)
            MPI_Isend(&w->seq, 1, MPI_UNSIGNED, r, TAG_QUERY, w->side, &sends[r]);
    }
    double until = tpb_clock_now_us(NULL) + GRACE_US;
    while (!done && tpb_clock_now_us(NULL) < until) {
        MPI_Test(req, &done, MPI_STATUS_IGNORE);
        answer_queries(w);
        int flag = 1;
        while (flag) {
            MPI_Status st;
            MPI_Iprobe(MPI_ANY_SOURCE, TAG_ANSWER, w->side, &flag, &st);
            if (!flag)
                break;
            unsigned seq;
            MPI_Recv(&seq, 1, MPI_UNSIGNED, st.MPI_SOURCE, TAG_ANSWER, w->side, MPI_STATUS_IGNORE);
            arrived[st.MPI_SOURCE] |= seq >= w->seq;
        }
    }
    for (int r = 0; r < w->size; r++) { /* queries nobody took: cancel, never leave them dangling */
        int sent = 0;
        if (sends[r] == MPI_REQUEST_NULL)
            continue;
        MPI_Test(&sends[r], &sent, MPI_STATUS_IGNORE);
        if (!sent) {
            MPI_Cancel(&sends[r]);
            MPI_Request_free(&sends[r]);
        }
    }
    return done;
}

/* The message for a collective that did not complete: who did not arrive. */
static tpb_status_t timed_out(tpb_watch_t *w, const int *arrived, const char *what)
{
    char list[1024] = "";
    size_t len = 0;
    int n = 0;
    for (int r = 0; r < w->size && len < sizeof(list) - 80; r++) {
        if (arrived[r])
            continue;
        len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%d (%s)", n ? ", " : "",
                                w->world_ranks[r], w->hosts[r]);
        n++;
    }
    return tpb_err_set(TPB_ERR_TIMEOUT,
                       "rank %d (%s) waited %.0f s in the %s of its TP group; rank%s %s did not "
                       "arrive (--timeout %.0f s): look at that rank's process or node",
                       w->world_ranks[w->rank], w->hosts[w->rank], w->timeout_us * 1e-6, what,
                       n == 1 ? "" : "s", n ? list : "(unknown)", w->timeout_us * 1e-6);
}

static tpb_status_t wait_polled(tpb_watch_t *w, MPI_Request *req, const char *what)
{
    int done = 0;
    double start = 0.0;
    w->seq++;
    for (unsigned polls = 1; !done; polls++) {
        if (MPI_Test(req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            return tpb_err_call(TPB_ERR_MPI, "MPI_Test", what, __FILE__, __LINE__);
        if (done || polls % 256)
            continue;
        double now = tpb_clock_now_us(NULL);
        if (start == 0.0)
            start = now;
        answer_queries(w);
        if (w->timeout_us > 0 && now - start > w->timeout_us) {
            int arrived[w->size];
            if (ask_group(w, req, arrived))
                return TPB_OK; /* it completed while we asked */
            return timed_out(w, arrived, what);
        }
    }
    return TPB_OK;
}

tpb_status_t tpb_watch_wait(tpb_watch_t *w, MPI_Request *req, const char *what)
{
    tpb_stamp_peers(1); /* the progress watchdog: a wait for the group, its own limit first */
    tpb_status_t st = wait_polled(w, req, what);
    tpb_stamp_peers(0);
    return st;
}
