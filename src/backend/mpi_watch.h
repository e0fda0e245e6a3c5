/*
 * mpi_watch.h - the --timeout watchdog of MPI collectives, two ways (--collectives):
 *
 * blocking (default): the collective is the blocking call every peer times
 *   (MPI_Allreduce, MPI_Allgatherv: what OSU, IMB and nccl-tests' MPI mode time);
 *   around it the rank only stores, in a node-shared slot, how many collectives of
 *   its group it has entered. A watchdog thread, which makes no MPI call, notices a
 *   wait that outlasts --timeout, names the ranks of its node that have not
 *   entered that collective (ranks on other nodes cannot be seen without MPI: the
 *   message says so) and ends the process through the action registered with
 *   tpb_watchdog_on_fire (rank 0 writes its record first). Cost on the timed
 *   path: two stores.
 * nonblocking: the non-blocking call (MPI_Iallreduce ...) polled with MPI_Test; a
 *   rank that has waited too long asks the other ranks of its group on a side
 *   communicator whether they have arrived, and names those that have not, on
 *   every node. Open MPI runs other algorithms for these (libnbc): 1.5-2.6x the
 *   blocking call's time for an all-gather-v on this machine (doc/METRICS.md).
 */
#ifndef TPB_MPI_WATCH_H
#define TPB_MPI_WATCH_H

#include <mpi.h>

#include "base/topo.h"
#include "base/tpb_status.h"

#define TPB_WATCH_HOST_LEN TPB_HOST_LEN

/** A group's watchdog state. */
typedef struct {
    MPI_Comm side;                     /**< duplicate of the group for the queries */
    int rank, size;                    /**< in the group */
    char (*hosts)[TPB_WATCH_HOST_LEN]; /**< every group rank's host */
    int *world_ranks;                  /**< every group rank's world rank */
    int *node_slot;                    /**< every group rank's slot on this node (-1: other node) */
    unsigned seq;                      /**< collectives entered so far */
    unsigned gen;                      /**< this process's count of groups opened */
    double timeout_us;                 /**< 0: wait forever */
} tpb_watch_t;

/**
 * Start the process's watchdog (collective over world: the node-shared slots): a thread
 * that checks every 1/4 of timeout_s (at most 1 s) and fires once a blocking collective has
 * been waited in for timeout_s, or once a rank has made no progress (base/stamp.h) for
 * timeout_s + 2 s: this rank stuck anywhere (a cuBLASLt call, a device synchronize, NCCL,
 * an MPI wait for a rank that is stuck), a rank of its node stuck (world rank 0 then names
 * it and seals the record), or every rank of its node waiting that long for a rank
 * elsewhere. Every backend starts it, whatever --comm. No thread with timeout_s = 0. MPI
 * must have been initialised with at least MPI_THREAD_FUNNELED.
 */
tpb_status_t tpb_watchdog_start(MPI_Comm world, double timeout_s);

/** Stop the thread and free the slots (collective over the world of start). */
void tpb_watchdog_stop(void);

/**
 * The action when the watchdog fires (in its thread, while this rank is blocked
 * in MPI or stuck elsewhere): fn(msg, ctx) with the one-line message; it should write what
 * must not be lost and end the process. Without one (or if it returns), the message is
 * printed and the process exits with code 4. A rank other than world rank 0 that fires for
 * want of progress prints its message and waits 2.5 s before it exits, so that rank 0 (which
 * sees the stuck ranks of its node) seals the record "timeout" first.
 */
void tpb_watchdog_on_fire(void (*fn)(const char *msg, void *ctx), void *ctx);

/** The node slot of world rank w (-1: on another node); the next group generation. For
 *  tpb_watch_open. */
int tpb_watchdog_node_slot(int world_rank);
unsigned tpb_watchdog_next_gen(void);

/** Around a blocking collective of group w (what: "all-reduce", ...): two stores. */
void tpb_watch_enter(tpb_watch_t *w, const char *what);
void tpb_watch_leave(tpb_watch_t *w);

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
