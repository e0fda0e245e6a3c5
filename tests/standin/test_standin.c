/*
 * test_standin.c - the stand-in's own behaviour, against the documented semantics it claims
 * (tests/standin/README.md): number formats at their edges, the time model, device memory
 * that the host cannot touch and that every call range-checks, stream and event ordering,
 * cuBLASLt's results and refusals, NCCL across two processes (a sum, and a mismatch
 * reported), copies without arithmetic (NO_MATH). Check's fork mode: every test a fresh process
 * (nothing of CUDA before the fork).
 */
#include <check.h>
#include <cublasLt.h>
#include <cuda.h>
#include <cuda_runtime.h>
#include <math.h>
#include <nccl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "standin.h"

START_TEST(formats)
{
    ck_assert_uint_eq(tpbsi_float_to_half(1.0f), 0x3c00);
    ck_assert_uint_eq(tpbsi_float_to_half(65504.0f), 0x7bff); /* the largest half */
    ck_assert_uint_eq(tpbsi_float_to_half(65519.0f), 0x7bff); /* below the midpoint */
    ck_assert_uint_eq(tpbsi_float_to_half(65520.0f), 0x7c00); /* rounds to infinity */
    ck_assert_uint_eq(tpbsi_float_to_half(5.9604645e-8f), 1); /* 2^-24, the least subnormal */
    ck_assert_uint_eq(tpbsi_float_to_half(1.0f + 1.0f / 2048), 0x3c00); /* a tie: to even */
    ck_assert(tpbsi_half_to_float(0x7bff) == 65504.0f);
    ck_assert(isnan(tpbsi_half_to_float(0x7e00)));
    ck_assert_uint_eq(tpbsi_float_to_bf16(1.0f + 1.0f / 256), 0x3f80); /* a tie: to even */
    ck_assert_uint_eq(tpbsi_float_to_bf16(1.0f + 3.0f / 256), 0x3f82);
    ck_assert(tpbsi_bf16_to_float(0x3f80) == 1.0f);
    ck_assert(tpbsi_e4m3_to_float(0x7e) == 448.0f); /* the largest e4m3 */
    ck_assert(isnan(tpbsi_e4m3_to_float(0x7f)));
    ck_assert(tpbsi_e4m3_to_float(0x01) == 0x1p-9f);       /* the least subnormal */
    ck_assert_uint_eq(tpbsi_float_to_e4m3(1000.0f), 0x7e); /* saturated */
    ck_assert_uint_eq(tpbsi_float_to_e4m3(-448.0f), 0xfe);
    ck_assert_uint_eq(tpbsi_float_to_e4m3(0x1p-9f), 0x01);
    ck_assert_uint_eq(tpbsi_float_to_e4m3(1.0625f), 0x38); /* 1 + 1/16: a tie, to even (1.0) */
    for (int v = 0; v < 256; v++) { /* every finite e4m3 and e5m2 round-trips */
        float f = tpbsi_e4m3_to_float((uint8_t)v), g = tpbsi_e5m2_to_float((uint8_t)v);
        if (!isnan(f) && v != 0x80)
            ck_assert_uint_eq(tpbsi_float_to_e4m3(f), v);
        if (isfinite(g) && v != 0x80)
            ck_assert_uint_eq(tpbsi_float_to_e5m2(g), v);
    }
    ck_assert(tpbsi_e5m2_to_float(0x3c) == 1.0f);
    ck_assert(tpbsi_round_tf32(1.0f + 0x1p-11f) == 1.0f); /* a tie at 10 bits: to even */
    ck_assert(tpbsi_round_tf32(1.0f + 0x1p-10f) == 1.0f + 0x1p-10f);
}
END_TEST

