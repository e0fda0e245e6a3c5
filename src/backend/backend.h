/*
 * backend.h - the one ops table every backend fills (host always; cuda when
 * configure finds CUDA, cuBLASLt and NCCL), and the registry that chooses one.
 * The TP layer and the sweep only call through this table and never ask which
 * backend they run on. Every slot is filled: what a backend cannot do returns
 * TPB_ERR_UNSUPPORTED. Each backend owns its defaults and its availability.
 *
 * The main header of src/backend/: backend/ includes base/ only (see
 * base/tpb_types.h for the layering rules).
 *
 * Matrices are row-major. Buffers returned by alloc live where the backend
 * computes (host memory, device memory).
 */
#ifndef TPB_BACKEND_H
#define TPB_BACKEND_H

#include <mpi.h>
#include <stddef.h>

#include "base/clock.h"
#include "base/dtype.h"
#include "base/tpb_status.h"
#include "base/tpb_types.h"

typedef struct tpb_backend tpb_backend_t; /**< a backend's per-process state */
typedef struct tpb_comm tpb_comm_t;       /**< a backend's communicator of one TP group */

/** The run's settings a backend needs (from the command line, by value). */
typedef struct {
    tpb_dtype_t dtype;             /**< the run's dtype (checked at init) */
    tpb_comm_kind_t comm;          /**< --comm */
    tpb_collectives_t collectives; /**< --collectives: how MPI collectives are called */
    const int *gpu_map;            /**< --gpu-map, device per node-local rank (borrowed), or NULL */
    int ngpu_map;
    tpb_bind_t bind;                 /**< --bind */
    double timeout_s;                /**< collective watchdog, 0 = off */
    tpb_emulate_mode_t emulate_mode; /**< --emulate-mode: how a slower device is imitated */
    int threads;                     /**< --threads (host BLAS threads), 0 = decided per rank */
    int emulate_schedule;            /**< --emulate-schedule given (speeds change mid-run) */
    int overlap;                     /**< --overlap chunked in the sweep: GEMMs and collectives
                                          on separate streams */
} tpb_backend_cfg_t;

/** What a backend is started with. */
typedef struct {
    MPI_Comm world;
    int world_rank, world_size;
    int local_rank, local_size; /**< within the node (MPI_COMM_TYPE_SHARED) */
    tpb_backend_cfg_t cfg;
    const tpb_clock_t *clock; /**< the clock marks are read on */
    double emulate_factor;    /**< 1.0, or this rank's --emulate-speed factor */
} tpb_backend_args_t;

/** A backend's defaults, used where the command line says nothing. */
typedef struct {
    long granularity;  /**< shard unit */
    tpb_dtype_t dtype; /**< default dtype */
    long m, n, k;      /**< default shape */
    int overlap_polls; /**< --overlap-polls: GEMMs a chunk is cut into, with a progress call
                            after each (host: MPI progresses only inside MPI calls) */
} tpb_backend_defaults_t;

/** What a timer mark belongs to: the compute phase's begin (c0) or end (c1), or the end of
 *  the collective (x1). */
typedef enum {
    TPB_MARK_COMPUTE_BEGIN = 0,
    TPB_MARK_COMPUTE_END = 1,
    TPB_MARK_COMM = 2
} tpb_mark_phase_t;

/** No mark for tpb_backend_ops_t.coll_start. */
#define TPB_NO_MARK ((size_t)-1)

/** Most collectives of one chunked iteration (--chunks). */
#define TPB_MAX_CHUNKS 64

/** Direction of tpb_backend_ops_t.copy. */
typedef enum { TPB_COPY_TO_BACKEND = 0, TPB_COPY_TO_HOST = 1 } tpb_copy_dir_t;

