/* cuda_blasdl.c - cuBLASLt and cuBLAS loaded when the CUDA backend first needs them (dlopen),
 * not when tpbal starts.
 *
 * Linked directly, libcublasLt.so.13 (541 MB) ran its initializers in every tpbal process of a
 * CUDA build: 85 ms of CPU each (perf stat -e task-clock, /bin/true with it preloaded: 0.36 ->
 * 84.8 ms), paid by host-backend runs and --version alike (doc/TESTING.md). The CUDA runtime
 * (0.3 ms) and NCCL (1.2 ms) stay linked. Each function tpbal calls is defined here under its
 * own name with the header's prototype and forwards to the library's, resolved once per
 * library (pthread_once) by soname, so the loader's search applies as for a linked library:
 * LD_LIBRARY_PATH first (the GPU stand-in, tests/standin), then the binary's RUNPATH (the
 * toolkit's lib64), then the cache. A library or symbol that cannot be found makes each call
 * fail with CUBLAS_STATUS_NOT_INITIALIZED and tpb_cuda_blas_load() say which and why. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "backend/cuda/cuda_internal.h"

#define TPB_STR2(x) #x
#define TPB_STR(x) TPB_STR2(x)

enum { TPB_LIB_LT, TPB_LIB_BLAS, TPB_NLIBS };
static const char *const lib_name[TPB_NLIBS] = {"libcublasLt.so." TPB_STR(CUBLAS_VER_MAJOR),
                                                "libcublas.so." TPB_STR(CUBLAS_VER_MAJOR)};

/* X(LIB, RETURN, NAME, (PARAMETERS), (ARGUMENTS), FAILED): every function tpbal calls */
#define TPB_BLAS_FNS(X)                                                                            \
    X(TPB_LIB_LT, cublasStatus_t, cublasLtCreate, (cublasLtHandle_t * h), (h),                     \
      CUBLAS_STATUS_NOT_INITIALIZED)                                                               \
    X(TPB_LIB_LT, cublasStatus_t, cublasLtDestroy, (cublasLtHandle_t h), (h),                      \
      CUBLAS_STATUS_NOT_INITIALIZED)                                                               \
    X(TPB_LIB_LT, size_t, cublasLtGetVersion, (void), (), 0)                                       \
    X(TPB_LIB_LT, cublasStatus_t, cublasLtMatmul,                                                  \
      (cublasLtHandle_t h, cublasLtMatmulDesc_t op, const void *alpha, const void *a,              \
       cublasLtMatrixLayout_t adesc, const void *b, cublasLtMatrixLayout_t bdesc,                  \
       const void *beta, const void *c, cublasLtMatrixLayout_t cdesc, void *d,                     \
       cublasLtMatrixLayout_t ddesc, const cublasLtMatmulAlgo_t *algo, void *ws, size_t wsz,       \
       cudaStream_t s),                                                                            \
      (h, op, alpha, a, adesc, b, bdesc, beta, c, cdesc, d, ddesc, algo, ws, wsz, s),              \
      CUBLAS_STATUS_NOT_INITIALIZED)                                                               \
    X(TPB_LIB_LT, cublasStatus_t, cublasLtMatmulAlgoGetHeuristic,                                  \
      (cublasLtHandle_t h, cublasLtMatmulDesc_t op, cublasLtMatrixLayout_t adesc,                  \
       cublasLtMatrixLayout_t bdesc, cublasLtMatrixLayout_t cdesc, cublasLtMatrixLayout_t ddesc,   \
       cublasLtMatmulPreference_t pref, int want, cublasLtMatmulHeuristicResult_t res[],           \
       int *got),                                                                                  \
      (h, op, adesc, bdesc, cdesc, ddesc, pref, want, res, got), CUBLAS_STATUS_NOT_INITIALIZED)    \
    X(TPB_LIB_LT, cublasStatus_t, cublasLtMatmulDescCreate,                                        \
      (cublasLtMatmulDesc_t * d, cublasComputeType_t ct, cudaDataType_t st), (d, ct, st),          \
      CUBLAS_STATUS_NOT_INITIALIZED)                                                               \
    X(TPB_LIB_LT, cublasStatus_t, cublasLtMatmulDescDestroy, (cublasLtMatmulDesc_t d), (d),        \
      CUBLAS_STATUS_NOT_INITIALIZED)                                                               \
    X(TPB_LIB_LT, cublasStatus_t, cublasLtMatmulDescSetAttribute,                                  \
      (cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t at, const void *buf, size_t n),      \
      (d, at, buf, n), CUBLAS_STATUS_NOT_INITIALIZED)                                              \
    X(TPB_LIB_LT, cublasStatus_t, cublasLtMatmulPreferenceCreate,                                  \
      (cublasLtMatmulPreference_t * p), (p), CUBLAS_STATUS_NOT_INITIALIZED)                        \
    X(TPB_LIB_LT, cublasStatus_t, cublasLtMatmulPreferenceDestroy, (cublasLtMatmulPreference_t p), \
      (p), CUBLAS_STATUS_NOT_INITIALIZED)                                                          \
    X(TPB_LIB_LT, cublasStatus_t, cublasLtMatmulPreferenceSetAttribute,                            \
      (cublasLtMatmulPreference_t p, cublasLtMatmulPreferenceAttributes_t at, const void *buf,     \
       size_t n),                                                                                  \
      (p, at, buf, n), CUBLAS_STATUS_NOT_INITIALIZED)                                              \
    X(TPB_LIB_LT, cublasStatus_t, cublasLtMatrixLayoutCreate,                                      \
      (cublasLtMatrixLayout_t * l, cudaDataType t, uint64_t rows, uint64_t cols, int64_t ld),      \
      (l, t, rows, cols, ld), CUBLAS_STATUS_NOT_INITIALIZED)                                       \
    X(TPB_LIB_LT, cublasStatus_t, cublasLtMatrixLayoutDestroy, (cublasLtMatrixLayout_t l), (l),    \
      CUBLAS_STATUS_NOT_INITIALIZED)                                                               \
    X(TPB_LIB_BLAS, const char *, cublasGetStatusString, (cublasStatus_t s), (s),                  \
      "cuBLAS could not be loaded (tpbal --backend cuda names why)")

