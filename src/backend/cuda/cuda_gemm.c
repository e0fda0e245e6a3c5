/*
 * cuda_gemm.c - the compute phase on the GPU with cuBLASLt. Row-major
 * C[m x n] = A[m x k] B^T (B stored n x k) is, in cuBLASLt's column-major
 * terms, C^T[n x m] = op_T(B) op_N(A): the "TN" layout that fp8 requires, so
 * every dtype takes the same path. Plans (descriptors and the heuristic's
 * algorithm) are cached per shape.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/cuda_internal.h"
#include "base/stamp.h"

typedef struct {
    cudaDataType_t in, out, scale;
    cublasComputeType_t compute;
} gemm_types_t;

static gemm_types_t types_of(tpb_dtype_t dt)
{
    switch (dt) {
    case TPB_DTYPE_FP64:
        return (gemm_types_t){CUDA_R_64F, CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F};
    case TPB_DTYPE_TF32:
        return (gemm_types_t){CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32};
    case TPB_DTYPE_FP16:
        return (gemm_types_t){CUDA_R_16F, CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F};
    case TPB_DTYPE_BF16:
        return (gemm_types_t){CUDA_R_16BF, CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F};
    case TPB_DTYPE_FP8:
        return (gemm_types_t){CUDA_R_8F_E4M3, CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F};
    case TPB_DTYPE_FP32: break;
    }
    return (gemm_types_t){CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F};
}

/* One launch of g with plan p; warm: the plan's first launch (its kernels loaded), which
 * must leave Y as it was: an accumulating GEMM (beta 1) runs it with alpha 0. */
static tpb_status_t launch(tpb_cuda_t *be, const tpb_gemm_t *g, const tpb_cuda_plan_t *p,
                           cudaStream_t stream, int warm)
{
    double one64 = 1.0, zero64 = 0.0;
    float one32 = 1.0f, zero32 = 0.0f;
    int f64 = g->dtype == TPB_DTYPE_FP64, keep = warm && g->accumulate;
    void *alpha = f64 ? (void *)(keep ? &zero64 : &one64) : (void *)(keep ? &zero32 : &one32);
    TPB_CUBLAS_RET(cublasLtMatmul(be->lt, p->op, alpha, g->b, p->a, g->a, p->b,
                                  g->accumulate ? (f64 ? (void *)&one64 : (void *)&one32)
                                                : (f64 ? (void *)&zero64 : (void *)&zero32),
                                  g->c, p->c, g->c, p->c, &p->algo, be->workspace,
                                  TPB_CUDA_WORKSPACE, stream));
    return TPB_OK;
}

void tpb_cuda_plan_destroy(void *plan)
{
    tpb_cuda_plan_t *p = plan;
    if (!p->valid)
        return;
    cublasLtMatmulDescDestroy(p->op);
    cublasLtMatrixLayoutDestroy(p->a);
    cublasLtMatrixLayoutDestroy(p->b);
    cublasLtMatrixLayoutDestroy(p->c);
    p->valid = 0;
}

static tpb_status_t plan_build(tpb_cuda_t *be, const tpb_gemm_t *g, int sm_target,
                               tpb_cuda_plan_t *p)
{
    gemm_types_t t = types_of(g->dtype);
    cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    memset(p, 0, sizeof(*p));
    TPB_CUBLAS_RET(cublasLtMatmulDescCreate(&p->op, t.compute, t.scale));
    p->valid = 1; /* from here plan_destroy frees what exists */
    TPB_CUBLAS_RET(
        cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)));
    TPB_CUBLAS_RET(
        cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)));
    if (sm_target > 0) /* kernels sized for the SMs the green context grants */
        TPB_CUBLAS_RET(cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET,
                                                      &sm_target, sizeof(int)));
    if (g->dtype == TPB_DTYPE_FP8) { /* what every fp8 benchmark and framework runs with */
        int8_t fast = 1;
        TPB_CUBLAS_RET(cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast,
                                                      sizeof(fast)));
    }
    /* column-major views: A' = B (k x n, ld ldb), B' = A (k x m, ld lda), C' = C (n x m) */
    TPB_CUBLAS_RET(cublasLtMatrixLayoutCreate(&p->a, t.in, (uint64_t)g->k, (uint64_t)g->n, g->ldb));
    TPB_CUBLAS_RET(cublasLtMatrixLayoutCreate(&p->b, t.in, (uint64_t)g->k, (uint64_t)g->m, g->lda));
    TPB_CUBLAS_RET(
        cublasLtMatrixLayoutCreate(&p->c, t.out, (uint64_t)g->n, (uint64_t)g->m, g->ldc));
    cublasLtMatmulPreference_t pref;
    TPB_CUBLAS_RET(cublasLtMatmulPreferenceCreate(&pref));
    size_t ws = TPB_CUDA_WORKSPACE;
    cublasLtMatmulHeuristicResult_t res;
    int found = 0;
    cublasStatus_t s = cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
    /* the real pointers' alignments: the col + all-reduce split writes C at an offset */
    tpb_gpu_plan_key_t key = tpb_gpu_plan_key(g, sm_target);
    const cublasLtMatmulPreferenceAttributes_t apref[4] = {
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
    for (int i = 0; i < 4 && s == CUBLAS_STATUS_SUCCESS; i++) {
        uint32_t v = (uint32_t)key.align[i];
        s = cublasLtMatmulPreferenceSetAttribute(pref, apref[i], &v, sizeof(v));
    }
    tpb_stamp_call("cublasLtMatmulAlgoGetHeuristic"); /* may load kernels: may block */
    if (s == CUBLAS_STATUS_SUCCESS)
        s = cublasLtMatmulAlgoGetHeuristic(be->lt, p->op, p->a, p->b, p->c, p->c, pref, 1, &res,
                                           &found);
    tpb_stamp_call(NULL);
    cublasLtMatmulPreferenceDestroy(pref);
    if (s != CUBLAS_STATUS_SUCCESS || found == 0)
        return tpb_err_set(TPB_ERR_INVALID, /* at the layer's untimed GEMM: the config is skipped */
                           "cuBLASLt has no algorithm for a %s GEMM of %ldx%ldx%ld on %s (%s): "
                           "try another --dtype or a multiple-of-16 shape",
                           tpb_dtype_name(g->dtype), g->m, g->n, g->k, be->prop.name,
                           s == CUBLAS_STATUS_SUCCESS ? "no heuristic result"
                                                      : cublasGetStatusString(s));
    p->algo = res.algo;
    return TPB_OK;
}

