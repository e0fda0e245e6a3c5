/* gpu_device.c - the GPU class's device choice, refusals, open and close, vendor-neutral
 * (backend/gpu/gpu_device.h): the vendor's calls come in its tpb_gpu_class_t. */
#include "backend/gpu/gpu_device.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/bind.h"
#include "base/stamp.h"

tpb_status_t tpb_gpu_check_config(const tpb_gpu_class_t *c, const tpb_backend_cfg_t *cfg)
{
    if (cfg->threads)
        return tpb_err_set(TPB_ERR_INVALID,
                           "--threads sets the BLAS threads of the host "
                           "backend: drop it with --backend %s",
                           c->backend);
    if (cfg->emulate_schedule)
        return tpb_gpu_refuse_schedule(c);
    return TPB_OK;
}

tpb_status_t tpb_gpu_refuse_schedule(const tpb_gpu_class_t *c)
{
    return tpb_err_set(TPB_ERR_UNSUPPORTED,
                       "--emulate-schedule: the %s backend fixes each rank's SM partition "
                       "at start; change speeds during a run on the host backend",
                       c->backend);
}

tpb_status_t tpb_gpu_pick_device(const tpb_gpu_class_t *c, int local_rank, int ndev, const int *map,
                                 int nmap, int *dev)
{
    if (ndev <= 0)
        return tpb_err_set(TPB_ERR_NO_DEVICE,
                           "--backend %s: no GPU is visible to this rank (check "
                           "%s and the job's GPU request, or use --backend host)",
                           c->backend, c->visible_env);
    if (!map || nmap == 0) {
        *dev = local_rank % ndev;
        return TPB_OK;
    }
    if (local_rank >= nmap)
        return tpb_err_set(TPB_ERR_INVALID,
                           "--gpu-map has %d entries but this node runs at least %d ranks: give "
                           "one device per node-local rank",
                           nmap, local_rank + 1);
    if (map[local_rank] < 0 || map[local_rank] >= ndev)
        return tpb_err_set(TPB_ERR_INVALID,
                           "--gpu-map entry %d is device %d but only %d devices are visible "
                           "(0..%d)",
                           local_rank, map[local_rank], ndev, ndev - 1);
    *dev = map[local_rank];
    return TPB_OK;
}

int tpb_gpu_ranks_sharing(const char (*ids)[TPB_GPU_ID_LEN], int n, int me)
{
    int k = 0;
    for (int r = 0; r < n; r++)
        k += strncmp(ids[r], ids[me], TPB_GPU_ID_LEN) == 0;
    return k > 0 ? k : 1;
}

tpb_status_t tpb_gpu_check_sharing(const char *ccl, const char (*ids)[TPB_GPU_ID_LEN], int t,
                                   tpb_comm_kind_t comm)
{
    if (comm != TPB_COMM_CCL)
        return TPB_OK;
    for (int a = 0; a < t; a++)
        for (int b = a + 1; b < t; b++)
            if (ids[a][0] && strncmp(ids[a], ids[b], TPB_GPU_ID_LEN) == 0)
                return tpb_err_set(TPB_ERR_INVALID,
                                   "ranks %d and %d of a TP group share GPU %s: %s needs one "
                                   "GPU per rank, use --comm mpi to share GPUs",
                                   a, b, ids[a], ccl);
    return TPB_OK;
}

tpb_status_t tpb_gpu_check_group(tpb_gpu_comm_t *gc)
{
    const tpb_gpu_class_t *c = gc->gpu->cls;
    char(*ids)[TPB_GPU_ID_LEN] = calloc((size_t)gc->size, TPB_GPU_ID_LEN);
    char me[TPB_GPU_ID_LEN] = {0};
    snprintf(me, sizeof(me), "%s", gc->gpu->id);
    tpb_status_t st = TPB_OK;
    if (!ids)
        st = tpb_err_set(TPB_ERR_NOMEM, "%s backend: out of memory", c->backend);
    else if (MPI_Allgather(me, TPB_GPU_ID_LEN, MPI_CHAR, ids, TPB_GPU_ID_LEN, MPI_CHAR, gc->mpi) !=
             MPI_SUCCESS)
        st = tpb_err_call(TPB_ERR_MPI, "MPI_Allgather", "GPUs of a TP group", __FILE__, __LINE__);
    if (st == TPB_OK)
        st = tpb_gpu_check_sharing(gc->gpu->v->name, (const char(*)[TPB_GPU_ID_LEN])ids, gc->size,
                                   gc->gpu->args.cfg.comm);
    free(ids);
    return st;
}

