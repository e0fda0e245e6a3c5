/*
 * topology.h - discovering where the ranks run (collective): host names and
 * node-local ranks, into the plain tpb_topo_t of base/topo.h.
 */
#ifndef TPB_TOPOLOGY_H
#define TPB_TOPOLOGY_H

#include <mpi.h>

#include "base/topo.h"

/** Collective over world: host names of every rank and the node-local rank
 *  (MPI_COMM_TYPE_SHARED, right under every launcher). *t is filled only on
 *  success; free it with tpb_topo_free. */
tpb_status_t tpb_topology_discover(MPI_Comm world, tpb_topo_t *t);

#endif /* TPB_TOPOLOGY_H */