/* The plan of g for sm_target SMs (0: the whole device), from the cache or built. Building
 * a plan (the heuristic) and its first launch may load kernels (lazy module loading), and a
 * load waits until the device's streams are idle: a GEMM stream held by the start gate never
 * is, while this thread, the only one that lets the gate go, waits in the load (the first
 * H200 run's weighted configs hung so). So the gate is let go before anything is built, and
 * the new plan is launched once on the stream given, so that timed launches find it loaded.
 * Callers warm their plans outside the marks (the layer's untimed GEMM, the calibration's):
 * this is the fallback that keeps a plan first met inside them from hanging. */
static tpb_status_t plan_get(tpb_cuda_t *be, const tpb_gemm_t *g, int sm_target,
                             cudaStream_t stream, tpb_cuda_plan_t **out)
{
    tpb_gpu_plan_key_t key = tpb_gpu_plan_key(g, sm_target);
    if ((*out = tpb_gpu_plans_find(&be->gpu.plans, &key)))
        return TPB_OK;
    void *slot = NULL;
    TPB_CHECK_RET(tpb_gpu_plans_reserve(&be->gpu.plans, &slot));
    tpb_cuda_plan_t *p = slot;
    tpb_cuda_gate_release(be); /* never build or load a kernel behind a held gate */
    tpb_status_t st = plan_build(be, g, sm_target, p);
    if (st == TPB_OK)
        st = launch(be, g, p, stream, 1); /* the first launch, ungated, Y kept */
    if (st != TPB_OK) {
        tpb_cuda_plan_destroy(p);
        return st;
    }
    tpb_gpu_plans_add(&be->gpu.plans, &key);
    *out = p;
    return TPB_OK;
}

tpb_status_t tpb_cuda_gemm_on(tpb_cuda_t *be, const tpb_gemm_t *g, int sm_target,
                              cudaStream_t stream)
{
    tpb_cuda_plan_t *p;
    TPB_CHECK_RET(plan_get(be, g, sm_target, stream, &p));
    return launch(be, g, p, stream, 0);
}

/* The SMs a GEMM is planned for (cuBLASLt's SM count target; 0: every SM): a green
 * partition's, or, beside NCCL's collectives (--overlap chunked), all but TPB_CUDA_COMM_SMS:
 * NCCL runs a CTA a channel on SMs of their own, and a GEMM planned for every SM leaves the
 * collective to wait for its waves (Flux, TransformerEngine's userbuffers reserve them too). */
static int sm_target_of(const tpb_cuda_t *be, const tpb_gemm_t *g)
{
    if (be->green.sm_granted)
        return be->green.sm_granted;
    int all = be->prop.multiProcessorCount;
    if (g->beside_comm && be->gpu.args.cfg.comm == TPB_COMM_CCL && all > 2 * TPB_CUDA_COMM_SMS)
        return all - TPB_CUDA_COMM_SMS;
    return 0;
}

/* The GEMM as the compute phase runs it: on the GEMM stream, for the SMs it has. */
static tpb_status_t run_one(tpb_cuda_t *be, const tpb_gemm_t *g)
{
    return tpb_cuda_gemm_on(be, g, sm_target_of(be, g), be->gemm_stream);
}

/* ---- the padding of a green partition (set by cuda_emulate.c's probe) ---- */

