/* clocksync.c - min-RTT offset estimation between rank 0 and every rank. */
#include "run/clocksync.h"

#include <math.h>

#define TPB_TAG_PING 7101

/* Rank 0's side of the exchanges with one peer; fills *s with the best one. */
static int ping_peer(MPI_Comm comm, const tpb_clock_t *c, int peer, int n, tpb_clock_sample_t *s)
{
    s->rtt_us = INFINITY;
    for (int i = 0; i < n; i++) {
        double t0 = tpb_clock_now_us(c), tr;
        int rc = MPI_Send(&t0, 1, MPI_DOUBLE, peer, TPB_TAG_PING, comm);
        rc |= MPI_Recv(&tr, 1, MPI_DOUBLE, peer, TPB_TAG_PING, comm, MPI_STATUS_IGNORE);
        double t1 = tpb_clock_now_us(c);
        if (rc != MPI_SUCCESS)
            return rc;
        if (t1 - t0 < s->rtt_us) {
            s->rtt_us = t1 - t0;
            s->at_us = 0.5 * (t0 + t1);
            s->offset_us = tr - s->at_us;
        }
    }
    return MPI_SUCCESS;
}

static int pong(MPI_Comm comm, const tpb_clock_t *c, int n)
{
    for (int i = 0; i < n; i++) {
        double t;
        int rc = MPI_Recv(&t, 1, MPI_DOUBLE, 0, TPB_TAG_PING, comm, MPI_STATUS_IGNORE);
        t = tpb_clock_now_us(c);
        rc |= MPI_Send(&t, 1, MPI_DOUBLE, 0, TPB_TAG_PING, comm);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

tpb_status_t tpb_clock_sync(MPI_Comm comm, const tpb_clock_t *c, int exchanges,
                            tpb_clock_sample_t *samples)
{
    int rank, size, rc = MPI_SUCCESS;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (MPI_Barrier(comm) != MPI_SUCCESS)
        return tpb_err_call(TPB_ERR_MPI, "MPI_Barrier", "clock sync", __FILE__, __LINE__);
    if (rank == 0) {
        samples[0].offset_us = samples[0].rtt_us = 0.0;
        samples[0].at_us = tpb_clock_now_us(c);
        for (int p = 1; p < size && rc == MPI_SUCCESS; p++)
            rc = ping_peer(comm, c, p, exchanges, &samples[p]);
    } else {
        rc = pong(comm, c, exchanges);
    }
    if (rc != MPI_SUCCESS)
        return tpb_err_call(TPB_ERR_MPI, "MPI_Send/MPI_Recv", "clock ping-pong", __FILE__,
                            __LINE__);
    return TPB_OK;
}
