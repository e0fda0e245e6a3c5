/*
 * bind.h - binding a rank to CPU cores with hwloc (--bind core|numa), the
 * cpuset a rank actually got, and a summary of the node's topology. Shared by
 * the backends (the CUDA backend adds --bind gpu: the cores near its GPU).
 */
#ifndef TPB_BIND_H
#define TPB_BIND_H

#include <stddef.h>

#include "base/tpb_status.h"
#include "base/tpb_types.h"

/** The node's topology as hwloc sees it. */
typedef struct {
    int packages, numa_nodes, cores, pus;
} tpb_node_topo_t;

/**
 * Bind this process for kind (TPB_BIND_CORE: core local_rank, or
 * TPB_BIND_NUMA: NUMA node local_rank mod nodes, shared; TPB_BIND_NONE does
 * nothing). More local ranks than cores with TPB_BIND_CORE is an error that says
 * what was asked and what exists; so is a binding the OS refuses.
 */
tpb_status_t tpb_bind_apply(tpb_bind_t kind, int local_rank, int local_size);

/** The cores this process may run on, as a list ("0-3,8"), and the node's topology. */
void tpb_bind_report(char *cpuset, size_t cap, tpb_node_topo_t *node);

#endif /* TPB_BIND_H */
