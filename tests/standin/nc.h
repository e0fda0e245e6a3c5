/*
 * nc.h - private to the stand-in's libnccl.so.2: a communicator, the shared memory its ranks
 * meet in, and one stream operation (a collective, or the collectives of one group).
 *
 * The ranks of a communicator are processes of one node. ncclGetUniqueId creates a POSIX
 * shared memory object whose name the id carries; each rank maps it, claims its rank, and
 * the name is unlinked once all have joined. An operation is: every rank posts what it
 * calls (kind, type, count, operation, root of each collective), waits until all have
 * posted, compares (a difference is reported and the operation does nothing: on a GPU it
 * hangs or corrupts memory), then moves the data through one slot a rank, in chunks, with a
 * barrier after each write and each read.
 */
#ifndef TPBSI_NC_H
#define TPBSI_NC_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <nccl.h>

#include "standin.h"

#define TPBSI_SLOT (1u << 20) /* bytes of data a rank writes per round */
#define TPBSI_MAX_GROUP 64    /* collectives in one group call */

typedef enum { NC_ALLREDUCE, NC_ALLGATHER, NC_REDUCESCATTER, NC_BROADCAST } nc_kind_t;

/** What a rank calls, as posted for the others to compare. */
typedef struct {
    int32_t kind, dtype, redop, root;
    uint64_t count;
} nc_desc_t;

/** A rank's part of the shared header. */
typedef struct {
    _Atomic uint32_t seq;   /**< the last operation it posted (a futex word) */
    _Atomic uint32_t phase; /**< barriers passed (a futex word) */
    _Atomic int32_t failed; /**< it hit an error: its peers stop waiting */
    int32_t pid, nops;
    double posted_us; /**< when it posted (CLOCK_MONOTONIC is the node's) */
    char bus[32];     /**< its GPU's PCI bus id */
    nc_desc_t ops[TPBSI_MAX_GROUP];
} nc_rank_t;

typedef struct {
    uint32_t magic;
    _Atomic int32_t nranks; /**< set by the first rank to join */
    _Atomic int32_t joined;
    _Atomic int32_t claimed[TPBSI_MAX_RANKS];
    nc_rank_t rank[TPBSI_MAX_RANKS];
} nc_shm_t;

#define TPBSI_SHM_DATA ((sizeof(nc_shm_t) + 4095) / 4096 * 4096)
#define TPBSI_SHM_SIZE (TPBSI_SHM_DATA + (size_t)TPBSI_MAX_RANKS * TPBSI_SLOT)

struct ncclComm {
    unsigned magic;
    int rank, nranks, device, blocking;
    nc_shm_t *shm;
    char name[NCCL_UNIQUE_ID_BYTES];
    int ready;                  /**< every rank joined and the devices checked */
    atomic_int abort;           /**< ncclCommAbort: waits end at once */
    _Atomic ncclResult_t async; /**< an asynchronous error, sticky */
    atomic_int in_progress;     /**< a non-blocking call returned ncclInProgress */
    atomic_int finalizing;
    atomic_long pending; /**< operations queued and not finished */
    uint32_t seq;        /**< operations posted (in stream order: one worker) */
    /* the operation in flight (coll.c) */
    const void *cur; /**< its collectives (nc_sub_t) */
    int ncur, unposted, barriers;
    double start; /**< the last rank's post: the model's start */
};

/** One collective with its storage resolved. */
typedef struct {
    nc_desc_t d;
    const char *send;
    char *recv;
} nc_sub_t;

/** Run n collectives of comm as one operation (on a stream's worker); the result is set as
 *  the communicator's asynchronous error when it is not ncclSuccess. plant: 1 an async error,
 *  2 never completes (until aborted), 3 completes with the first element received wrong. */
void tpbsi_nc_run(struct ncclComm *comm, const nc_sub_t *subs, int n, int plant);

/** Size of an NCCL data type (0: not one). */
size_t tpbsi_nc_size(ncclDataType_t t);

/** Set comm's last error text (ncclGetLastError) and complain with it. */
void tpbsi_nc_fail(struct ncclComm *comm, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif /* TPBSI_NC_H */