/** Static facts about the device a rank drives, for the header and metadata. */
typedef struct {
    char name[128];     /**< "NVIDIA H100 80GB HBM3", "Intel Xeon ... (host)" */
    char bus_id[32];    /**< PCI bus id, "" on host */
    char uuid[48];      /**< device UUID, "" on host */
    int index;          /**< device ordinal, -1 on host */
    int gpu_numa;       /**< the GPU's NUMA node (-1 unknown or on host) */
    int sm_count;       /**< SMs (granted, when emulating), cores on host */
    int sm_total;       /**< SMs of the whole device, cores on host */
    double mem_bytes;   /**< device (or host) memory */
    char emulation[64]; /**< how --emulate-speed is applied ("none", "green-context", ...) */
    double
        peak_gflops; /**< theoretical peak of this rank's device for the run's dtype (0: unknown) */
    char peak_basis[96]; /**< how the peak was computed ("132 SMs x 1.98 GHz x 4096 FLOP/cycle") */
    char advice[192];    /**< why GEMMs may run far below peak and what to do ("" if nothing) */
    char cpuset[64];     /**< the cores this rank may run on, after --bind ("0-3") */
    int threads;         /**< BLAS threads (host), 0 on GPUs */
    char threads_from[24];  /**< what set them: "auto", "--threads", "OPENBLAS_NUM_THREADS", ... */
    double cores_share;     /**< the cores this rank may use: 1/k of each core k ranks may run on */
    int sharing;            /**< node-local ranks whose cores overlap its own, itself included */
    int ranks_on_device;    /**< node-local ranks driving the same GPU (1: its own; 1 on host) */
    char threads_note[192]; /**< why its threads may not fit its cores ("" if they do) */
    int packages, numa_nodes, cores, pus; /**< this rank's node, as hwloc sees it */
    char versions[160]; /**< library versions ("cuBLAS 13.0, NCCL 2.28.9", "OpenBLAS ...") */
} tpb_device_info_t;

/** One GEMM: C[m x n] = A[m x k] * B^T, with B stored as n x k - the weight layout
 *  [out features, in features] of torch.nn.Linear, and the "TN" form that cuBLASLt
 *  needs for fp8. Row-major; leading dimensions in elements. */
typedef struct {
    long m, n, k;
    const void *a;
    long lda;
    const void *b;
    long ldb;
    void *c;
    long ldc;
    tpb_dtype_t dtype;
    double delay_us; /**< extra delay inside the compute phase (fault injection) */
    int accumulate;  /**< 1: C += A B^T (a block-sparse row shard's later blocks), 0: C = */
    int chunk;       /**< 1: a later piece of a chunked iteration: it writes rows that no
                          collective still in flight reads (a GPU does not wait for them) */
} tpb_gemm_t;

