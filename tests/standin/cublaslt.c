/*
 * cublaslt.c - the stand-in's cuBLASLt: handles, matmul descriptors, matrix layouts,
 * preferences, the heuristic and cublasLtMatmul, as the cuBLAS documentation describes them
 * ("cuBLASLt API": attribute sizes are checked, column-major layouts only, host pointer mode,
 * the default epilogue). What runs is gemm.c's host GEMM on the stream's worker; it takes
 * 2mnk FLOP at TPBAL_STANDIN_GFLOPS times the stream's speed (the time model).
 *
 * Refusals follow the documented rules: the data types of "cublasLtMatmul() regular data
 * types" and the FP8 rules (A transposed and B not: "TN"; compute and scale type 32F;
 * 16-byte alignment of pointers, leading dimensions and k). The heuristic returns one
 * algorithm that requires the pointer alignments the preference guaranteed (default 256):
 * cublasLtMatmul refuses pointers less aligned than that.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "lt.h"

#define HANDLE_MAGIC 0x4c54484eu
#define DESC_MAGIC 0x4c54444du
#define LAYOUT_MAGIC 0x4c544c59u
#define PREF_MAGIC 0x4c545052u
#define ALGO_MAGIC 0x7470627369616c67ull

struct cublasLtContext {
    unsigned magic;
    int device;
};

typedef struct {
    unsigned magic;
    cublasComputeType_t compute;
    cudaDataType_t scale;
    int32_t pointer_mode, transa, transb, transc, sm_target;
    uint32_t epilogue;
    int8_t fast_accum;
    const void *scale_ptr[4]; /* A, B, C, D */
} mdesc_t;

typedef struct {
    unsigned magic;
    cudaDataType_t type;
    uint64_t rows, cols;
    int64_t ld;
    int32_t order, batch;
} layout_t;

typedef struct {
    unsigned magic;
    uint64_t max_ws;
    uint32_t align[4]; /* A, B, C, D */
} pref_t;

static long heuristics;

/* ---- handles ---- */

cublasStatus_t cublasLtCreate(cublasLtHandle_t *h)
{
    if (!h)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (cudaFree(NULL) != cudaSuccess) /* the current device's context */
        return CUBLAS_STATUS_NOT_INITIALIZED;
    struct cublasLtContext *c = calloc(1, sizeof(*c));
    if (!c)
        return CUBLAS_STATUS_ALLOC_FAILED;
    c->magic = HANDLE_MAGIC;
    c->device = tpbsi_current_device();
    *h = c;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtDestroy(cublasLtHandle_t h)
{
    if (!h || h->magic != HANDLE_MAGIC)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    h->magic = 0;
    free(h);
    return CUBLAS_STATUS_SUCCESS;
}

size_t cublasLtGetVersion(void)
{
    return CUBLAS_VERSION;
}

size_t cublasLtGetCudartVersion(void)
{
    return CUDART_VERSION;
}

const char *cublasLtGetStatusName(cublasStatus_t s)
{
    switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    default: return "CUBLAS_STATUS_UNKNOWN";
    }
}

const char *cublasLtGetStatusString(cublasStatus_t s)
{
    switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "the operation completed successfully";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "the library was not initialized";
    case CUBLAS_STATUS_ALLOC_FAILED: return "the resource allocation failed";
    case CUBLAS_STATUS_INVALID_VALUE: return "an invalid numeric value was used as an argument";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "an absent device architectural feature is required";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "the GPU program failed to execute";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "the functionality requested is not supported";
    default: return "unknown error";
    }
}

/* ---- attributes: the value's size must be the documented one ---- */

static cublasStatus_t put(void *field, size_t field_size, const void *buf, size_t size)
{
    if (!buf || size != field_size)
        return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(field, buf, size);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *d, cublasComputeType_t compute,
                                        cudaDataType_t scale)
{
    if (!d)
        return CUBLAS_STATUS_INVALID_VALUE;
    mdesc_t *m = calloc(1, sizeof(*m));
    if (!m)
        return CUBLAS_STATUS_ALLOC_FAILED;
    m->magic = DESC_MAGIC;
    m->compute = compute;
    m->scale = scale;
    m->transa = m->transb = m->transc = CUBLAS_OP_N;
    m->pointer_mode = CUBLASLT_POINTER_MODE_HOST;
    m->epilogue = CUBLASLT_EPILOGUE_DEFAULT;
    *d = (cublasLtMatmulDesc_t)m;
    return CUBLAS_STATUS_SUCCESS;
}