START_TEST(model)
{
    ck_assert(fabs(tpbsi_gemm_us(2e9, 4.0, 1.0) - 5e5) < 1e-6); /* 2 GFLOP at 4 GFLOP/s */
    ck_assert(fabs(tpbsi_gemm_us(2e9, 4.0, 0.5) - 1e6) < 1e-6); /* half speed: twice */
    ck_assert(fabs(tpbsi_bus_bytes(TPBSI_ALLREDUCE, 1000, 4) - 1500) < 1e-9); /* 2(n-1)/n */
    ck_assert(fabs(tpbsi_bus_bytes(TPBSI_ALLGATHER, 1000, 4) - 750) < 1e-9);  /* (n-1)/n */
    ck_assert(fabs(tpbsi_bus_bytes(TPBSI_BROADCAST, 1000, 1)) < 1e-9);
    ck_assert(fabs(tpbsi_coll_us(1e6, 20.0, 1.0) - 1020.0) < 1e-9);
    ck_assert_uint_eq(tpbsi_sm_split(132, 66, 8, 8), 72);   /* rounded up to 8 */
    ck_assert_uint_eq(tpbsi_sm_split(132, 3, 8, 8), 8);     /* at least 8 */
    ck_assert_uint_eq(tpbsi_sm_split(132, 132, 8, 8), 128); /* whole multiples only */
}
END_TEST

#if !defined(__SANITIZE_ADDRESS__) /* ASan reports the fault itself, as a failure */
/* Host code that dereferences a device pointer faults, as on a GPU. */
START_TEST(device_memory_not_host)
{
    float *d = NULL;
    ck_assert_int_eq(cudaMalloc((void **)&d, 64), cudaSuccess);
    volatile float x = d[0];
    (void)x;
}
END_TEST
#endif

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

/* TPBAL_STANDIN_NO_MATH: a copy to the device takes its bytes over the host link's rate and
 * moves nothing (the device's pages stay untouched); a copy to the host still moves. */
START_TEST(no_math_copies)
{
    setenv("TPBAL_STANDIN_NO_MATH", "1", 1); /* this test's process only (fork mode) */
    setenv("TPBAL_STANDIN_COPY_GBS", "0.1", 1);
    enum { N = 1 << 20 };
    unsigned char *h = malloc(N), *back = malloc(N), *d = NULL;
    ck_assert_ptr_nonnull(h);
    ck_assert_ptr_nonnull(back);
    memset(h, 0xab, N);
    memset(back, 0x11, N);
    ck_assert_int_eq(cudaMalloc((void **)&d, N), cudaSuccess);
    double t0 = now_ms();
    ck_assert_int_eq(cudaMemcpy(d, h, N, cudaMemcpyHostToDevice), cudaSuccess);
    ck_assert_double_ge(now_ms() - t0, 10.0); /* 1 MiB at 0.1 GB/s: 10.5 ms */
    ck_assert_int_eq(cudaMemcpy(back, d, N, cudaMemcpyDeviceToHost), cudaSuccess);
    ck_assert_int_ne(back[0], 0x11);     /* moved to the host, */
    ck_assert_int_ne(back[N - 1], 0xab); /* but nothing had moved to the device */
    ck_assert_int_eq(cudaFree(d), cudaSuccess);
    free(h);
    free(back);
}
END_TEST

START_TEST(ranges_checked)
{
    char *d = NULL, host[256];
    ck_assert_int_eq(cudaMalloc((void **)&d, 128), cudaSuccess);
    long before = tpbsi_complaints();
    ck_assert_int_eq(cudaMemcpy(d, host, 128, cudaMemcpyHostToDevice), cudaSuccess);
    ck_assert_int_eq(cudaMemcpy(d + 64, host, 128, cudaMemcpyHostToDevice),
                     cudaErrorInvalidValue); /* 64 bytes past the end */
    ck_assert_int_eq(cudaMemcpy(host, d, 128, cudaMemcpyHostToDevice),
                     cudaErrorInvalidValue);                         /* the kinds swapped */
    ck_assert_int_eq(cudaMemset(host, 0, 8), cudaErrorInvalidValue); /* not device memory */
    ck_assert_int_eq(cudaFree(d), cudaSuccess);
    ck_assert_int_eq(cudaMemset(d, 0, 8), cudaErrorInvalidValue); /* freed */
    ck_assert_int_eq(cudaFree(d), cudaErrorInvalidValue);         /* twice */
    ck_assert_int_eq(tpbsi_complaints() - before, 6); /* the swapped kinds: both sides */
    size_t freeb = 0, total = 0;
    ck_assert_int_eq(cudaMemGetInfo(&freeb, &total), cudaSuccess);
    ck_assert_int_eq(cudaMalloc((void **)&d, total + 1), cudaErrorMemoryAllocation);
}
END_TEST