typedef struct tpb_backend_ops {
    const char *name;
    tpb_backend_kind_t kind;
    int built;                       /**< 0: a stub whose init says how to build it */
    tpb_backend_defaults_t defaults; /**< see tpb_backend_defaults_t */
    /** Devices this backend can drive in this process (0: not usable here). */
    int (*device_count)(void);
    /** TPB_OK if the backend can run cfg as far as it can tell without a device (the dtype,
     *  the dtype on the collectives' path, features it lacks), else a one-line error saying
     *  what it supports. The same answer on every rank, in a run and in --dry-run. */
    tpb_status_t (*check_config)(const tpb_backend_cfg_t *cfg);
    /** Start: select and set up the device. *be is set only on success. */
    tpb_status_t (*init)(const tpb_backend_args_t *args, tpb_backend_t **be);
    void (*finalize)(tpb_backend_t *be);
    /** Describe the device of this rank. */
    void (*info)(tpb_backend_t *be, tpb_device_info_t *info);
    /** Bytes of memory this rank may still allocate. */
    tpb_status_t (*mem_free)(tpb_backend_t *be, double *bytes);
    tpb_status_t (*alloc)(tpb_backend_t *be, size_t bytes, void **ptr);
    void (*free)(tpb_backend_t *be, void *ptr);
    /** Copy between host memory and backend memory, after this rank's submitted
     *  work has finished. Not collective. */
    tpb_status_t (*copy)(tpb_backend_t *be, void *dst, const void *src, size_t bytes,
                         tpb_copy_dir_t dir);
    /** The compute phase: one GEMM (with the emulated slowdown and injected delay). */
    tpb_status_t (*gemm)(tpb_backend_t *be, const tpb_gemm_t *g);
    /** Communicator of the TP group `group` (a sub-communicator of the world). */
    tpb_status_t (*comm_open)(tpb_backend_t *be, MPI_Comm group, tpb_comm_t **comm);
    void (*comm_close)(tpb_comm_t *comm);
    /** Sum-all-reduce of count elements of dt from send into recv. */
    tpb_status_t (*allreduce)(tpb_comm_t *comm, const void *send, void *recv, size_t count,
                              tpb_dtype_t dt);
    /** All-gather of uneven blocks: rank r contributes counts[r] elements placed at
     *  recv + displs[r] (in elements). */
    tpb_status_t (*allgatherv)(tpb_comm_t *comm, const void *send, void *recv, const size_t *counts,
                               const size_t *displs, tpb_dtype_t dt);
    /** --overlap chunked: start a non-blocking collective (counts NULL: a sum-all-reduce of
     *  count elements; else an all-gather-v of counts/displs) ordered after the GEMMs
     *  submitted so far, and take mark slot `mark` (TPB_NO_MARK: none) when it completes. */
    tpb_status_t (*coll_start)(tpb_comm_t *comm, const void *send, void *recv, size_t count,
                               const size_t *counts, const size_t *displs, tpb_dtype_t dt,
                               size_t mark);
    /** Let started collectives progress (host: MPI_Test on each; GPU: nothing to do). */
    tpb_status_t (*coll_progress)(tpb_comm_t *comm);
    /** Wait for every started collective (under the --timeout watchdog). */
    tpb_status_t (*coll_wait)(tpb_comm_t *comm);
    /** Make room for n timer marks (outside timed loops). */
    tpb_status_t (*marks_prepare)(tpb_backend_t *be, size_t n);
    /** Record mark `slot` at this point of the work of `phase`: compute marks are
     *  ordered with the GEMMs (begin: right before the next, end: after the last), a
     *  collective mark after the last collective (GPUs run them on different streams). */
    tpb_status_t (*mark)(tpb_backend_t *be, size_t slot, tpb_mark_phase_t phase);
    /** Wait for all work, then read marks [0, n) as microseconds on the clock.
     *  Called by every rank at the same point (the CUDA watchdog relies on it). */
    tpb_status_t (*marks_read)(tpb_backend_t *be, size_t n, double *us);
    /** Wait until all work submitted by this rank has finished. Called by every
     *  rank at the same point, like marks_read. */
    tpb_status_t (*sync)(tpb_backend_t *be);
    /** Change this rank's emulated speed factor from now on (--emulate-schedule). */
    tpb_status_t (*set_emulation)(tpb_backend_t *be, double factor);
    /** Measure the slowdown the emulation achieves on GEMM g: *achieved = time without
     *  emulation / time with it (1.0 when not emulating). Outside timed loops. */
    tpb_status_t (*emulation_probe)(tpb_backend_t *be, const tpb_gemm_t *g, double *achieved);
} tpb_backend_ops_t;

/** The host backend (always built). */
extern const tpb_backend_ops_t tpb_backend_host;

/** The CUDA backend, or a stub table whose init says the backend is not built. */
extern const tpb_backend_ops_t tpb_backend_cuda;

/** The registry: every backend, in the order auto prefers them; NULL-terminated. */
extern const tpb_backend_ops_t *const tpb_backends[];

/**
 * The backend to use for `kind`: auto picks the first built backend of the
 * registry with a device in this process (cuda with a GPU, else host).
 */
const tpb_backend_ops_t *tpb_backend_select(tpb_backend_kind_t kind);

/**
 * Fill rows x cols of backend memory dst with elements (row0 + r, col0 + c) of
 * the seeded random matrix `id` (see rng.h), scaled and encoded as dt's input
 * type. Used for the layer's inputs and the calibration GEMM alike.
 */
tpb_status_t tpb_backend_fill(const tpb_backend_ops_t *ops, tpb_backend_t *be, void *dst, long rows,
                              long cols, long row0, long col0, uint64_t seed, uint32_t id,
                              double scale, tpb_dtype_t dt);

#endif /* TPB_BACKEND_H */