static mdesc_t *mdesc(cublasLtMatmulDesc_t d)
{
    mdesc_t *m = (mdesc_t *)d;
    return m && m->magic == DESC_MAGIC ? m : NULL;
}

cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t d)
{
    mdesc_t *m = mdesc(d);
    if (!m)
        return CUBLAS_STATUS_INVALID_VALUE;
    m->magic = 0;
    free(m);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t d,
                                              cublasLtMatmulDescAttributes_t attr, const void *buf,
                                              size_t size)
{
    mdesc_t *m = mdesc(d);
    if (!m)
        return CUBLAS_STATUS_INVALID_VALUE;
    switch (attr) {
    case CUBLASLT_MATMUL_DESC_COMPUTE_TYPE: return put(&m->compute, sizeof(int32_t), buf, size);
    case CUBLASLT_MATMUL_DESC_SCALE_TYPE: return put(&m->scale, sizeof(int32_t), buf, size);
    case CUBLASLT_MATMUL_DESC_POINTER_MODE: return put(&m->pointer_mode, 4, buf, size);
    case CUBLASLT_MATMUL_DESC_TRANSA: return put(&m->transa, 4, buf, size);
    case CUBLASLT_MATMUL_DESC_TRANSB: return put(&m->transb, 4, buf, size);
    case CUBLASLT_MATMUL_DESC_TRANSC: return put(&m->transc, 4, buf, size);
    case CUBLASLT_MATMUL_DESC_EPILOGUE: return put(&m->epilogue, 4, buf, size);
    case CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET: return put(&m->sm_target, 4, buf, size);
    case CUBLASLT_MATMUL_DESC_FAST_ACCUM: return put(&m->fast_accum, 1, buf, size);
    case CUBLASLT_MATMUL_DESC_A_SCALE_POINTER:
        return put(&m->scale_ptr[0], sizeof(void *), buf, size);
    case CUBLASLT_MATMUL_DESC_B_SCALE_POINTER:
        return put(&m->scale_ptr[1], sizeof(void *), buf, size);
    case CUBLASLT_MATMUL_DESC_C_SCALE_POINTER:
        return put(&m->scale_ptr[2], sizeof(void *), buf, size);
    case CUBLASLT_MATMUL_DESC_D_SCALE_POINTER:
        return put(&m->scale_ptr[3], sizeof(void *), buf, size);
    default:
        tpbsi_complain("cublasLtMatmulDescSetAttribute: attribute %d is not modelled", (int)attr);
        return CUBLAS_STATUS_INVALID_VALUE;
    }
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *l, cudaDataType type,
                                          uint64_t rows, uint64_t cols, int64_t ld)
{
    if (!l)
        return CUBLAS_STATUS_INVALID_VALUE;
    layout_t *x = calloc(1, sizeof(*x));
    if (!x)
        return CUBLAS_STATUS_ALLOC_FAILED;
    x->magic = LAYOUT_MAGIC;
    x->type = type;
    x->rows = rows;
    x->cols = cols;
    x->ld = ld;
    x->order = CUBLASLT_ORDER_COL;
    x->batch = 1;
    *l = (cublasLtMatrixLayout_t)x;
    return CUBLAS_STATUS_SUCCESS;
}

static layout_t *layout(cublasLtMatrixLayout_t l)
{
    layout_t *x = (layout_t *)l;
    return x && x->magic == LAYOUT_MAGIC ? x : NULL;
}

cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t l)
{
    layout_t *x = layout(l);
    if (!x)
        return CUBLAS_STATUS_INVALID_VALUE;
    x->magic = 0;
    free(x);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t l,
                                                cublasLtMatrixLayoutAttribute_t attr,
                                                const void *buf, size_t size)
{
    layout_t *x = layout(l);
    if (!x)
        return CUBLAS_STATUS_INVALID_VALUE;
    switch (attr) {
    case CUBLASLT_MATRIX_LAYOUT_ORDER: return put(&x->order, 4, buf, size);
    case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT: return put(&x->batch, 4, buf, size);
    default:
        tpbsi_complain("cublasLtMatrixLayoutSetAttribute: attribute %d is not modelled", (int)attr);
        return CUBLAS_STATUS_INVALID_VALUE;
    }
}

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *p)
{
    if (!p)
        return CUBLAS_STATUS_INVALID_VALUE;
    pref_t *x = calloc(1, sizeof(*x));
    if (!x)
        return CUBLAS_STATUS_ALLOC_FAILED;
    x->magic = PREF_MAGIC;
    for (int i = 0; i < 4; i++)
        x->align[i] = 256; /* the documented default */
    *p = (cublasLtMatmulPreference_t)x;
    return CUBLAS_STATUS_SUCCESS;
}