/* Free what a test made of cuBLASLt (LeakSanitizer reads the tests too). */
static void release(cublasLtHandle_t lt, cublasLtMatmulDesc_t op, cublasLtMatrixLayout_t la,
                    cublasLtMatrixLayout_t lb, cublasLtMatrixLayout_t lc,
                    cublasLtMatmulPreference_t pref)
{
    if (pref)
        cublasLtMatmulPreferenceDestroy(pref);
    cublasLtMatrixLayoutDestroy(lc);
    cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatmulDescDestroy(op);
    cublasLtDestroy(lt);
}

static int host_fn_ran;
static void CUDART_CB host_fn(void *arg)
{
    host_fn_ran = *(int *)arg;
}

/* A stream runs in order; an event is stamped when its stream reaches it; a stream that
 * waits for an event waits for that record; elapsed time covers the modelled GEMM. */
START_TEST(streams_and_events)
{
    cudaStream_t a, b;
    cudaEvent_t e0, e1, nt;
    ck_assert_int_eq(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking), cudaSuccess);
    ck_assert_int_eq(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking), cudaSuccess);
    ck_assert_int_eq(cudaEventCreate(&e0), cudaSuccess);
    ck_assert_int_eq(cudaEventCreate(&e1), cudaSuccess);
    ck_assert_int_eq(cudaEventCreateWithFlags(&nt, cudaEventDisableTiming), cudaSuccess);
    float ms;
    ck_assert_int_eq(cudaEventElapsedTime(&ms, e0, e1), cudaErrorInvalidResourceHandle);
    ck_assert_int_eq(cudaEventQuery(e0), cudaSuccess); /* never recorded: no work */
    /* a 2 GFLOP GEMM (model: 2e9 / (4 GFLOP/s) = 0.5 s) between two events on stream a */
    long m = 1000, n = 1000, k = 1000;
    float *x, *w, *y, one = 1.0f, zero = 0.0f;
    ck_assert_int_eq(cudaMalloc((void **)&x, m * k * 4), cudaSuccess);
    ck_assert_int_eq(cudaMalloc((void **)&w, k * n * 4), cudaSuccess);
    ck_assert_int_eq(cudaMalloc((void **)&y, m * n * 4), cudaSuccess);
    cublasLtHandle_t lt;
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t la, lb, lc;
    ck_assert_int_eq(cublasLtCreate(&lt), 0);
    ck_assert_int_eq(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F), 0);
    ck_assert_int_eq(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, m, k, m), 0);
    ck_assert_int_eq(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, k, n, k), 0);
    ck_assert_int_eq(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, m, n, m), 0);
    ck_assert_int_eq(cudaMemsetAsync(x, 0, m * k * 4, a), cudaSuccess);
    ck_assert_int_eq(cudaMemsetAsync(w, 0, k * n * 4, a), cudaSuccess);
    ck_assert_int_eq(cudaEventRecord(e0, a), cudaSuccess);
    ck_assert_int_eq(
        cublasLtMatmul(lt, op, &one, x, la, w, lb, &zero, y, lc, y, lc, NULL, NULL, 0, a), 0);
    ck_assert_int_eq(cudaEventRecord(e1, a), cudaSuccess);
    ck_assert_int_eq(cudaStreamQuery(a), cudaErrorNotReady);
    ck_assert_int_eq(cudaEventElapsedTime(&ms, e0, e1), cudaErrorNotReady);
    int token = 7;
    ck_assert_int_eq(cudaStreamWaitEvent(b, e1, 0), cudaSuccess);
    ck_assert_int_eq(cudaLaunchHostFunc(b, host_fn, &token), cudaSuccess);
    ck_assert_int_eq(cudaStreamSynchronize(b), cudaSuccess); /* after e1, so after the GEMM */
    ck_assert_int_eq(host_fn_ran, 7);
    ck_assert_int_eq(cudaEventQuery(e1), cudaSuccess);
    ck_assert_int_eq(cudaEventElapsedTime(&ms, e0, e1), cudaSuccess);
    ck_assert_msg(ms >= 499.0f && ms < 2000.0f, "the 0.5 s GEMM took %g ms", ms);
    ck_assert_int_eq(cudaEventRecord(nt, a), cudaSuccess);
    ck_assert_int_eq(cudaEventSynchronize(nt), cudaSuccess);
    ck_assert_int_eq(cudaEventElapsedTime(&ms, e0, nt), cudaErrorInvalidResourceHandle);
    ck_assert_int_eq(cudaStreamDestroy(a), cudaSuccess);
    ck_assert_int_eq(cudaStreamQuery(a), cudaErrorInvalidResourceHandle);
    release(lt, op, la, lb, lc, NULL);
}
END_TEST

