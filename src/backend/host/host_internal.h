/*
 * host_internal.h - the host backend's device and communicator, shared by its files
 * only: host_backend.c (the class and the device) and host_comm.c (the communicator:
 * the blocking MPI collectives, and the non-blocking ones of --overlap chunked).
 */
#ifndef TPB_HOST_INTERNAL_H
#define TPB_HOST_INTERNAL_H

#include <mpi.h>

#include "backend/backend.h"
#include "backend/bind.h"
#include "backend/mpi_watch.h"

typedef struct {
    tpb_device_t base; /* first: the device is passed as a tpb_device_t */
    tpb_backend_args_t args;
    tpb_core_share_t share;       /* the cores it may use, beside the node's other ranks */
    tpb_threads_choice_t threads; /* its BLAS threads and what set them */
    double *marks;
    size_t nmarks;
    unsigned color; /* allocations made: each starts at another page offset */
} tpb_host_t;

typedef struct {
    tpb_comm_t base; /* first */
    tpb_host_t *h;
    MPI_Comm comm;
    int rank, size;    /* in the group */
    tpb_watch_t watch; /* --timeout: the node's slots, or a side communicator */
    int blocking;      /* --collectives blocking */
    /* --overlap chunked: the collectives started and not yet waited for */
    MPI_Request req[TPB_MAX_CHUNKS];
    size_t mark[TPB_MAX_CHUNKS]; /* the mark each takes when it completes */
    const char *what[TPB_MAX_CHUNKS];
    int nstarted;
} tpb_host_comm_t;

/** MPI_DOUBLE for fp64, else MPI_FLOAT (the host backend's dtypes). */
static inline MPI_Datatype tpb_host_mpi_type(tpb_dtype_t dt)
{
    return dt == TPB_DTYPE_FP64 ? MPI_DOUBLE : MPI_FLOAT;
}

/** The communicator of a TP group (host_comm.c; the device's comm_open). */
tpb_status_t tpb_host_comm_open(tpb_device_t *dev, MPI_Comm group, tpb_comm_t **comm);

#endif /* TPB_HOST_INTERNAL_H */