static pref_t *pref(cublasLtMatmulPreference_t p)
{
    pref_t *x = (pref_t *)p;
    return x && x->magic == PREF_MAGIC ? x : NULL;
}

cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t p)
{
    pref_t *x = pref(p);
    if (!x)
        return CUBLAS_STATUS_INVALID_VALUE;
    x->magic = 0;
    free(x);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t p,
                                                    cublasLtMatmulPreferenceAttributes_t attr,
                                                    const void *buf, size_t size)
{
    pref_t *x = pref(p);
    if (!x)
        return CUBLAS_STATUS_INVALID_VALUE;
    switch (attr) {
    case CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES: return put(&x->max_ws, 8, buf, size);
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES: return put(&x->align[0], 4, buf, size);
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES: return put(&x->align[1], 4, buf, size);
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES: return put(&x->align[2], 4, buf, size);
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES: return put(&x->align[3], 4, buf, size);
    default:
        tpbsi_complain("cublasLtMatmulPreferenceSetAttribute: attribute %d is not modelled",
                       (int)attr);
        return CUBLAS_STATUS_INVALID_VALUE;
    }
}

/* ---- what can run ---- */

static size_t type_size(cudaDataType_t t)
{
    switch (t) {
    case CUDA_R_64F: return 8;
    case CUDA_R_32F: return 4;
    case CUDA_R_16F:
    case CUDA_R_16BF: return 2;
    case CUDA_R_8F_E4M3:
    case CUDA_R_8F_E5M2: return 1;
    default: return 0;
    }
}

static int is_fp8(cudaDataType_t t)
{
    return t == CUDA_R_8F_E4M3 || t == CUDA_R_8F_E5M2;
}

/* The regular data types of cublasLtMatmul and the FP8 ones (C and D of one type). */
static const char *types_ok(const mdesc_t *m, const layout_t *a, const layout_t *b,
                            const layout_t *c, const layout_t *d)
{
    cudaDataType_t ta = a->type, tc = c->type;
    if (c->type != d->type)
        return "C and D of different types";
    if (is_fp8(ta) || is_fp8(b->type)) {
        if (m->compute != CUBLAS_COMPUTE_32F || m->scale != CUDA_R_32F)
            return "FP8 needs compute type CUBLAS_COMPUTE_32F and scale type CUDA_R_32F";
        if (ta == CUDA_R_8F_E5M2 && b->type == CUDA_R_8F_E5M2)
            return "FP8 with both A and B in e5m2";
        if (!is_fp8(ta) || !is_fp8(b->type))
            return "FP8 A with a non-FP8 B";
        if (tc != CUDA_R_16BF && tc != CUDA_R_16F && tc != CUDA_R_32F)
            return "FP8 inputs with a C type other than 16BF, 16F or 32F";
        return NULL;
    }
    if (ta != b->type)
        return "A and B of different types";
    switch (m->compute) {
    case CUBLAS_COMPUTE_64F:
        return ta == CUDA_R_64F && tc == CUDA_R_64F && m->scale == CUDA_R_64F
                   ? NULL
                   : "CUBLAS_COMPUTE_64F needs 64F operands and scale";
    case CUBLAS_COMPUTE_32F_FAST_TF32:
    case CUBLAS_COMPUTE_32F_FAST_16F:
    case CUBLAS_COMPUTE_32F_FAST_16BF:
        return ta == CUDA_R_32F && tc == CUDA_R_32F && m->scale == CUDA_R_32F
                   ? NULL
                   : "a fast 32F compute type needs 32F operands and scale";
    case CUBLAS_COMPUTE_32F:
        if (m->scale != CUDA_R_32F)
            return "CUBLAS_COMPUTE_32F needs scale type CUDA_R_32F";
        if (ta == CUDA_R_32F && tc == CUDA_R_32F)
            return NULL;
        if ((ta == CUDA_R_16F || ta == CUDA_R_16BF) && (tc == ta || tc == CUDA_R_32F))
            return NULL;
        return "an A/B/C type combination not supported with CUBLAS_COMPUTE_32F";
    case CUBLAS_COMPUTE_16F:
        return ta == CUDA_R_16F && tc == CUDA_R_16F ? NULL : "CUBLAS_COMPUTE_16F needs 16F";
    default: return "a compute type the stand-in does not model";
    }
}

