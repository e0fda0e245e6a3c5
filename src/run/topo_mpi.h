/*
 * topo_mpi.h - discovering where the ranks run (collective): host names and
 * node-local ranks, into the plain tpb_topo_t of base/topo.h.
 */
#ifndef TPB_TOPO_MPI_H
#define TPB_TOPO_MPI_H

#include <mpi.h>

#include "base/topo.h"

/** Collective over world: host names of every rank and the node-local rank
 *  (MPI_COMM_TYPE_SHARED, right under every launcher). *t is filled only on
 *  success; free it with tpb_topo_free. */
tpb_status_t tpb_topo_discover(MPI_Comm world, tpb_topo_t *t);

#endif /* TPB_TOPO_MPI_H */
