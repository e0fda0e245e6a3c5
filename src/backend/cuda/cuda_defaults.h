/*
 * cuda_defaults.h - the CUDA backend's defaults and help, shared by the real class
 * and the stub of a build without CUDA (so --help and resolve agree on both).
 */
#ifndef TPB_CUDA_DEFAULTS_H
#define TPB_CUDA_DEFAULTS_H

#include <math.h>
#include <stdio.h>

#include "backend/backend.h"

/** bf16, shards in multiples of 64 (tensor-core friendly), 8192^3; a chunk's GEMM in one
 *  piece (the GPU runs the collectives beside it without being polled). */
#define TPB_CUDA_DEFAULTS                                                                          \
    {                                                                                              \
        .granularity = 64, .dtype = TPB_DTYPE_BF16, .m = 8192, .n = 8192, .k = 8192,               \
        .busbw_gbs = 100.0, .alpha_us = 20.0, .overlap_polls = 1                                   \
    }

/** Its capability table: NCCL's all-reduce, and its reduce-scatter and all-gather of equal
 *  blocks (an all-gather of a weighted split's unequal ones is grouped broadcasts, planned as
 *  equal-block layers are not); MPI through pinned host buffers, blocks of any size. The stub
 *  of a build without CUDA holds it too (its check_config refuses every config first). */
static const tpb_backend_cap_t tpb_cuda_caps[] = {
    {TPB_COLL_ALLREDUCE, 1u << TPB_COMM_CCL, TPB_CAP_DTYPES_ALL, 1, "ncclAllReduce"},
    {TPB_COLL_ALLGATHER, 1u << TPB_COMM_CCL, TPB_CAP_DTYPES_ALL, 0, "ncclAllGather"},
    {TPB_COLL_REDUCE_SCATTER, 1u << TPB_COMM_CCL, TPB_CAP_DTYPES_ALL, 0, "ncclReduceScatter"},
    {TPB_COLL_ALLREDUCE, 1u << TPB_COMM_MPI, TPB_CAP_DTYPES_ALL, 1, "MPI_Allreduce"},
    {TPB_COLL_ALLGATHER, 1u << TPB_COMM_MPI, TPB_CAP_DTYPES_ALL, 1, "MPI_Allgatherv"},
    {TPB_COLL_REDUCE_SCATTER, 1u << TPB_COMM_MPI, TPB_CAP_DTYPES_ALL, 1, "MPI_Reduce_scatter"},
};
#define TPB_CUDA_CAPS                                                                              \
    .caps = tpb_cuda_caps, .ncaps = (int)(sizeof(tpb_cuda_caps) / sizeof(tpb_cuda_caps[0]))

/** What --help says of it. */
#define TPB_CUDA_ABOUT "one NVIDIA GPU per rank: cuBLASLt GEMMs, NCCL collectives"
#define TPB_CUDA_DTYPES "fp32 | tf32 | fp16 | bf16 | fp8"

/** --dry-run's rate: none (a GPU's rate is known once it runs; the class opens no
 *  device for a dry run). */
static inline double tpb_cuda_rate_guess(const tpb_backend_cfg_t *cfg, char *basis, size_t cap)
{
    (void)cfg;
    snprintf(basis, cap, "a GPU's rate is known only once it runs");
    return NAN;
}

/** --dry-run's memory: none (a GPU's free memory is known once the device is opened). */
static inline double tpb_cuda_mem_guess(int local_size)
{
    (void)local_size;
    return NAN;
}

#endif /* TPB_CUDA_DEFAULTS_H */
