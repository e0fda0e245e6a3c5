/*
 * gpu_device.h - the GPU class apart from its vendor: which device a rank drives, the
 * refusals every GPU backend makes, and opening and closing a device in one order for every
 * vendor (choose it, open it, count the node's ranks on it, check it, bind near it, set up
 * its streams, start the --timeout watchdog for every --comm, agree). A vendor supplies its
 * calls in a tpb_gpu_class_t (the CUDA backend's: cuda_backend.c).
 */
#ifndef TPB_GPU_DEVICE_H
#define TPB_GPU_DEVICE_H

#include "backend/gpu/gpu.h"

/** A GPU vendor's device lifecycle: what tpb_gpu_open calls, in this order. */
typedef struct tpb_gpu_class {
    const char *backend;     /**< its --backend name, in the refusals */
    const char *visible_env; /**< the variable that limits the visible devices */
    int (*count)(void);      /**< the devices this rank sees (0: none, or no driver) */
    /** why none can be used, after "--backend NAME: " in the refusal ("": no reason) */
    void (*driver_problem)(char *why, size_t cap);
    /** Its state for device dev, the device opened and g->device and g->id set (*g as soon
     *  as it is allocated: released on any later failure; g->cls is set by the caller). */
    tpb_status_t (*create)(const tpb_backend_args_t *args, int dev, tpb_gpu_t **g);
    tpb_status_t (*check)(tpb_gpu_t *g); /**< its refusals, once ranks_on_device is known */
    tpb_status_t (*bind_near)(int dev);  /**< --bind gpu: to the cores near it */
    tpb_status_t (*setup)(tpb_gpu_t *g); /**< streams, its BLAS, partitions */
    void (*release)(tpb_gpu_t *g);       /**< everything of it (not the watchdog) */
} tpb_gpu_class_t;

/** Open this rank's device (collective over args->world: every rank agrees; one that
 *  failed ends every rank, nothing kept). *out only on success. */
tpb_status_t tpb_gpu_open(const tpb_backend_args_t *args, const tpb_gpu_class_t *c,
                          tpb_device_t **out);

/** Close it: release what the vendor made, then stop the watchdog (collective). */
void tpb_gpu_close(tpb_gpu_t *g, const tpb_gpu_class_t *c);

/** What no GPU backend takes, before a device is chosen: --threads (the host's BLAS
 *  threads) and --emulate-schedule (an SM partition is fixed at start). */
tpb_status_t tpb_gpu_check_config(const tpb_gpu_class_t *c, const tpb_backend_cfg_t *cfg);

/** The refusal of a change of speed during a run (the partition is made once). */
tpb_status_t tpb_gpu_refuse_schedule(const tpb_gpu_class_t *c);

/** The device of node-local rank local_rank among ndev (--gpu-map: map[nmap]). Pure. */
tpb_status_t tpb_gpu_pick_device(const tpb_gpu_class_t *c, int local_rank, int ndev, const int *map,
                                 int nmap, int *dev);

/** How many of the n ids equal ids[me] (ranks driving the same GPU). At least 1. Pure. */
int tpb_gpu_ranks_sharing(const char (*ids)[TPB_GPU_ID_LEN], int n, int me);

/** A TP group's t ids: two ranks on one GPU refused under --comm ccl (the collective
 *  library, named ccl in the refusal, needs one GPU per rank). Pure. */
tpb_status_t tpb_gpu_check_sharing(const char *ccl, const char (*ids)[TPB_GPU_ID_LEN], int t,
                                   tpb_comm_kind_t comm);

/** A TP group's GPUs (collective over its communicator): tpb_gpu_check_sharing over every
 *  rank's id (the library named as its vendor table names it). */
tpb_status_t tpb_gpu_check_group(tpb_gpu_comm_t *gc);

/** How many ranks of this node drive the GPU named id ("" for none; 1 where unknown). GPUs
 *  are told apart by identity, never by ordinal: with a per-task visible-devices variable
 *  every rank calls its GPU 0. Collective over the node: every rank calls it, failed or not. */
int tpb_gpu_node_sharing(MPI_Comm world, const char *id);

#endif /* TPB_GPU_DEVICE_H */
