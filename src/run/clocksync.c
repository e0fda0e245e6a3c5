/* clocksync.c - min-RTT offsets to rank 0: down a binomial tree, or serially (reference). */
#include "run/clocksync.h"

#include <math.h>
#include <stdlib.h>

#include "base/clocktree.h"

#define TPB_TAG_PING 7101
#define TPB_TAG_TREE 7102

/* The pinging side of n exchanges with peer: the one of least RTT, as *rtt, its midpoint
 * *mid on this clock and the peer's reading *tr (between t0 and t1, by causality). */
static int best_exchange(MPI_Comm comm, const tpb_clock_t *c, int peer, int tag, int n, double *rtt,
                         double *mid, double *tr)
{
    *rtt = INFINITY;
    for (int i = 0; i < n; i++) {
        double t0 = tpb_clock_now_us(c), t;
        int rc = MPI_Send(&t0, 1, MPI_DOUBLE, peer, tag, comm);
        rc |= MPI_Recv(&t, 1, MPI_DOUBLE, peer, tag, comm, MPI_STATUS_IGNORE);
        double t1 = tpb_clock_now_us(c);
        if (rc != MPI_SUCCESS)
            return rc;
        if (t1 - t0 < *rtt) {
            *rtt = t1 - t0;
            *mid = 0.5 * (t0 + t1);
            *tr = t;
        }
    }
    return MPI_SUCCESS;
}

/* Rank 0's side of the exchanges with one peer (serial): the peer's offset to rank 0. */
static int ping_peer(MPI_Comm comm, const tpb_clock_t *c, int peer, int n, tpb_clock_sample_t *s)
{
    double mid = 0.0, tr = 0.0;
    int rc = best_exchange(comm, c, peer, TPB_TAG_PING, n, &s->rtt_us, &mid, &tr);
    s->at_us = mid;
    s->offset_us = tr - mid;
    return rc;
}

/* The answering side: n times, the time of this clock back to the peer. */
static int pong(MPI_Comm comm, const tpb_clock_t *c, int peer, int tag, int n)
{
    for (int i = 0; i < n; i++) {
        double t;
        int rc = MPI_Recv(&t, 1, MPI_DOUBLE, peer, tag, comm, MPI_STATUS_IGNORE);
        t = tpb_clock_now_us(c);
        rc |= MPI_Send(&t, 1, MPI_DOUBLE, peer, tag, comm);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

/* A child's side of its pair: its offset to its parent (this clock minus the parent's) and
 * when, on the parent's clock. */
static int ping_parent(MPI_Comm comm, const tpb_clock_t *c, int parent, int n, tpb_clock_pair_t *pr)
{
    double mid = 0.0, tr = 0.0;
    int rc = best_exchange(comm, c, parent, TPB_TAG_TREE, n, &pr->rtt_us, &mid, &tr);
    pr->offset_us = mid - tr;
    pr->at_us = tr;
    return rc;
}

/* This rank's part of the tree's rounds: serve its children, measure its parent. */
static int tree_rounds(MPI_Comm comm, const tpb_clock_t *c, int rank, int size, int n,
                       tpb_clock_pair_t *mine)
{
    int rc = MPI_SUCCESS, rounds = tpb_clock_tree_rounds(size);
    for (int j = 0; j < rounds && rc == MPI_SUCCESS; j++) {
        int step = 1 << j;
        if (rank < step && rank + step < size)
            rc = pong(comm, c, rank + step, TPB_TAG_TREE, n);
        else if (rank >= step && rank < 2 * step)
            rc = ping_parent(comm, c, rank - step, n, mine);
    }
    return rc;
}

tpb_status_t tpb_clock_sync(MPI_Comm comm, const tpb_clock_t *c, int exchanges,
                            tpb_clock_sample_t *samples)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    tpb_clock_pair_t mine = {0.0, 0.0, 0.0}, *pairs = NULL;
    int nomem = rank == 0 && !(pairs = malloc((size_t)size * sizeof(*pairs)));
    if (MPI_Barrier(comm) != MPI_SUCCESS)
        goto mpi_failed;
    double at0 = tpb_clock_now_us(c);
    if (tree_rounds(comm, c, rank, size, exchanges, &mine) != MPI_SUCCESS)
        goto mpi_failed;
    /* rank 0 without memory for the pairs still takes part (every rank's calls match) */
    if (MPI_Gather(&mine, 3, MPI_DOUBLE, nomem ? NULL : pairs, 3, MPI_DOUBLE, 0, comm) !=
        MPI_SUCCESS)
        goto mpi_failed;
    if (rank == 0 && !nomem)
        tpb_clock_tree_compose(pairs, size, at0, samples);
    free(pairs);
    return nomem ? tpb_err_set(TPB_ERR_NOMEM, "out of memory for %d clock pairs", size) : TPB_OK;
mpi_failed:
    free(pairs);
    return tpb_err_call(TPB_ERR_MPI, "MPI_Send/MPI_Recv", "clock ping-pong", __FILE__, __LINE__);
}

tpb_status_t tpb_clock_sync_serial(MPI_Comm comm, const tpb_clock_t *c, int exchanges,
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
        rc = pong(comm, c, 0, TPB_TAG_PING, exchanges);
    }
    if (rc != MPI_SUCCESS)
        return tpb_err_call(TPB_ERR_MPI, "MPI_Send/MPI_Recv", "clock ping-pong", __FILE__,
                            __LINE__);
    return TPB_OK;
}
