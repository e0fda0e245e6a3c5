/*
 * mpi_watch.h - waiting for a non-blocking MPI collective with a watchdog
 * (--timeout): a rank that has waited too long asks the other ranks of its
 * group on a side communicator whether they have arrived, and names those
 * that have not (with their hosts). Nothing is sent while the collective
 * completes in time: the side channel costs nothing in the timed loop.
 */
#ifndef TPB_MPI_WATCH_H
#define TPB_MPI_WATCH_H

#include <mpi.h>

#include "base/tpb_status.h"

#define TPB_WATCH_HOST_LEN 64

/** A group's watchdog state. */
typedef struct {
    MPI_Comm side;                     /**< duplicate of the group for the queries */
    int rank, size;                    /**< in the group */
    char (*hosts)[TPB_WATCH_HOST_LEN]; /**< every group rank's host */
    int *world_ranks;                  /**< every group rank's world rank */
    unsigned seq;                      /**< collectives entered so far */
    double timeout_us;                 /**< 0: wait forever */
} tpb_watch_t;

/** Collective over group: the side communicator and every rank's host and world rank. */
tpb_status_t tpb_watch_open(tpb_watch_t *w, MPI_Comm group, int world_rank, double timeout_s);

void tpb_watch_close(tpb_watch_t *w);

/**
 * Wait for the collective req (what: "all-reduce", ...). TPB_OK when it
 * completes; TPB_ERR_TIMEOUT after timeout_us without completion, with a
 * message naming the ranks (world rank and host) that did not arrive. While
 * waiting, this rank answers the other ranks' queries.
 */
tpb_status_t tpb_watch_wait(tpb_watch_t *w, MPI_Request *req, const char *what);

#endif /* TPB_MPI_WATCH_H */
