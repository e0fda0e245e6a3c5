/*
 * bind.h - binding a rank to CPU cores with hwloc (--bind core|numa), the
 * cpuset a rank actually got, and a summary of the node's topology. Shared by
 * the backends (the CUDA backend adds --bind gpu: the cores near its GPU).
 */
#ifndef TPB_BIND_H
#define TPB_BIND_H

#include <stddef.h>

#include "backend/backend.h"
#include "base/cores.h"

/**
 * Bind this process for kind (TPB_BIND_CORE: core local_rank, or
 * TPB_BIND_NUMA: NUMA node local_rank mod nodes, shared; TPB_BIND_NONE does
 * nothing). More local ranks than cores with TPB_BIND_CORE is an error that says
 * what was asked and what exists; so is a binding the OS refuses.
 */
tpb_status_t tpb_bind_apply(tpb_bind_t kind, int local_rank, int local_size);

/**
 * How this process shares cores with the other ranks of its node: the cores
 * (hwloc) its cpuset touches, gathered over the node's ranks (tpb_core_share).
 * Collective over world: every rank calls it, whatever failed before. A rank
 * whose cores hwloc cannot read counts every CPU it may run on as a core.
 */
tpb_status_t tpb_bind_share(MPI_Comm world, tpb_core_share_t *share);

/** Fill info's cpuset (the cores this process may run on, "0-3,8") and its node's
 *  packages, NUMA nodes, cores and PUs ("?" and zeros if hwloc cannot say). */
void tpb_bind_report(tpb_device_info_t *info);

#endif /* TPB_BIND_H */
