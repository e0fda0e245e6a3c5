/*
 * gpu_bare.c - bare loops of the calls tpbal makes on a GPU, with no tpbal code
 * in the timed part, to compare with tpbal in the same run (bench/gpu-check.sh):
 *   gpu_bare gemm M N K DTYPE [ITERS]     cuBLASLt, the same TN layout and the same
 *                                         seeded random inputs as tpbal's compute phase,
 *                                         each GEMM between a pair of events and the
 *                                         median taken, as tpbal's compute phase is timed
 *                                         (the GEMMs queued back to back, all events too)
 *   mpirun -np G gpu_bare OP BYTES [ITERS]   a collective of fp32 on G GPUs, OP one of
 *       allreduce   ncclAllReduce (the row split's)
 *       allgather   ncclAllGather (what an even all-gather could use: NVLS on H100/H200)
 *       bcastgroup  one ncclBroadcast per rank in a group (tpbal's all-gather-v, which
 *                   takes uneven blocks: the gap to allgather is its price)
 * Prints "bare_tflops X" or "bare_OP_us X busbw_gbs Y" (BYTES: the whole result).
 */
#include <cublasLt.h>
#include <cuda_runtime.h>
#include <math.h>
#include <mpi.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/dtype.h"
#include "base/rng.h"
#include "base/stats.h"

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        int rc_ = (int)(x);                                                                        \
        if (rc_ != 0) {                                                                            \
            fprintf(stderr, "gpu_bare: %s failed (%d)\n", #x, rc_);                                \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* rows x cols of tpbal's seeded matrix id, encoded as dt's input type, on the GPU: drawn by
 * every CPU this process may use (bit for bit one thread's tpb_rng_fill and encode; one
 * thread took 5.4 s for 8192^3's two bf16 matrices here, 9 s of the H200 run's bare step). */
static void *seeded(long rows, long cols, unsigned id, double scale, tpb_dtype_t dt)
{
    size_t bytes = (size_t)rows * cols * tpb_dtype_in_size(dt);
    void *h = malloc(bytes), *g = NULL;
    if (!h) {
        fprintf(stderr, "gpu_bare: no memory for a %ldx%ld matrix\n", rows, cols);
        exit(1);
    }
    CHECK(tpb_rng_encode(h, rows, cols, 0, 0, 42, id, scale, dt, 0));
    CHECK(cudaMalloc(&g, bytes));
    CHECK(cudaMemcpy(g, h, bytes, cudaMemcpyHostToDevice));
    free(h);
    return g;
}

static void types(tpb_dtype_t dt, cudaDataType_t *in, cudaDataType_t *out, cublasComputeType_t *ct)
{
    *in = *out = CUDA_R_32F;
    *ct = CUBLAS_COMPUTE_32F;
    if (dt == TPB_DTYPE_TF32)
        *ct = CUBLAS_COMPUTE_32F_FAST_TF32;
    else if (dt == TPB_DTYPE_FP16)
        *in = *out = CUDA_R_16F;
    else if (dt == TPB_DTYPE_BF16)
        *in = *out = CUDA_R_16BF;
    else if (dt == TPB_DTYPE_FP8) {
        *in = CUDA_R_8F_E4M3;
        *out = CUDA_R_16BF;
    }
}

static int gemm(long m, long n, long k, tpb_dtype_t dt, int iters)
{
    cudaDataType_t in, out;
    cublasComputeType_t ct;
    types(dt, &in, &out, &ct);
    void *a = seeded(m, k, 1, 1.0, dt), *b = seeded(n, k, 2, 1.0 / sqrt((double)k), dt), *c, *ws;
    size_t wsb = 32u << 20;
    CHECK(cudaMalloc(&c, (size_t)m * n * tpb_dtype_out_size(dt)));
    CHECK(cudaMalloc(&ws, wsb));
    cublasLtHandle_t lt;
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t la, lb, lc;
    cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    CHECK(cublasLtCreate(&lt));
    CHECK(cublasLtMatmulDescCreate(&op, ct, CUDA_R_32F));
    CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)));
    CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)));
    if (dt == TPB_DTYPE_FP8) { /* as tpbal's compute phase */
        int8_t fast = 1;
        CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast,
                                             sizeof(fast)));
    }
    CHECK(cublasLtMatrixLayoutCreate(&la, in, (uint64_t)k, (uint64_t)n, k));
    CHECK(cublasLtMatrixLayoutCreate(&lb, in, (uint64_t)k, (uint64_t)m, k));
    CHECK(cublasLtMatrixLayoutCreate(&lc, out, (uint64_t)n, (uint64_t)m, n));
    cublasLtMatmulPreference_t pref;
    cublasLtMatmulHeuristicResult_t res;
    int found = 0;
    CHECK(cublasLtMatmulPreferenceCreate(&pref));
    CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsb,
                                               sizeof(wsb)));
    CHECK(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, 1, &res, &found));
    if (!found) {
        fprintf(stderr, "gpu_bare: no cuBLASLt algorithm\n");
        return 1;
    }
    float one = 1.0f, zero = 0.0f;
    cudaEvent_t *e0 = calloc((size_t)iters, sizeof(*e0)), *e1 = calloc((size_t)iters, sizeof(*e1));
    double *t = calloc((size_t)iters, sizeof(*t));
    if (!e0 || !e1 || !t || iters < 1) {
        fprintf(stderr, "gpu_bare: out of memory\n");
        return 1;
    }
    for (int i = 0; i < iters; i++) {
        CHECK(cudaEventCreate(&e0[i]));
        CHECK(cudaEventCreate(&e1[i]));
    }
    for (int i = -5; i < iters; i++) { /* five untimed, then each between its events */
        if (i >= 0)
            CHECK(cudaEventRecord(e0[i], 0));
        CHECK(
            cublasLtMatmul(lt, op, &one, b, la, a, lb, &zero, c, lc, c, lc, &res.algo, ws, wsb, 0));
        if (i >= 0)
            CHECK(cudaEventRecord(e1[i], 0));
    }
    CHECK(cudaEventSynchronize(e1[iters - 1]));
    for (int i = 0; i < iters; i++) {
        float ms;
        CHECK(cudaEventElapsedTime(&ms, e0[i], e1[i]));
        t[i] = 1e3 * ms;
    }
    double us = tpb_stats_median(t, (size_t)iters);
    printf("gpu_bare: gemm %ldx%ldx%ld %s %.1f us/GEMM (median of %d event pairs)\n", m, n, k,
           tpb_dtype_name(dt), us, iters);
    printf("bare_us %.3f\n", us);
    printf("bare_tflops %.3f\n", 2.0 * m * n * k / (us * 1e6));
    free(e0);
    free(e1);
    free(t);
    return 0;
}