/* the resolved functions, written once under each library's pthread_once */
#define TPB_BLAS_PTR(lib, ret, name, params, args, failed) ret(*name) params;
static struct {
    TPB_BLAS_FNS(TPB_BLAS_PTR)
} fn;
static char why[TPB_NLIBS][512]; /* "" once loaded and every symbol found */
static pthread_once_t once[TPB_NLIBS] = {PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT};

/* the library's own handle; never closed (its state outlives any one backend) */
static void *open_lib(int lib)
{
    void *h = dlopen(lib_name[lib], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(why[lib], sizeof(why[lib]), "cannot load %s: %s", lib_name[lib],
                 e ? e : "not found");
    }
    return h;
}

#define TPB_BLAS_RESOLVE(lib, ret, name, params, args, failed)                                     \
    if ((lib) == want && h && !why[want][0]) {                                                     \
        void *sym = dlsym(h, #name); /* POSIX: a function's address as a void * */                 \
        memcpy(&fn.name, &sym, sizeof(sym));                                                       \
        if (!sym)                                                                                  \
            snprintf(why[want], sizeof(why[want]), "%s lacks %s", lib_name[want], #name);          \
    }

static void load(int want)
{
    void *h = open_lib(want);
    TPB_BLAS_FNS(TPB_BLAS_RESOLVE)
}
static void load_lt(void)
{
    load(TPB_LIB_LT);
}
static void load_blas(void)
{
    load(TPB_LIB_BLAS);
}

/* 1 if lib is loaded with every function (loading it at the first call) */
static int ready(int lib)
{
    pthread_once(&once[lib], lib == TPB_LIB_LT ? load_lt : load_blas);
    return !why[lib][0];
}

#define TPB_BLAS_FORWARD(lib, ret, name, params, args, failed)                                     \
    ret name params                                                                                \
    {                                                                                              \
        return ready(lib) ? fn.name args : (failed);                                               \
    }
TPB_BLAS_FNS(TPB_BLAS_FORWARD)

tpb_status_t tpb_cuda_blas_load(void)
{
    for (int lib = 0; lib < TPB_NLIBS; lib++)
        if (!ready(lib))
            return tpb_err_set(TPB_ERR_UNSUPPORTED,
                               "%s: the CUDA backend needs cuBLASLt and cuBLAS %d (the CUDA "
                               "toolkit's lib64 on the loader's path)",
                               why[lib], CUBLAS_VER_MAJOR);
    return TPB_OK;
}