int tpb_gpu_node_sharing(MPI_Comm world, const char *id)
{
    MPI_Comm node;
    int n = 1, size, rank;
    if (world == MPI_COMM_NULL ||
        MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS)
        return 1;
    MPI_Comm_size(node, &size);
    MPI_Comm_rank(node, &rank);
    char(*all)[TPB_GPU_ID_LEN] = calloc((size_t)size, TPB_GPU_ID_LEN);
    char me[TPB_GPU_ID_LEN] = {0};
    snprintf(me, sizeof(me), "%s", id);
    if (all &&
        MPI_Allgather(me, TPB_GPU_ID_LEN, MPI_CHAR, all, TPB_GPU_ID_LEN, MPI_CHAR, node) ==
            MPI_SUCCESS &&
        me[0])
        n = tpb_gpu_ranks_sharing((const char(*)[TPB_GPU_ID_LEN])all, size, rank);
    free(all);
    MPI_Comm_free(&node);
    return n;
}

tpb_status_t tpb_gpu_open(const tpb_backend_args_t *args, const tpb_gpu_class_t *c,
                          tpb_device_t **out)
{
    const tpb_backend_cfg_t *o = &args->cfg;
    int ndev = c->count(), dev = -1;
    tpb_gpu_t *g = NULL;
    char why[320];
    tpb_status_t st = tpb_gpu_pick_device(c, args->local_rank, ndev, o->gpu_map, o->ngpu_map, &dev);
    if (st == TPB_ERR_NO_DEVICE && (c->driver_problem(why, sizeof(why)), why[0]))
        st = tpb_err_set(TPB_ERR_NO_DEVICE, "--backend %s: %s", c->backend, why);
    if (st == TPB_OK)
        st = c->create(args, dev, &g);
    if (g)
        g->cls = c;
    int sharing = tpb_gpu_node_sharing(args->world, st == TPB_OK ? g->id : "");
    if (st == TPB_OK) {
        g->ranks_on_device = sharing;
        g->isolated = args->local_size > 1 && ndev == 1 && sharing == 1;
        st = c->check(g); /* its own first: a GPU that takes one process says so */
    }
    if (st == TPB_OK && sharing > 1 && o->comm == TPB_COMM_CCL)
        st = tpb_err_set(TPB_ERR_INVALID,
                         "%d ranks of this node drive GPU %s (more ranks per node than GPUs): "
                         "start as many ranks per node as GPUs, or share GPUs with --comm mpi",
                         sharing, g->id);
    if (st == TPB_OK && o->bind == TPB_BIND_GPU)
        st = c->bind_near(dev);
    else if (st == TPB_OK)
        st = tpb_bind_apply(o->bind, args->local_rank, args->local_size);
    if (st == TPB_OK)
        st = c->setup(g);
    /* the watchdog, for every --comm (a rank stuck in the BLAS, a synchronize or the
     * collective library is ended too): collective over the world, every rank whatever st */
    tpb_status_t ws = tpb_watchdog_start(args->world, o->timeout_s);
    st = st == TPB_OK ? ws : st;
    st = tpb_backend_agree(args->world, st); /* one that failed: every rank ends, nothing kept */
    if (st != TPB_OK) {
        tpb_watchdog_stop();
        if (g)
            c->release(g);
        return st;
    }
    *out = &g->base;
    return TPB_OK;
}

void tpb_gpu_close(tpb_gpu_t *g, const tpb_gpu_class_t *c)
{
    tpb_stamp(TPB_PHASE_CLOSE);
    c->release(g); /* its synchronizes still watched */
    tpb_watchdog_stop();
}
