/*
 * topo.h - where each rank runs: host names, node-local ranks (right under
 * mpirun, srun and sbatch alike: MPI_COMM_TYPE_SHARED, never launcher
 * variables) and the host index of every rank, for the trace and metadata.
 */
#ifndef TPB_TOPO_H
#define TPB_TOPO_H

#include "base/tpb_status.h"

#define TPB_HOST_LEN 72 /**< a host name: HOST_NAME_MAX (64) and its NUL, rounded up */

typedef struct {
    int rank, size;             /**< in the world */
    int local_rank, local_size; /**< within this node */
    char host[TPB_HOST_LEN];
    char (*hosts)[TPB_HOST_LEN]; /**< host of every rank (size entries) */
    int *host_index;             /**< index of every rank's host in first-seen order */
    int nhosts;
} tpb_topo_t;

void tpb_topo_free(tpb_topo_t *t);

/**
 * Host index of every rank from their host names, in first-seen order (pure).
 * Returns the number of distinct hosts.
 */
int tpb_topo_index_hosts(char (*hosts)[TPB_HOST_LEN], int n, int *index);

#endif /* TPB_TOPO_H */
