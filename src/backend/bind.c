/* bind.c - CPU binding, the cores shared by a node's ranks and the topology
 * summary through hwloc. */
#include "backend/bind.h"

#include <hwloc.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

/* Objects of type t on the node (0 if hwloc cannot say). */
static int count(hwloc_topology_t topo, hwloc_obj_type_t t)
{
    int n = hwloc_get_nbobjs_by_type(topo, t);
    return n > 0 ? n : 0;
}

tpb_status_t tpb_bind_apply(tpb_bind_t kind, int local_rank, int local_size)
{
    if (kind != TPB_BIND_CORE && kind != TPB_BIND_NUMA)
        return TPB_OK;
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) != 0 || hwloc_topology_load(topo) != 0)
        return tpb_err_set(TPB_ERR_BACKEND, "--bind: hwloc cannot read this node's topology");
    hwloc_obj_type_t t = kind == TPB_BIND_CORE ? HWLOC_OBJ_CORE : HWLOC_OBJ_NUMANODE;
    const char *what = kind == TPB_BIND_CORE ? "cores" : "NUMA nodes";
    int n = count(topo, t);
    tpb_status_t st = TPB_OK;
    if (n < 1 || (kind == TPB_BIND_CORE && local_size > n)) /* NUMA nodes are shared */
        st = tpb_err_set(TPB_ERR_INVALID,
                         "--bind %s: %d ranks on this node but it has %d %s: use fewer ranks "
                         "per node, --bind numa or --bind none",
                         kind == TPB_BIND_CORE ? "core" : "numa", local_size, n, what);
    hwloc_obj_t obj =
        st == TPB_OK ? hwloc_get_obj_by_type(topo, t, (unsigned)(local_rank % n)) : NULL;
    if (st == TPB_OK && (!obj || hwloc_set_cpubind(topo, obj->cpuset, HWLOC_CPUBIND_PROCESS) != 0))
        st = tpb_err_set(TPB_ERR_BACKEND, "--bind %s: the OS refused to bind rank %d to %s %d",
                         kind == TPB_BIND_CORE ? "core" : "numa", local_rank,
                         kind == TPB_BIND_CORE ? "core" : "NUMA node", local_rank % (n ? n : 1));
    hwloc_topology_destroy(topo);
    return st;
}

void tpb_bind_report(tpb_device_info_t *info)
{
    hwloc_topology_t topo;
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    snprintf(info->cpuset, sizeof(info->cpuset), "?");
    info->packages = info->numa_nodes = info->cores = info->pus = 0;
    if (!set || hwloc_topology_init(&topo) != 0) {
        hwloc_bitmap_free(set);
        return;
    }
    if (hwloc_topology_load(topo) == 0) {
        if (hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) == 0)
            hwloc_bitmap_list_snprintf(info->cpuset, sizeof(info->cpuset), set);
        info->packages = count(topo, HWLOC_OBJ_PACKAGE);
        info->numa_nodes = count(topo, HWLOC_OBJ_NUMANODE);
        info->cores = count(topo, HWLOC_OBJ_CORE);
        info->pus = count(topo, HWLOC_OBJ_PU);
    }
    hwloc_bitmap_free(set);
    hwloc_topology_destroy(topo);
}

/* The cores (hwloc logical index) this process's cpuset touches; 0 if hwloc cannot say. */
static int my_cores(tpb_coreset_t *mine)
{
    hwloc_topology_t topo;
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    int ok = 0;
    if (set && hwloc_topology_init(&topo) == 0) {
        if (hwloc_topology_load(topo) == 0 &&
            hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) == 0) {
            hwloc_obj_t core = NULL;
            while ((core = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_CORE, core)))
                if (hwloc_bitmap_intersects(core->cpuset, set))
                    tpb_coreset_add(mine, (int)core->logical_index);
            ok = tpb_coreset_count(mine) > 0;
        }
        hwloc_topology_destroy(topo);
    }
    hwloc_bitmap_free(set);
    return ok;
}

tpb_status_t tpb_bind_share(MPI_Comm world, tpb_core_share_t *share)
{
    tpb_coreset_t mine;
    tpb_coreset_clear(&mine);
    cpu_set_t cpus;
    if (!my_cores(&mine) && sched_getaffinity(0, sizeof(cpus), &cpus) == 0)
        for (int c = 0; c < CPU_SETSIZE && c < TPB_CORESET_MAX; c++)
            if (CPU_ISSET(c, &cpus))
                tpb_coreset_add(&mine, c);
    MPI_Comm node;
    int me = 0, n = 1;
    if (MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS)
        return tpb_err_set(TPB_ERR_MPI, "MPI_Comm_split_type failed (the ranks of this node)");
    MPI_Comm_rank(node, &me);
    MPI_Comm_size(node, &n);
    tpb_coreset_t *all = malloc((size_t)n * sizeof(*all));
    int have = all != NULL, everyone = 0; /* the node gathers only if every rank has room */
    int rc = MPI_Allreduce(&have, &everyone, 1, MPI_INT, MPI_MIN, node);
    if (rc == MPI_SUCCESS && everyone)
        rc = MPI_Allgather(&mine, (int)sizeof(mine), MPI_BYTE, all, (int)sizeof(mine), MPI_BYTE,
                           node);
    MPI_Comm_free(&node);
    if (rc != MPI_SUCCESS || !everyone) {
        free(all);
        return tpb_err_set(rc != MPI_SUCCESS ? TPB_ERR_MPI : TPB_ERR_NOMEM,
                           "the cores of this node's ranks could not be gathered");
    }
    *share = tpb_core_share(all, n, me);
    free(all);
    return TPB_OK;
}
