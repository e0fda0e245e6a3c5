/*
 * host_internal.h - the host backend's state, shared by host_backend.c and
 * host_overlap.c (the non-blocking collectives of --overlap chunked) only.
 */
#ifndef TPB_HOST_INTERNAL_H
#define TPB_HOST_INTERNAL_H

#include <mpi.h>

#include "backend/backend.h"
#include "backend/bind.h"
#include "backend/mpi_watch.h"

struct tpb_backend {
    tpb_backend_args_t args;
    tpb_core_share_t share;       /* the cores it may use, beside the node's other ranks */
    tpb_threads_choice_t threads; /* its BLAS threads and what set them */
    double *marks;
    size_t nmarks;
    unsigned color; /* allocations made: each starts at another page offset */
};

struct tpb_comm {
    tpb_backend_t *be;
    MPI_Comm comm;
    int rank, size;    /* in the group */
    tpb_watch_t watch; /* --timeout: the node's slots, or a side communicator */
    int blocking;      /* --collectives blocking */
    /* --overlap chunked: the collectives started and not yet waited for */
    MPI_Request req[TPB_MAX_CHUNKS];
    size_t mark[TPB_MAX_CHUNKS]; /* the mark each takes when it completes */
    const char *what[TPB_MAX_CHUNKS];
    int nstarted;
};

/** MPI_DOUBLE for fp64, else MPI_FLOAT (the host backend's dtypes). */
static inline MPI_Datatype tpb_host_mpi_type(tpb_dtype_t dt)
{
    return dt == TPB_DTYPE_FP64 ? MPI_DOUBLE : MPI_FLOAT;
}

tpb_status_t tpb_host_coll_start(tpb_comm_t *comm, const void *send, void *recv, size_t count,
                                 const size_t *counts, const size_t *displs, tpb_dtype_t dt,
                                 size_t mark);
tpb_status_t tpb_host_coll_progress(tpb_comm_t *comm);
tpb_status_t tpb_host_coll_wait(tpb_comm_t *comm);

#endif /* TPB_HOST_INTERNAL_H */