enum { OP_ALLREDUCE, OP_ALLGATHER, OP_BCASTGROUP };

/* One collective of `bytes` result bytes of fp32 (count elements; per rank count/size). */
static void coll(int op, float *buf, size_t count, int size, ncclComm_t comm, cudaStream_t s)
{
    size_t per = count / (size_t)size;
    int rank;
    CHECK(ncclCommUserRank(comm, &rank));
    if (op == OP_ALLREDUCE)
        CHECK(ncclAllReduce(buf, buf, count, ncclFloat32, ncclSum, comm, s));
    else if (op == OP_ALLGATHER)
        CHECK(ncclAllGather(buf + (size_t)rank * per, buf, per, ncclFloat32, comm, s));
    else {
        CHECK(ncclGroupStart());
        for (int r = 0; r < size; r++)
            CHECK(ncclBroadcast(buf + (size_t)r * per, buf + (size_t)r * per, per, ncclFloat32, r,
                                comm, s));
        CHECK(ncclGroupEnd());
    }
}

static int collective(int op, const char *name, size_t bytes, int iters)
{
    int rank, size, ndev = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(cudaGetDeviceCount(&ndev));
    CHECK(cudaSetDevice(rank % ndev));
    ncclUniqueId id;
    if (rank == 0)
        CHECK(ncclGetUniqueId(&id));
    MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD);
    ncclComm_t comm;
    CHECK(ncclCommInitRank(&comm, size, id, rank));
    size_t count = bytes / 4 / (size_t)size * (size_t)size;
    float *buf;
    cudaStream_t s;
    cudaEvent_t e0, e1;
    CHECK(cudaMalloc((void **)&buf, count * 4));
    CHECK(cudaMemset(buf, 0, count * 4));
    CHECK(cudaStreamCreate(&s));
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    for (int i = -5; i < iters; i++) {
        if (i == 0)
            CHECK(cudaEventRecord(e0, s));
        coll(op, buf, count, size, comm, s);
    }
    CHECK(cudaEventRecord(e1, s));
    CHECK(cudaEventSynchronize(e1));
    float ms;
    CHECK(cudaEventElapsedTime(&ms, e0, e1));
    double factor = op == OP_ALLREDUCE ? 2.0 * (size - 1) / size : (double)(size - 1) / size;
    double us = 1e3 * ms / iters, bw = (double)count * 4 / (us * 1e3) * factor;
    if (rank == 0)
        printf("bare_%s_us %.1f busbw_gbs %.2f\n", name, us, bw);
    ncclCommDestroy(comm);
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rc = 2;
    tpb_dtype_t dt;
    if (argc >= 6 && strcmp(argv[1], "gemm") == 0 && tpb_dtype_parse(argv[5], &dt) == TPB_OK)
        rc = gemm(atol(argv[2]), atol(argv[3]), atol(argv[4]), dt, argc > 6 ? atoi(argv[6]) : 50);
    else if (argc >= 3) {
        static const char *const ops[] = {"allreduce", "allgather", "bcastgroup"};
        for (int op = 0; op < 3; op++)
            if (strcmp(argv[1], ops[op]) == 0)
                rc = collective(op, ops[op], (size_t)atol(argv[2]), argc > 3 ? atoi(argv[3]) : 50);
    }
    if (rc == 2)
        fprintf(stderr, "usage: gpu_bare gemm M N K DTYPE [ITERS] | gpu_bare "
                        "allreduce|allgather|bcastgroup BYTES [ITERS]\n");
    MPI_Finalize();
    return rc;
}
