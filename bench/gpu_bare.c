/*
 * gpu_bare.c - a bare cuBLAS loop (cublasGemmEx, no tpbal code) on the same
 * shape and layout as tpbal's compute phase (C = A B^T, B stored n x k), to
 * compare tpbal's GEMM TFLOP/s with in the same run (bench/gpu-check.sh).
 * Usage: bench/gpu_bare M N K fp32|tf32|fp16|bf16 [ITERS]
 * Prints "bare_tflops <value>".
 */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        int rc_ = (int)(x);                                                                        \
        if (rc_ != 0) {                                                                            \
            fprintf(stderr, "gpu_bare: %s failed (%d)\n", #x, rc_);                                \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: gpu_bare M N K fp32|tf32|fp16|bf16 [ITERS]\n");
        return 2;
    }
    long m = atol(argv[1]), n = atol(argv[2]), k = atol(argv[3]);
    int iters = argc > 5 ? atoi(argv[5]) : 50;
    cudaDataType_t t = CUDA_R_32F;
    cublasComputeType_t ct = CUBLAS_COMPUTE_32F;
    size_t es = 4;
    if (strcmp(argv[4], "tf32") == 0)
        ct = CUBLAS_COMPUTE_32F_FAST_TF32;
    else if (strcmp(argv[4], "fp16") == 0)
        t = CUDA_R_16F, es = 2;
    else if (strcmp(argv[4], "bf16") == 0)
        t = CUDA_R_16BF, es = 2;
    else if (strcmp(argv[4], "fp32") != 0) {
        fprintf(stderr, "gpu_bare: dtype %s not supported by cublasGemmEx here\n", argv[4]);
        return 2;
    }
    void *a, *b, *c;
    cublasHandle_t h;
    cudaEvent_t e0, e1;
    CHECK(cudaMalloc(&a, (size_t)m * k * es));
    CHECK(cudaMalloc(&b, (size_t)n * k * es));
    CHECK(cudaMalloc(&c, (size_t)m * n * es));
    CHECK(cudaMemset(a, 0x3c, (size_t)m * k * es)); /* non-zero bytes: no zero fast path */
    CHECK(cudaMemset(b, 0x3c, (size_t)n * k * es));
    CHECK(cublasCreate(&h));
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    float one = 1.0f, zero = 0.0f;
    for (int i = -5; i < iters; i++) {
        if (i == 0)
            CHECK(cudaEventRecord(e0, 0));
        CHECK(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, (int)n, (int)m, (int)k, &one, b, t, (int)k,
                           a, t, (int)k, &zero, c, t, (int)n, ct, CUBLAS_GEMM_DEFAULT));
    }
    CHECK(cudaEventRecord(e1, 0));
    CHECK(cudaEventSynchronize(e1));
    float ms;
    CHECK(cudaEventElapsedTime(&ms, e0, e1));
    double us = 1e3 * ms / iters;
    printf("gpu_bare: %ldx%ldx%ld %s %.1f us/GEMM\n", m, n, k, argv[4], us);
    printf("bare_tflops %.3f\n", 2.0 * m * n * k / (us * 1e6));
    cublasDestroy(h);
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
    return 0;
}
