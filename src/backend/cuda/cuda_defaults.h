/*
 * cuda_defaults.h - the CUDA backend's defaults and help, shared by the real class
 * and the stub of a build without CUDA (so --help and resolve agree on both).
 */
#ifndef TPB_CUDA_DEFAULTS_H
#define TPB_CUDA_DEFAULTS_H

#include "backend/backend.h"

/** bf16, shards in multiples of 64 (tensor-core friendly), 8192^3; a chunk's GEMM in one
 *  piece (the GPU runs the collectives beside it without being polled). */
#define TPB_CUDA_DEFAULTS                                                                          \
    {                                                                                              \
        .granularity = 64, .dtype = TPB_DTYPE_BF16, .m = 8192, .n = 8192, .k = 8192,               \
        .overlap_polls = 1                                                                         \
    }

/** What --help says of it. */
#define TPB_CUDA_ABOUT "one NVIDIA GPU per rank: cuBLASLt GEMMs, NCCL collectives"
#define TPB_CUDA_DTYPES "fp32 | tf32 | fp16 | bf16 | fp8"

#endif /* TPB_CUDA_DEFAULTS_H */
