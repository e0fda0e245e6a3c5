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
#include "backend/mpi_watch.h"
#include "backend/cuda/cuda_plan.h"

#define TPB_CUDA_WORKSPACE (32u << 20)

/** A cached cuBLASLt plan for one GEMM shape. */
typedef struct {
    tpb_cuda_plan_key_t key; /* what it was built for (cuda_plan.h) */
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

typedef struct tpb_cuda tpb_cuda_t;
typedef struct tpb_cuda_comm tpb_cuda_comm_t;

/** One rank's GPU (its tpb_device_t). */
struct tpb_cuda {
    tpb_device_t base; /* first: passed as a tpb_device_t */
    tpb_backend_args_t args;
    int device;
    int ranks_on_device; /* node-local ranks sharing this GPU (told apart by UUID) */
    int isolated;        /* each local rank sees one GPU of its own (per-task binding) */
    /* the start gate: c0 and the GEMM are enqueued before the idle stream may run them */
    void *wait_value;             /* cuStreamWaitValue32, or NULL: no gate */
    volatile unsigned *gate_host; /* pinned, mapped: the value the stream waits for */
    unsigned long long gate_dev;  /* its device address (CUdeviceptr) */
    unsigned gate_seq;
    int gate_armed;
    char uuid[TPB_CUDA_ID_LEN]; /* "GPU-..." */
    struct cudaDeviceProp prop;
    cudaStream_t gemm_stream; /* in the green context when emulating */
    cudaStream_t comm_stream; /* primary context (== gemm_stream without emulation) */
    cudaStream_t own_gemm;    /* --overlap chunked without emulation: the GEMM stream */
    cudaEvent_t gemm_done, comm_done;
    int comm_pending; /* comm_done recorded and not yet waited on */
    cublasLtHandle_t lt;
    void *workspace;
    tpb_cuda_plan_t *plans; /* every plan built (cuda_gemm.c's cache, never evicted) */
    size_t nplans, cap_plans;
    int *plan_index;    /* open addressing by tpb_cuda_plan_hash: plan numbers, -1 empty */
    size_t nindex;      /* a power of two, at least twice nplans */
    int repeat_full;    /* repeat fallback: GEMMs per compute phase */
    double repeat_frac; /* and the fraction of columns of one more */
    tpb_cuda_green_t green;
    /* marks: an event must be recorded on a stream of its own context, so the
     * GEMM stream's marks (green context) and the comm stream's have one pool each */
    cudaEvent_t *ev[2];          /* [0]: GEMM stream's context, [1]: primary */
    unsigned char *event_stream; /* 0: gemm stream, 1: comm stream */
    size_t nevents;
    cudaEvent_t anchor[2][2]; /* [first, second][GEMM stream, comm stream] */
    double anchor_us[2][2];
    /* --comm mpi staging and the collective watchdog */
    void *host_send, *host_recv; /* --comm mpi staging; host_recv sits 1088 bytes into */
    void *host_recv_base;        /* its allocation (4K aliasing: host_alloc's comment) */
    size_t host_bytes;
    tpb_cuda_comm_t *watch[8]; /* the groups open, polled while waiting (their NCCL comms) */
    int nwatch;
    unsigned wait_seq;
};

/** A TP group's communicator (its tpb_comm_t). */
struct tpb_cuda_comm {
    tpb_comm_t base; /* first */
    tpb_cuda_t *be;
    MPI_Comm mpi;    /* the group (duplicated) */
    ncclComm_t nccl; /* NULL with --comm mpi */
    int rank, size;
    tpb_watch_t watch; /* --comm mpi: the blocking calls' watchdog (mpi_watch.h) */
    int watched;
};

/** The CUDA version (1000 x major + 10 x minor) at which cuda_green.c asks the
 *  runtime for a driver symbol; 0 if the symbol is not one it uses. */
int tpb_cuda_driver_symbol_version(const char *name);

/** A driver API function by name, asked at its own version (NULL if unavailable). */
void *tpb_cuda_driver_symbol(const char *name);

/** Set up the start gate of the compute phase (cuda_gemm.c; off if unavailable). */
void tpb_cuda_gate_init(tpb_cuda_t *be);

/** Hold the idle GEMM stream before the compute phase's first mark (a no-op when busy). */
tpb_status_t tpb_cuda_gate_arm(tpb_cuda_t *be);

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

/** How many ranks of this node drive the GPU of this UUID ("" for none). Collective over
 *  the node's ranks of world: every rank calls it, failed or not. */
int tpb_cuda_node_sharing(MPI_Comm world, const char *uuid);

/** The opened device can run the config: its sharing with the compute mode and --comm, and
 *  the dtype on its compute capability. */
tpb_status_t tpb_cuda_check_device(const tpb_cuda_t *be);

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

/** The slowdown the emulation achieves on g: full-device time / emulated time. */
tpb_status_t tpb_cuda_emulation_probe(tpb_cuda_t *be, const tpb_gemm_t *g, double *achieved);
void tpb_cuda_plans_free(tpb_cuda_t *be);

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

/* ---- cuda_comm.c ---- */
/** The communicator of a TP group (the device's comm_open). */
tpb_status_t tpb_cuda_comm_open(tpb_device_t *dev, MPI_Comm group, tpb_comm_t **comm);

/** Make the comm stream wait for the GEMMs queued so far on the GEMM stream (nothing when
 *  they are one stream). */
tpb_status_t tpb_cuda_comm_after_gemm(tpb_cuda_t *be);

/* ---- cuda_watch.c ---- */
/**
 * Wait for all work submitted by this rank under the --timeout watchdog. With
 * collective = 1 every rank of the TP group waits at this point (sync and
 * marks_read), so the ranks also tell each other they arrived, and a timeout
 * names those that did not; copies and set-up wait with collective = 0.
 */
tpb_status_t tpb_cuda_wait(tpb_cuda_t *be, int collective);

/* cuda_marks.c: the ops table's marks_prepare, mark and marks_read. */
tpb_status_t tpb_cuda_marks_prepare(tpb_cuda_t *be, size_t n);
tpb_status_t tpb_cuda_mark(tpb_cuda_t *be, size_t slot, tpb_mark_phase_t phase);
tpb_status_t tpb_cuda_marks_read(tpb_cuda_t *be, size_t n, double *us);

#endif /* TPB_CUDA_INTERNAL_H */