static int pad_slot(const tpb_cuda_pads_t *p, const tpb_gemm_t *g)
{
    for (int i = 0; i < p->count; i++)
        if (p->m[i] == g->m && p->n[i] == g->n && p->k[i] == g->k)
            return i;
    return -1;
}

double tpb_cuda_pad_of(const tpb_cuda_t *be, const tpb_gemm_t *g)
{
    if (!be->green.ctx || g->accumulate)
        return 0.0;
    int i = pad_slot(&be->pads, g);
    return i >= 0 ? be->pads.pad[i] : be->pads.last;
}

/* Keep pad for g's shape (the oldest entry makes room). */
void tpb_cuda_pad_set(tpb_cuda_pads_t *p, const tpb_gemm_t *g, double pad)
{
    int i = pad_slot(p, g);
    if (i < 0) {
        i = p->count < TPB_CUDA_PADS ? p->count++ : p->next;
        p->next = (i + 1) % TPB_CUDA_PADS;
        p->m[i] = g->m, p->n[i] = g->n, p->k[i] = g->k;
    }
    p->pad[i] = pad;
    p->last = pad;
}

tpb_status_t tpb_cuda_gemm(tpb_cuda_t *be, const tpb_gemm_t *g)
{
    /* the repeat fallback of --emulate-speed: the same GEMM again, plus part of one */
    if (g->accumulate && (be->repeat_full > 1 || be->repeat_frac > 0.0))
        return tpb_err_set(TPB_ERR_INVALID, /* at the layer's untimed GEMM: the config is skipped */
                           "--emulate-speed here repeats GEMMs (no green contexts), which a "
                           "block-sparse row shard accumulates: drop --cost-profile or "
                           "--emulate-speed");
    /* a green partition's padding (cuda_emulate.c): more of the same work, never on a GEMM
     * that accumulates (it would add its product twice) */
    double pad = tpb_cuda_pad_of(be, g);
    int full = be->repeat_full + (int)pad;
    double frac = be->repeat_frac + (pad - (double)(int)pad);
    for (int i = 0; i < full; i++)
        TPB_CHECK_RET(run_one(be, g));
    long align = tpb_dtype_align(g->dtype); /* fp8 GEMMs need widths in multiples of 16 */
    long extra = (long)(frac * (double)g->n) / align * align;
    if (extra > 0) {
        tpb_gemm_t part = *g;
        part.n = extra;
        TPB_CHECK_RET(run_one(be, &part));
    }
    return TPB_OK;
}

/* ---- the start gate of the compute phase ----
 * When the GEMM stream reaches c0 before the host has launched the matmul, the c0 event
 * runs at once and c1 - c0 includes the launch time. So the stream is first made to wait
 * for a value in mapped host memory (every time: a stream busy at c0 may drain before the
 * launch); c0 and the GEMM are enqueued behind that wait, and only then is the value
 * written: the GPU runs c0 and the GEMM back to back. Every wait for the GPU, and a plan's
 * first launch, releases a gate still held (never a stream left waiting). */

typedef CUresult (*pfn_wait_value)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);

void tpb_cuda_gate_init(tpb_cuda_t *be)
{
    void *host = NULL, *dev = NULL;
    be->wait_value = tpb_cuda_driver_symbol("cuStreamWaitValue32");
    if (!be->wait_value || cudaHostAlloc(&host, 64, cudaHostAllocMapped) != cudaSuccess)
        goto off;
    if (cudaHostGetDevicePointer(&dev, host, 0) != cudaSuccess) {
        cudaFreeHost(host);
        goto off;
    }
    be->gate_host = host;
    *be->gate_host = 0;
    be->gate_dev = (unsigned long long)(uintptr_t)dev;
    return;
off:
    be->wait_value = NULL;
}

tpb_status_t tpb_cuda_gate_arm_on(tpb_cuda_t *be, cudaStream_t stream)
{
    if (!be->wait_value || be->gate_armed)
        return TPB_OK; /* no gate, or already held */
    unsigned next = be->gate_seq + 1;
    CUresult r = ((pfn_wait_value)be->wait_value)((CUstream)stream, (CUdeviceptr)be->gate_dev, next,
                                                  CU_STREAM_WAIT_VALUE_GEQ);
    if (r != CUDA_SUCCESS) { /* unsupported here: run ungated from now on */
        be->wait_value = NULL;
        return TPB_OK;
    }
    be->gate_seq = next;
    be->gate_armed = 1;
    return TPB_OK;
}

tpb_status_t tpb_cuda_gate_arm(tpb_cuda_t *be)
{
    tpb_cuda_green_enter(be);
    tpb_status_t st = tpb_cuda_gate_arm_on(be, be->gemm_stream);
    tpb_cuda_green_leave(be);
    return st;
}

void tpb_cuda_gate_release(tpb_cuda_t *be)
{
    if (!be->gate_armed)
        return;
    __atomic_store_n(be->gate_host, be->gate_seq, __ATOMIC_SEQ_CST);
    be->gate_armed = 0;
}
