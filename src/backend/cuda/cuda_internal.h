/*
 * cuda_internal.h - state shared by the files of the CUDA backend, and the one
 * family of checking macros that translates CUDA, cuBLAS and NCCL codes into
 * tpb_status_t at the call site (each call evaluated exactly once).
 */
#ifndef TPB_CUDA_INTERNAL_H
#define TPB_CUDA_INTERNAL_H

#include <cublasLt.h>
#include <cuda.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include "backend/backend.h"
#include "backend/cuda/cuda_plan.h"
#include "backend/gpu/gpu.h"
#include "backend/gpu/gpu_device.h"

#define TPB_CUDA_WORKSPACE (32u << 20)

/** A cuBLASLt plan for one GEMM shape (in the generic layer's cache, by its key). */
typedef struct {
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t a, b, c;
    cublasLtMatmulAlgo_t algo;
    int valid;
} tpb_cuda_plan_t;

/** Green-context SM partition (driver API reached through cudaGetDriverEntryPoint). */
typedef struct {
    void *ctx;        /* CUgreenCtx */
    void *cu;         /* the same as a CUcontext (cuCtxFromGreenCtx) */
    void *push, *pop; /* cuCtxPushCurrent / cuCtxPopCurrent */
    int sm_granted;
    char how[64]; /* "green-context", "repeat (...)" or "none" */
} tpb_cuda_green_t;

/** SMs left to NCCL beside a chunked GEMM (--overlap chunked; cuda_gemm.c). */
#define TPB_CUDA_COMM_SMS 16

/** The padding that brings a green partition's GEMMs to the factor asked (cuda_emulate.c):
 *  pad[i] more of the GEMM's work (as repeats and a part), measured per GEMM shape. */
#define TPB_CUDA_PADS 16
typedef struct {
    long m[TPB_CUDA_PADS], n[TPB_CUDA_PADS], k[TPB_CUDA_PADS];
    double pad[TPB_CUDA_PADS];
    int count, next;
    double last; /* the latest probe's: for shapes never probed (chunk pieces, blocks) */
} tpb_cuda_pads_t;

typedef struct tpb_cuda tpb_cuda_t;

/** One rank's GPU (its tpb_device_t): the generic layer's part, then CUDA's. */
struct tpb_cuda {
    tpb_gpu_t gpu; /* first: passed as a tpb_gpu_t and a tpb_device_t */
    /* the start gate: c0 and the GEMM are enqueued before the idle stream may run them */
    void *wait_value;             /* cuStreamWaitValue32, or NULL: no gate */
    volatile unsigned *gate_host; /* pinned, mapped: the value the stream waits for */
    unsigned long long gate_dev;  /* its device address (CUdeviceptr) */
    unsigned gate_seq;
    int gate_armed;
    struct cudaDeviceProp prop;
    cudaStream_t gemm_stream; /* in the green context when emulating */
    cudaStream_t comm_stream; /* primary context (== gemm_stream without emulation) */
    cudaStream_t own_gemm;    /* --overlap chunked without emulation: the GEMM stream */
    cublasLtHandle_t lt;
    void *workspace;
    int repeat_full;    /* repeat fallback: GEMMs per compute phase */
    double repeat_frac; /* and the fraction of columns of one more */
    tpb_cuda_green_t green;
    tpb_cuda_pads_t pads;
};

/** The CUDA backend of a generic GPU device. */
static inline tpb_cuda_t *tpb_cuda_of(tpb_gpu_t *g)
{
    return (tpb_cuda_t *)g;
}

/** The CUDA runtime's, cuBLASLt's and NCCL's calls behind the generic GPU layer
 *  (cuda_vendor.c). */
extern const tpb_gpu_vendor_t tpb_cuda_vendor;

/** The CUDA version (1000 x major + 10 x minor) at which cuda_green.c asks the
 *  runtime for a driver symbol; 0 if the symbol is not one it uses. */
int tpb_cuda_driver_symbol_version(const char *name);

/** A driver API function by name, asked at its own version (NULL if unavailable). */
void *tpb_cuda_driver_symbol(const char *name);

/** Set up the start gate of the compute phase (cuda_gemm.c; off if unavailable). */
void tpb_cuda_gate_init(tpb_cuda_t *be);

/** Hold the idle GEMM stream before the compute phase's first mark (a no-op when busy). */
tpb_status_t tpb_cuda_gate_arm(tpb_cuda_t *be);
/** The same on another stream (its context current): the emulation probe's event pairs. */
tpb_status_t tpb_cuda_gate_arm_on(tpb_cuda_t *be, cudaStream_t stream);

/** Let the held GEMM stream go: the GEMM is enqueued behind the mark. */
void tpb_cuda_gate_release(tpb_cuda_t *be);

/* ---- cuda_device.c ---- */
/** Number of CUDA devices visible to this process (0 without a GPU or a driver). */
int tpb_cuda_device_count(void);

/** Why no GPU can be used although a driver is installed (a driver too old for this
 *  runtime), in why[cap]; "" if there is no such reason. */
void tpb_cuda_driver_problem(char *why, size_t cap);

