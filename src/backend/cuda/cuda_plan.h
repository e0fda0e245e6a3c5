/*
 * cuda_plan.h - the device-free decisions of the CUDA backend: which GPU a
 * rank drives, whether a TP group can use NCCL, how many SMs to ask for when
 * emulating a slower GPU, and the repeat-based fallback. Pure functions,
 * always built and unit-tested on machines without a GPU.
 */
#ifndef TPB_CUDA_PLAN_H
#define TPB_CUDA_PLAN_H

#include <stddef.h>

#include "base/tpb_status.h"
#include "base/tpb_types.h"

/**
 * Device for a node-local rank: map[local_rank] when --gpu-map is given (it
 * must cover every local rank and name visible devices), else
 * local_rank modulo ndev (with one visible device - CUDA_VISIBLE_DEVICES or
 * Slurm's per-task binding - that device). TPB_ERR_NO_DEVICE if ndev == 0.
 */
tpb_status_t tpb_cuda_pick_device(int local_rank, int ndev, const int *map, int nmap, int *dev);

/**
 * How many of the node's local_size ranks drive device dev under the same rule
 * as tpb_cuda_pick_device (they share its memory). At least 1.
 */
int tpb_cuda_ranks_on_device(int local_size, int ndev, const int *map, int nmap, int dev);

/**
 * NCCL needs one GPU per rank of a communicator. Given the host index and
 * device of each of the t ranks of a group, return TPB_ERR_INVALID (naming
 * the two ranks and suggesting --comm mpi) if two share a GPU and comm is NCCL.
 */
tpb_status_t tpb_cuda_check_sharing(const int *host_index, const int *device, int t,
                                    tpb_comm_kind_t comm);

/**
 * SMs to request for speed factor f of a device with sm_total SMs when
 * partitions come in multiples of step (at least min_sm): the multiple of step
 * nearest to f * sm_total, clamped to [min_sm, sm_total].
 */
int tpb_cuda_sm_request(int sm_total, double f, int min_sm, int step);

/**
 * Repeat-based emulation of speed factor f for a GEMM with n output columns:
 * the GEMM runs `full` times in all, plus one extra GEMM over extra_cols
 * columns, so that the work is about n / f columns.
 */
void tpb_cuda_repeat_plan(double f, long n, int *full, long *extra_cols);

/** 1 if all counts[t] are equal (ncclAllGather applies), else 0 (all-gather-v). */
int tpb_cuda_blocks_equal(const size_t *counts, int t);

#endif /* TPB_CUDA_PLAN_H */