/* m, n, k from the layouts and the transposes; NULL or why they do not fit together. */
static const char *shape_of(const mdesc_t *x, const layout_t *a, const layout_t *b,
                            const layout_t *c, const layout_t *d, long *m, long *n, long *k)
{
    const layout_t *all[4] = {a, b, c, d};
    for (int i = 0; i < 4; i++) {
        if (all[i]->order != CUBLASLT_ORDER_COL || all[i]->batch != 1)
            return "a layout that is not column-major or is batched (not modelled)";
        if (all[i]->ld < (int64_t)all[i]->rows || all[i]->ld < 1)
            return "a leading dimension smaller than the rows";
        if (!type_size(all[i]->type))
            return "a data type the stand-in does not model";
    }
    if (x->transc != CUBLAS_OP_N || x->epilogue != CUBLASLT_EPILOGUE_DEFAULT ||
        x->pointer_mode != CUBLASLT_POINTER_MODE_HOST)
        return "TRANSC, an epilogue or a pointer mode the stand-in does not model";
    *m = (long)(x->transa == CUBLAS_OP_N ? a->rows : a->cols);
    *k = (long)(x->transa == CUBLAS_OP_N ? a->cols : a->rows);
    long kb = (long)(x->transb == CUBLAS_OP_N ? b->rows : b->cols);
    *n = (long)(x->transb == CUBLAS_OP_N ? b->cols : b->rows);
    if (kb != *k)
        return "op(A) and op(B) disagree on k";
    if ((long)c->rows != *m || (long)c->cols != *n || d->rows != c->rows || d->cols != c->cols)
        return "C or D is not m x n";
    return NULL;
}

/* The FP8 rules beyond the types: "TN", and 16-byte alignment of k and the leading
 * dimensions (the pointers: the preference's alignments, checked by the caller). */
static const char *fp8_ok(const mdesc_t *x, const layout_t *a, const layout_t *b, const layout_t *c,
                          long k)
{
    if (!is_fp8(a->type))
        return NULL;
    if (x->transa != CUBLAS_OP_T || x->transb != CUBLAS_OP_N)
        return "FP8 needs A transposed and B not (the TN format)";
    if (k % 16 || a->ld % 16 || b->ld % 16 || (c->ld * (int64_t)type_size(c->type)) % 16)
        return "FP8 needs k and the leading dimensions in multiples of 16 bytes";
    return NULL;
}

static const char *check(const mdesc_t *x, const layout_t *a, const layout_t *b, const layout_t *c,
                         const layout_t *d, long *m, long *n, long *k)
{
    const char *why = shape_of(x, a, b, c, d, m, n, k);
    if (!why)
        why = types_ok(x, a, b, c, d);
    if (!why)
        why = fp8_ok(x, a, b, c, *k);
    return why;
}

/* The signature an algorithm is made for: compute type, types and transposes. */
static uint64_t signature(const mdesc_t *x, const layout_t *a, const layout_t *c)
{
    return (uint64_t)x->compute | (uint64_t)a->type << 8 | (uint64_t)c->type << 16 |
           (uint64_t)x->transa << 24 | (uint64_t)x->transb << 28;
}

/* The kernel a problem runs: cuBLASLt picks kernels by types, transposes and shape, so a
 * problem not seen before may need one that is not loaded yet (lazy loading). */
static unsigned long long kernel_key(const mdesc_t *x, const layout_t *a, const layout_t *c, long m,
                                     long n, long k)
{
    unsigned long long h = signature(x, a, c);
    const long dims[3] = {m, n, k};
    for (int i = 0; i < 3; i++)
        h = (h ^ (unsigned long long)dims[i]) * 0x100000001b3ULL;
    return h;
}

cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t h, cublasLtMatmulDesc_t op,
                                              cublasLtMatrixLayout_t ad, cublasLtMatrixLayout_t bd,
                                              cublasLtMatrixLayout_t cd, cublasLtMatrixLayout_t dd,
                                              cublasLtMatmulPreference_t pr, int requested,
                                              cublasLtMatmulHeuristicResult_t results[], int *count)
{
    mdesc_t *x = mdesc(op);
    layout_t *a = layout(ad), *b = layout(bd), *c = layout(cd), *d = layout(dd);
    pref_t *p = pref(pr);
    if (!h || h->magic != HANDLE_MAGIC)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!x || !a || !b || !c || !d || !p || requested <= 0 || !results || !count)
        return CUBLAS_STATUS_INVALID_VALUE;
    *count = 0;
    const tpbsi_config_t *cf = tpbsi_config();
    long nth = __atomic_add_fetch(&heuristics, 1, __ATOMIC_SEQ_CST);
    tpbsi_count(TPBSI_N_HEURISTIC, 1);
    if (cf->faulty && (cf->no_algo == -1 || cf->no_algo == nth))
        return CUBLAS_STATUS_NOT_SUPPORTED;          /* planted: no algorithm for this one */
    while (cf->faulty && cf->heuristic_stall == nth) /* planted: this call never returns */
        pause();
    long m, n, k;
    if (check(x, a, b, c, d, &m, &n, &k))
        return CUBLAS_STATUS_NOT_SUPPORTED;
    /* the heuristic queries the kernels it ranks: their first use loads them */
    if (tpbsi_kernel_load(tpbsi_current_device(), kernel_key(x, a, c, m, n, k),
                          "cublasLtMatmulAlgoGetHeuristic") != 0)
        return CUBLAS_STATUS_EXECUTION_FAILED;
    for (int i = 0; i < 4; i++)
        if (p->align[i] < type_size(i < 2 ? a->type : c->type))
            return CUBLAS_STATUS_NOT_SUPPORTED; /* below an element: nothing runs */
    if (is_fp8(a->type) && (p->align[0] < 16 || p->align[1] < 16))
        return CUBLAS_STATUS_NOT_SUPPORTED;
    memset(&results[0], 0, sizeof(results[0]));
    results[0].algo.data[0] = ALGO_MAGIC;
    results[0].algo.data[1] = signature(x, a, c);
    for (int i = 0; i < 4; i++)
        results[0].algo.data[2 + i] = p->align[i] > 256 ? 256 : p->align[i];
    results[0].workspaceSize = 0;
    results[0].state = CUBLAS_STATUS_SUCCESS;
    results[0].wavesCount = 1.0f;
    *count = 1;
    return CUBLAS_STATUS_SUCCESS;
}

/* ---- the matmul on the stream ---- */

typedef struct {
    tpbsi_op_t op;
    tpbsi_gemm_args_t g;
    const float *scale[3]; /* A, B, D scale storage (device), read when the GEMM runs */
    int device;
} gemm_op_t;

static void gemm_run(tpbsi_op_t *op, tpbsi_stream_t *s)
{
    gemm_op_t *o = (gemm_op_t *)op;
    double *to[3] = {&o->g.scale_a, &o->g.scale_b, &o->g.scale_d};
    for (int i = 0; i < 3; i++)
        *to[i] = o->scale[i] ? *o->scale[i] : 1.0;
    tpbsi_engine_lock(o->device);
    double t0 = tpbsi_now_us();
    if (!tpbsi_config()->no_math && tpbsi_gemm_compute(&o->g) != 0)
        tpbsi_complain("cublasLtMatmul: out of host memory for a %ldx%ldx%ld GEMM", o->g.m, o->g.n,
                       o->g.k);
    const tpbsi_config_t *c = tpbsi_config();
    double flops = 2.0 * (double)o->g.m * (double)o->g.n * (double)o->g.k;
    static long turns[TPBSI_MAX_DEVICES];                      /* under the device's engine lock */
    double slow = turns[o->device]++ % 2 ? c->alternate : 1.0; /* planted: two modes */
    double end = t0 + slow * tpbsi_gemm_us(flops, c->gflops, tpbsi_stream_speed(s));
    tpbsi_count(TPBSI_N_MATMUL, 1);
    tpbsi_count(TPBSI_N_GEMM_OVER, tpbsi_now_us() > end);
    tpbsi_sleep_until(end);
    tpbsi_engine_unlock(o->device);
}

static void gemm_done(tpbsi_op_t *op)
{
    free(op);
}

/* The storage of an operand, its extent checked: (cols - 1) * ld + rows elements. */
static void *operand(const void *p, const layout_t *l, const char *name, uint32_t align)
{
    char what[64];
    snprintf(what, sizeof(what), "cublasLtMatmul %s", name);
    if (align > 1 && (uintptr_t)p % align) {
        tpbsi_complain("%s: %p is less aligned than the %u bytes its algorithm was chosen for "
                       "(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_%s_BYTES)",
                       what, p, align, name);
        return NULL;
    }
    size_t elems = l->rows && l->cols ? (size_t)(l->cols - 1) * (size_t)l->ld + l->rows : 0;
    if (!elems)
        return (void *)p;
    return tpbsi_resolve(p, elems * type_size(l->type), TPBSI_DEVICE, what, NULL);
}