/* cublasLtMatmul computes D as documented for every dtype tpbal runs; the FP8 rules refuse. */
static void one_gemm(cudaDataType_t in, cudaDataType_t out, cublasComputeType_t ct, const void *ha,
                     const void *hb, size_t esz, size_t osz, double *d00)
{
    enum { M = 16, N = 16, K = 32 };
    void *a, *b, *c;
    ck_assert_int_eq(cudaMalloc(&a, K * M * esz), cudaSuccess);
    ck_assert_int_eq(cudaMalloc(&b, K * N * esz), cudaSuccess);
    ck_assert_int_eq(cudaMalloc(&c, M * N * osz), cudaSuccess);
    ck_assert_int_eq(cudaMemcpy(a, ha, K * M * esz, cudaMemcpyHostToDevice), cudaSuccess);
    ck_assert_int_eq(cudaMemcpy(b, hb, K * N * esz, cudaMemcpyHostToDevice), cudaSuccess);
    cublasLtHandle_t lt;
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t la, lb, lc;
    cublasOperation_t t = CUBLAS_OP_T;
    cudaDataType_t scale = ct == CUBLAS_COMPUTE_64F ? CUDA_R_64F : CUDA_R_32F;
    ck_assert_int_eq(cublasLtCreate(&lt), 0);
    ck_assert_int_eq(cublasLtMatmulDescCreate(&op, ct, scale), 0);
    ck_assert_int_eq(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &t, 4), 0);
    ck_assert_int_eq(cublasLtMatrixLayoutCreate(&la, in, K, M, K), 0); /* A^T: the TN form */
    ck_assert_int_eq(cublasLtMatrixLayoutCreate(&lb, in, K, N, K), 0);
    ck_assert_int_eq(cublasLtMatrixLayoutCreate(&lc, out, M, N, M), 0);
    cublasLtMatmulPreference_t pref;
    cublasLtMatmulHeuristicResult_t res;
    int found = 0;
    ck_assert_int_eq(cublasLtMatmulPreferenceCreate(&pref), 0);
    ck_assert_int_eq(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, 1, &res, &found),
                     0);
    ck_assert_int_eq(found, 1);
    double one64 = 1.0, zero64 = 0.0;
    float one = 1.0f, zero = 0.0f;
    int f64 = ct == CUBLAS_COMPUTE_64F;
    ck_assert_int_eq(cublasLtMatmul(lt, op, f64 ? (void *)&one64 : (void *)&one, a, la, b, lb,
                                    f64 ? (void *)&zero64 : (void *)&zero, c, lc, c, lc, &res.algo,
                                    NULL, 0, 0),
                     0);
    unsigned char hc[M * N * 8];
    ck_assert_int_eq(cudaMemcpy(hc, c, M * N * osz, cudaMemcpyDeviceToHost), cudaSuccess);
    release(lt, op, la, lb, lc, pref);
    if (out == CUDA_R_64F)
        *d00 = ((double *)hc)[0];
    else if (out == CUDA_R_32F)
        *d00 = ((float *)hc)[0];
    else if (out == CUDA_R_16F)
        *d00 = tpbsi_half_to_float(((uint16_t *)hc)[0]);
    else
        *d00 = tpbsi_bf16_to_float(((uint16_t *)hc)[0]);
}

