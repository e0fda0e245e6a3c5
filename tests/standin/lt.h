/*
 * lt.h - private to the stand-in's libcublasLt.so.13: a GEMM as cublasLtMatmul hands it to
 * the stream (gemm.c computes it).
 */
#ifndef TPBSI_LT_H
#define TPBSI_LT_H

#include <cublasLt.h>

#include "standin.h"

/** A column-major operand: storage (the stand-in's, resolved), type, rows, cols, ld. */
typedef struct {
    cudaDataType_t type;
    void *p;
    long rows, cols, ld;
} tpbsi_mat_t;

/** One matmul's arguments, as read at the call (alpha and beta in host pointer mode). */
typedef struct {
    cublasComputeType_t compute;
    cublasOperation_t transa, transb;
    long m, n, k;
    double alpha, beta;
    double scale_a, scale_b, scale_d; /**< fp8 scales (1 when not set) */
    tpbsi_mat_t a, b, c, d;
} tpbsi_gemm_args_t;

/** D of g computed on the host; 0, or -1 when out of memory. */
int tpbsi_gemm_compute(const tpbsi_gemm_args_t *g);

#endif /* TPBSI_LT_H */