static double scalar(const void *p, cudaDataType_t scale)
{
    return scale == CUDA_R_64F ? *(const double *)p : *(const float *)p;
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t h, cublasLtMatmulDesc_t op, const void *alpha,
                              const void *A, cublasLtMatrixLayout_t ad, const void *B,
                              cublasLtMatrixLayout_t bd, const void *beta, const void *C,
                              cublasLtMatrixLayout_t cd, void *D, cublasLtMatrixLayout_t dd,
                              const cublasLtMatmulAlgo_t *algo, void *workspace, size_t ws,
                              cudaStream_t stream)
{
    mdesc_t *x = mdesc(op);
    layout_t *a = layout(ad), *b = layout(bd), *c = layout(cd), *d = layout(dd);
    if (!h || h->magic != HANDLE_MAGIC)
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!x || !a || !b || !c || !d || !alpha || !beta)
        return CUBLAS_STATUS_INVALID_VALUE;
    long m, n, k;
    const char *why = check(x, a, b, c, d, &m, &n, &k);
    if (why) {
        tpbsi_complain("cublasLtMatmul: %s", why);
        return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    if (algo && (algo->data[0] != ALGO_MAGIC || algo->data[1] != signature(x, a, c))) {
        tpbsi_complain("cublasLtMatmul: the algorithm was not chosen for this operation (types "
                       "or transposes differ from the heuristic's query)");
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    if (C == D && cd != dd && (c->ld != d->ld || c->type != d->type)) {
        tpbsi_complain("cublasLtMatmul: in place (C == D) with different C and D layouts");
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    tpbsi_stream_t *s = tpbsi_stream(stream, "cublasLtMatmul");
    if (!s)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (tpbsi_kernel_load(tpbsi_stream_device(s), kernel_key(x, a, c, m, n, k), "cublasLtMatmul"))
        return CUBLAS_STATUS_EXECUTION_FAILED;
    if (ws && !tpbsi_resolve(workspace, ws, TPBSI_DEVICE, "cublasLtMatmul workspace", NULL))
        return CUBLAS_STATUS_INVALID_VALUE;
    gemm_op_t *o = calloc(1, sizeof(*o));
    if (!o)
        return CUBLAS_STATUS_ALLOC_FAILED;
    uint32_t al[4] = {1, 1, 1, 1};
    for (int i = 0; algo && i < 4; i++)
        al[i] = (uint32_t)algo->data[2 + i];
    o->g.compute = x->compute;
    o->g.transa = x->transa;
    o->g.transb = x->transb;
    o->g.m = m, o->g.n = n, o->g.k = k;
    o->g.alpha = scalar(alpha, x->scale); /* host pointer mode: read now */
    o->g.beta = scalar(beta, x->scale);
    const layout_t *ls[4] = {a, b, c, d};
    tpbsi_mat_t *ms[4] = {&o->g.a, &o->g.b, &o->g.c, &o->g.d};
    const void *ps[4] = {A, B, C, D};
    static const char *const names[4] = {"A", "B", "C", "D"};
    int ok = 1;
    for (int i = 0; i < 4 && ok; i++) {
        *ms[i] =
            (tpbsi_mat_t){ls[i]->type, NULL, (long)ls[i]->rows, (long)ls[i]->cols, (long)ls[i]->ld};
        if (i == 2 && o->g.beta == 0.0)
            continue; /* C is not read */
        ms[i]->p = operand(ps[i], ls[i], names[i], al[i]);
        ok = ms[i]->p != NULL || !ls[i]->rows || !ls[i]->cols;
    }
    const int which[3] = {0, 1, 3};
    for (int i = 0; i < 3 && ok; i++) {
        const void *sp = x->scale_ptr[which[i]];
        if (sp && (which[i] != 3 || is_fp8(d->type)))
            ok = (o->scale[i] = tpbsi_resolve(sp, 4, TPBSI_DEVICE, "cublasLtMatmul scale pointer",
                                              NULL)) != NULL;
    }
    if (!ok) {
        free(o);
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    o->op.run = gemm_run;
    o->op.work = 1;
    tpbsi_count(TPBSI_N_SM_TARGETED,
                x->sm_target > 0 && tpbsi_stream_sms(s) > (unsigned)x->sm_target);
    o->op.done = gemm_done;
    o->device = tpbsi_stream_device(s);
    tpbsi_enqueue(s, &o->op);
    return CUBLAS_STATUS_SUCCESS;
}