/** Select device dev, create its context, read its properties and UUID into be. A device
 *  in an exclusive or prohibited compute mode held by another process, or busy, is
 *  TPB_ERR_INVALID / TPB_ERR_NO_DEVICE with what to do. */
tpb_status_t tpb_cuda_open_device(tpb_cuda_t *be, int dev);

/** The opened device can run the config: its sharing with the compute mode and --comm, and
 *  the dtype on its compute capability. */
tpb_status_t tpb_cuda_check_device(const tpb_cuda_t *be);

/** cuBLASLt and cuBLAS loaded (cuda_blasdl.c: at the first call, not at tpbal's start), every
 *  function tpbal calls found; else TPB_ERR_UNSUPPORTED naming the library or symbol and why. */
tpb_status_t tpb_cuda_blas_load(void);

/** --bind gpu: this process onto the cores near GPU dev (hwloc's cudart helper). */
tpb_status_t tpb_cuda_bind_near_gpu(int dev);

/** The NUMA node of the GPU at PCI bus id bus (-1 if the system does not say). */
int tpb_cuda_gpu_numa_node(const char *bus);

/* ---- error translation (cuda_err.c): the call is evaluated once ---- */
tpb_status_t tpb_cuda_err(cudaError_t e, const char *call, const char *file, int line);
tpb_status_t tpb_cublas_err(cublasStatus_t e, const char *call, const char *file, int line);
tpb_status_t tpb_nccl_err(ncclResult_t e, const char *call, const char *file, int line);

#define TPB_CUDA_RET(call)                                                                         \
    do {                                                                                           \
        cudaError_t tpb_e_ = (call);                                                               \
        if (tpb_e_ != cudaSuccess)                                                                 \
            return tpb_cuda_err(tpb_e_, #call, __FILE__, __LINE__);                                \
    } while (0)
#define TPB_CUBLAS_RET(call)                                                                       \
    do {                                                                                           \
        cublasStatus_t tpb_e_ = (call);                                                            \
        if (tpb_e_ != CUBLAS_STATUS_SUCCESS)                                                       \
            return tpb_cublas_err(tpb_e_, #call, __FILE__, __LINE__);                              \
    } while (0)
#define TPB_NCCL_RET(call)                                                                         \
    do {                                                                                           \
        ncclResult_t tpb_e_ = (call);                                                              \
        if (tpb_e_ != ncclSuccess && tpb_e_ != ncclInProgress)                                     \
            return tpb_nccl_err(tpb_e_, #call, __FILE__, __LINE__);                                \
    } while (0)

/* ---- cuda_gemm.c ---- */
tpb_status_t tpb_cuda_gemm(tpb_cuda_t *be, const tpb_gemm_t *g);
/** One launch of g's plan for sm_target SMs (0: the whole device) on stream, the plan built
 *  (and its first launch made) when new. */
tpb_status_t tpb_cuda_gemm_on(tpb_cuda_t *be, const tpb_gemm_t *g, int sm_target,
                              cudaStream_t stream);
/** The extra work that pads g on a green partition (0: none): g's shape's, else the latest
 *  probe's; never for a GEMM that accumulates (cuda_gemm.c). */
double tpb_cuda_pad_of(const tpb_cuda_t *be, const tpb_gemm_t *g);
/** Keep pad for g's shape (the probe's, cuda_emulate.c; the oldest entry makes room). */
void tpb_cuda_pad_set(tpb_cuda_pads_t *p, const tpb_gemm_t *g, double pad);

/** The slowdown the emulation achieves on g: full-device time / emulated time. */
tpb_status_t tpb_cuda_emulation_probe(tpb_cuda_t *be, const tpb_gemm_t *g, double *achieved);
/** Destroy one cached plan (a tpb_cuda_plan_t). */
void tpb_cuda_plan_destroy(void *plan);

/* ---- cuda_green.c ---- */
/** Partition the SMs for emulation factor f; on failure set up the repeat fallback.
 *  Fills be->green, be->gemm_stream, be->repeat_*. */
tpb_status_t tpb_cuda_emulation_init(tpb_cuda_t *be, double f);
void tpb_cuda_emulation_free(tpb_cuda_t *be);
/** Make the GEMM stream's context current (the green context, when there is one). */
void tpb_cuda_green_enter(tpb_cuda_t *be);
void tpb_cuda_green_leave(tpb_cuda_t *be);
/** Create an event in the GEMM stream's context. */
tpb_status_t tpb_cuda_gemm_event(tpb_cuda_t *be, cudaEvent_t *ev, unsigned flags);

/* ---- cuda_comm.c: the vendor's collective library (NCCL) ---- */
tpb_status_t tpb_cuda_ccl_open(tpb_gpu_comm_t *c);
tpb_status_t tpb_cuda_ccl_post(tpb_gpu_comm_t *c, const tpb_coll_desc_t *d);
void tpb_cuda_ccl_close(tpb_gpu_comm_t *c);
tpb_status_t tpb_cuda_ccl_error(tpb_gpu_comm_t *c);
void tpb_cuda_ccl_abort(tpb_gpu_comm_t *c);

#endif /* TPB_CUDA_INTERNAL_H */
