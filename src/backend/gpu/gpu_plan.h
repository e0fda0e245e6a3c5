/*
 * gpu_plan.h - what a cached GEMM plan was built for, and the cache of plans
 * (gpu_plans.c): device-free, always built and unit-tested on machines without
 * a GPU. Any vendor's GEMM library plans per shape, dtype and alignment.
 */
#ifndef TPB_GPU_PLAN_H
#define TPB_GPU_PLAN_H

#include <stdint.h>

#include "backend/backend.h"

/** What a cached plan was built for: a GEMM is run with a plan only when every field
 *  matches (the operands' alignments, as the vendor's library sees them, and the SM count
 *  the kernels were sized for: an emulating rank's probe times the whole device with its
 *  own). */
typedef struct {
    long m, n, k, lda, ldb, ldc;
    tpb_dtype_t dtype;
    int align[4];  /**< A' = B, B' = A, C, D = C: the largest power of two <= 256 dividing each */
    int sm_target; /**< the SMs the kernels are sized for, 0: the whole device */
} tpb_gpu_plan_key_t;

/** The key of g run for sm_target SMs (the row-major GEMM seen column-major: A' = B). Pure. */
tpb_gpu_plan_key_t tpb_gpu_plan_key(const tpb_gemm_t *g, int sm_target);

/** 1 if a plan built for a serves b. Pure. */
int tpb_gpu_plan_key_equal(const tpb_gpu_plan_key_t *a, const tpb_gpu_plan_key_t *b);

/** A hash of the key (equal keys, equal hashes): the plan cache's index. Pure. */
uint64_t tpb_gpu_plan_hash(const tpb_gpu_plan_key_t *k);

#endif /* TPB_GPU_PLAN_H */