START_TEST(matmul_results)
{
    enum { K = 32, E = K * 16 };
    double fa[E], fb[E], want = 0.0, got;
    for (int i = 0; i < E; i++) { /* exactly representable in every type: eighths up to 2 */
        fa[i] = (double)((i * 7) % 17) / 8.0;
        fb[i] = (double)((i * 5) % 13) / 8.0 - 0.75;
    }
    for (int l = 0; l < K; l++) /* D[0][0] = sum_l A^T[l][0] B[l][0] */
        want += fa[l] * fb[l];
    float sa[E], sb[E];
    uint16_t ha[E], hb[E], ba[E], bb[E];
    uint8_t ea[E], eb[E];
    for (int i = 0; i < E; i++) {
        sa[i] = (float)fa[i], sb[i] = (float)fb[i];
        ha[i] = tpbsi_float_to_half(sa[i]), hb[i] = tpbsi_float_to_half(sb[i]);
        ba[i] = tpbsi_float_to_bf16(sa[i]), bb[i] = tpbsi_float_to_bf16(sb[i]);
        ea[i] = tpbsi_float_to_e4m3(sa[i]), eb[i] = tpbsi_float_to_e4m3(sb[i]);
    }
    one_gemm(CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F, fa, fb, 8, 8, &got);
    ck_assert(got == want);
    one_gemm(CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, sa, sb, 4, 4, &got);
    ck_assert(got == want);
    one_gemm(CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, sa, sb, 4, 4, &got);
    ck_assert(got == want);
    one_gemm(CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, ha, hb, 2, 2, &got);
    ck_assert(got == want);
    one_gemm(CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, ba, bb, 2, 2, &got);
    ck_assert(got == want);
    one_gemm(CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, ea, eb, 1, 2, &got);
    ck_assert(got == want);
}
END_TEST

START_TEST(matmul_refusals)
{
    cublasLtHandle_t lt;
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t la, lb, lc;
    cublasLtMatmulPreference_t pref;
    cublasLtMatmulHeuristicResult_t res;
    int found = 1;
    ck_assert_int_eq(cublasLtCreate(&lt), 0);
    ck_assert_int_eq(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F), 0);
    ck_assert_int_eq(cublasLtMatrixLayoutCreate(&la, CUDA_R_8F_E4M3, 32, 16, 32), 0);
    ck_assert_int_eq(cublasLtMatrixLayoutCreate(&lb, CUDA_R_8F_E4M3, 32, 16, 32), 0);
    ck_assert_int_eq(cublasLtMatrixLayoutCreate(&lc, CUDA_R_16BF, 16, 16, 16), 0);
    ck_assert_int_eq(cublasLtMatmulPreferenceCreate(&pref), 0);
    /* FP8 with A not transposed (the NN form): refused; a wrong attribute size too */
    ck_assert_int_eq(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, 1, &res, &found),
                     CUBLAS_STATUS_NOT_SUPPORTED);
    ck_assert_int_eq(found, 0);
    int8_t small = 1;
    ck_assert_int_eq(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &small, 1),
                     CUBLAS_STATUS_INVALID_VALUE);
    cublasOperation_t t = CUBLAS_OP_T;
    ck_assert_int_eq(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &t, 4), 0);
    uint32_t al = 8; /* an FP8 operand aligned to 8 bytes only: no algorithm */
    ck_assert_int_eq(cublasLtMatmulPreferenceSetAttribute(
                         pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &al, sizeof(al)),
                     0);
    ck_assert_int_eq(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, 1, &res, &found),
                     CUBLAS_STATUS_NOT_SUPPORTED);
    al = 16;
    ck_assert_int_eq(cublasLtMatmulPreferenceSetAttribute(
                         pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &al, sizeof(al)),
                     0);
    ck_assert_int_eq(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, 1, &res, &found),
                     0);
    ck_assert_int_eq(found, 1);
    /* the algorithm was chosen for 256-byte B, C, D: a pointer 32 bytes in is refused */
    char *a, *b, *c;
    float one = 1.0f, zero = 0.0f;
    ck_assert_int_eq(cudaMalloc((void **)&a, 4096), cudaSuccess);
    ck_assert_int_eq(cudaMalloc((void **)&b, 4096), cudaSuccess);
    ck_assert_int_eq(cudaMalloc((void **)&c, 4096), cudaSuccess);
    ck_assert_int_eq(
        cublasLtMatmul(lt, op, &one, a, la, b + 32, lb, &zero, c, lc, c, lc, &res.algo, NULL, 0, 0),
        CUBLAS_STATUS_INVALID_VALUE);
    ck_assert_int_eq(
        cublasLtMatmul(lt, op, &one, a, la, b, lb, &zero, c, lc, c, lc, &res.algo, NULL, 0, 0), 0);
    ck_assert_int_eq(cudaDeviceSynchronize(), cudaSuccess);
    release(lt, op, la, lb, lc, pref);
}
END_TEST

/* One rank of a two-process communicator: an all-reduce of count (rank + 1)s, or with
 * count + rank (a mismatch); exits 0 when the sum is right or the mismatch reported. */
