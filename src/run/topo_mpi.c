/* topo_mpi.c - host names and node-local ranks, gathered over MPI. */
#include "run/topo_mpi.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

tpb_status_t tpb_topo_discover(MPI_Comm world, tpb_topo_t *t)
{
    tpb_topo_t v;
    memset(&v, 0, sizeof(v));
    MPI_Comm_rank(world, &v.rank);
    MPI_Comm_size(world, &v.size);
    if (gethostname(v.host, sizeof(v.host)) != 0)
        strcpy(v.host, "unknown");
    v.host[sizeof(v.host) - 1] = '\0';
    MPI_Comm node;
    if (MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, v.rank, MPI_INFO_NULL, &node) !=
        MPI_SUCCESS)
        return tpb_err_call(TPB_ERR_MPI, "MPI_Comm_split_type", "node-local ranks", __FILE__,
                            __LINE__);
    MPI_Comm_rank(node, &v.local_rank);
    MPI_Comm_size(node, &v.local_size);
    MPI_Comm_free(&node);
    v.hosts = calloc((size_t)v.size, sizeof(*v.hosts));
    v.host_index = calloc((size_t)v.size, sizeof(int));
    if (!v.hosts || !v.host_index) {
        tpb_topo_free(&v);
        return tpb_err_set(TPB_ERR_NOMEM, "topology: out of memory");
    }
    if (MPI_Allgather(v.host, TPB_HOST_LEN, MPI_CHAR, v.hosts, TPB_HOST_LEN, MPI_CHAR, world) !=
        MPI_SUCCESS) {
        tpb_topo_free(&v);
        return tpb_err_call(TPB_ERR_MPI, "MPI_Allgather", "host names", __FILE__, __LINE__);
    }
    v.nhosts = tpb_topo_index_hosts(v.hosts, v.size, v.host_index);
    *t = v;
    return TPB_OK;
}