static int nccl_rank(ncclUniqueId id, int rank, int mismatch)
{
    float h[1000], *d;
    size_t count = 1000 - (mismatch ? (size_t)rank : 0);
    ncclComm_t comm;
    cudaStream_t s;
    if (cudaSetDevice(rank) != cudaSuccess || cudaStreamCreate(&s) != cudaSuccess ||
        cudaMalloc((void **)&d, sizeof(h)) != cudaSuccess)
        return 10;
    for (int i = 0; i < 1000; i++)
        h[i] = (float)(rank + 1);
    if (cudaMemcpy(d, h, sizeof(h), cudaMemcpyHostToDevice) != cudaSuccess)
        return 11;
    if (ncclCommInitRank(&comm, 2, id, rank) != ncclSuccess)
        return 12;
    if (ncclAllReduce(d, d, count, ncclFloat32, ncclSum, comm, s) != ncclSuccess)
        return 13;
    cudaStreamSynchronize(s);
    ncclResult_t async = ncclSuccess;
    ncclCommGetAsyncError(comm, &async);
    if (mismatch)
        return async == ncclInvalidUsage ? 0 : 14;
    cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
    for (int i = 0; i < 1000; i++)
        if (h[i] != 3.0f)
            return 15;
    return ncclCommDestroy(comm) == ncclSuccess ? 0 : 16;
}

static void nccl_pair(int mismatch)
{
    ncclUniqueId id;
    ck_assert_int_eq(ncclGetUniqueId(&id), ncclSuccess);
    pid_t pid[2];
    for (int r = 0; r < 2; r++)
        if ((pid[r] = fork()) == 0)
            _exit(nccl_rank(id, r, mismatch));
    for (int r = 0; r < 2; r++) {
        int status = 0;
        ck_assert_int_eq(waitpid(pid[r], &status, 0), pid[r]);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "rank %d: status %#x", r,
                      status);
    }
}

START_TEST(nccl_sum)
{
    nccl_pair(0);
}
END_TEST

START_TEST(nccl_mismatch)
{
    nccl_pair(1);
}
END_TEST

/* The driver entry points: found at the version that introduced them, not below it. */
START_TEST(entry_points)
{
    void *fn = NULL;
    enum cudaDriverEntryPointQueryResult q;
    ck_assert_int_eq(cudaGetDriverEntryPointByVersion("cuGreenCtxStreamCreate", &fn, 12040,
                                                      cudaEnableDefault, &q),
                     cudaSuccess);
    ck_assert_int_eq(q, cudaDriverEntryPointVersionNotSufficent);
    ck_assert_ptr_null(fn);
    ck_assert_int_eq(cudaGetDriverEntryPointByVersion("cuGreenCtxStreamCreate", &fn, 12050,
                                                      cudaEnableDefault, &q),
                     cudaSuccess);
    ck_assert_int_eq(q, cudaDriverEntryPointSuccess);
    ck_assert_ptr_nonnull(fn);
    ck_assert_int_eq(
        cudaGetDriverEntryPointByVersion("cuNoSuchThing", &fn, 12050, cudaEnableDefault, &q),
        cudaSuccess);
    ck_assert_int_eq(q, cudaDriverEntryPointSymbolNotFound);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("standin");
    TCase *tc = tcase_create("standin");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, formats);
    tcase_add_test(tc, model);
#if !defined(__SANITIZE_ADDRESS__) /* ASan reports the fault itself, as a failure */
    tcase_add_test_raise_signal(tc, device_memory_not_host, SIGSEGV);
#endif
    tcase_add_test(tc, ranges_checked);
    tcase_add_test(tc, no_math_copies);
    tcase_add_test(tc, streams_and_events);
    tcase_add_test(tc, matmul_results);
    tcase_add_test(tc, matmul_refusals);
    tcase_add_test(tc, nccl_sum);
    tcase_add_test(tc, nccl_mismatch);
    tcase_add_test(tc, entry_points);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    setenv("TPBAL_STANDIN_DEVICES", "2", 1); /* read by each test's process */
    setenv("TPBAL_STANDIN_GFLOPS", "4", 1);
    SRunner *sr = srunner_create(suite());
    srunner_set_fork_status(sr, CK_FORK);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
