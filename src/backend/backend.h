/*
 * backend.h - a backend as three lifecycle objects, each with one small interface
 * (as UCC gives its lib, context, team and collective their own):
 *
 *   tpb_backend_class_t   static: name, whether it is built, its defaults and help,
 *                         how many devices this process can drive, the config check,
 *                         and open, which starts ...
 *   tpb_device_t          one rank's device: memory, GEMMs, timer marks, sync; it
 *                         opens ...
 *   tpb_comm_t            a TP group's communicator: post, progress, wait, close of
 *                         a collective descriptor (tpb_coll_desc_t).
 *
 * The registry (tpb_backends[]) lists the classes; the harness reaches a backend only
 * through them and never names one. Every slot of every table is filled: what a
 * backend cannot do returns TPB_ERR_UNSUPPORTED; a class that is not built fails at
 * check_config and open with the one line that says how to build it.
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

/* TPB_GPU_VENDOR_ROWS: the GPU vendors, which configure read from the registry */
#include "tpb_config.h"

#include "base/clock.h"
#include "base/dtype.h"
#include "base/tpb_status.h"
#include "base/tpb_types.h"

typedef struct tpb_device tpb_device_t;
typedef struct tpb_comm tpb_comm_t;
typedef struct tpb_device_ops tpb_device_ops_t;
typedef struct tpb_comm_ops tpb_comm_ops_t;

/** The head of every backend's device: its operations. The backend's own state follows
 *  in a struct private to it (host_internal.h, cuda_internal.h) that starts with this. */
struct tpb_device {
    const tpb_device_ops_t *ops;
};

/** The head of every backend's communicator (as tpb_device). */
struct tpb_comm {
    const tpb_comm_ops_t *ops;
};

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
    double busbw_gbs;  /**< the collectives' bus bandwidth the time estimates assume */
    double alpha_us;   /**< ... and their latency */
    int overlap_polls; /**< --overlap-polls: GEMMs a chunk is cut into, with a progress call
                            after each (host: MPI progresses only inside MPI calls) */
} tpb_backend_defaults_t;

/** What a timer mark belongs to: the compute phase's begin (c0) or end (c1), the end of
 *  the collective (x1), or the begin of a collective timed alone (--overlap chunked's parts:
 *  a GPU holds the comm stream there until the collective and its end mark are queued). */
typedef enum {
    TPB_MARK_COMPUTE_BEGIN = 0,
    TPB_MARK_COMPUTE_END = 1,
    TPB_MARK_COMM = 2,
    TPB_MARK_COMM_BEGIN = 3
} tpb_mark_phase_t;

/** No mark for tpb_coll_desc_t.mark. */
#define TPB_NO_MARK ((size_t)-1)

/** Most collectives of one chunked iteration (--chunks). */
#define TPB_MAX_CHUNKS 64

/** Direction of tpb_device_ops_t.copy. */
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
    int host_waits;         /**< its collectives hold the host until they end (a GPU's --comm mpi,
                                 staged through host memory): nothing overlaps them */
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
    int beside_comm; /**< 1: it runs beside collectives (--overlap chunked): a GPU whose
                          collective library runs on SMs leaves some to them */
} tpb_gemm_t;

/**
 * One collective of a TP group, as the collective tables (run/coll.h) describe it; the
 * backend only carries it out. Counts and displacements are in elements of dtype.
 *   all-reduce      count elements of send summed into recv
 *   all-gather(-v)  rank q's counts[q] elements land at recv + displs[q]; this rank sends
 *                   counts[rank] from send
 *   reduce-scatter  send holds the whole (sum of counts) input, rank q's block at
 *                   displs[q]; this rank receives the sum of its block, counts[rank]
 *                   elements, into recv
 */
typedef struct {
    tpb_coll_t kind;
    const void *send;
    void *recv;
    size_t count;            /**< all-reduce */
    size_t *counts, *displs; /**< all-gather, reduce-scatter: one per group rank (the
                                  backend only reads them) */
    tpb_dtype_t dtype;
    int equal;       /**< the blocks are equal by construction (sequence parallelism): the
                          equal-count call (ncclAllGather, ncclReduceScatter) */
    int nonblocking; /**< 0: complete when post returns (ordered after the GEMMs so far on a
                          GPU, which the next GEMM waits for); 1: started, ordered after the
                          GEMMs submitted so far, completed by wait (--overlap chunked) */
    size_t mark;     /**< nonblocking: the mark slot it takes when it completes, or
                          TPB_NO_MARK */
} tpb_coll_desc_t;

/** A TP group's communicator. */
struct tpb_comm_ops {
    /** Carry out (or start, c->nonblocking) collective c. The blocking MPI calls run under
     *  the --timeout watchdog. */
    tpb_status_t (*post)(tpb_comm_t *comm, const tpb_coll_desc_t *c);
    /** Let started collectives progress (host: MPI_Test on each; GPU: nothing to do). */
    tpb_status_t (*progress)(tpb_comm_t *comm);
    /** Wait for every started collective (under the --timeout watchdog). */
    tpb_status_t (*wait)(tpb_comm_t *comm);
    void (*close)(tpb_comm_t *comm);
};

/** One rank's device. */
struct tpb_device_ops {
    /** End: free everything (collective over the world like open: the watchdog). */
    void (*close)(tpb_device_t *dev);
    /** Describe the device of this rank. */
    void (*info)(tpb_device_t *dev, tpb_device_info_t *info);
    /** Bytes of memory this rank may still allocate. */
    tpb_status_t (*mem_free)(tpb_device_t *dev, double *bytes);
    tpb_status_t (*alloc)(tpb_device_t *dev, size_t bytes, void **ptr);
    void (*free)(tpb_device_t *dev, void *ptr);
    /** Copy between host memory and backend memory, after this rank's submitted
     *  work has finished. Not collective. */
    tpb_status_t (*copy)(tpb_device_t *dev, void *dst, const void *src, size_t bytes,
                         tpb_copy_dir_t dir);
    /** The compute phase: one GEMM (with the emulated slowdown and injected delay). */
    tpb_status_t (*gemm)(tpb_device_t *dev, const tpb_gemm_t *g);
    /** Change this rank's emulated speed factor from now on (--emulate-schedule). */
    tpb_status_t (*set_emulation)(tpb_device_t *dev, double factor);
    /** Measure the slowdown the emulation achieves on GEMM g: *achieved = time without
     *  emulation / time with it (1.0 when not emulating). Outside timed loops. */
    tpb_status_t (*emulation_probe)(tpb_device_t *dev, const tpb_gemm_t *g, double *achieved);
    /** Make room for n timer marks (outside timed loops). */
    tpb_status_t (*marks_prepare)(tpb_device_t *dev, size_t n);
    /** Record mark `slot` at this point of the work of `phase`: compute marks are
     *  ordered with the GEMMs (begin: right before the next, end: after the last), a
     *  collective mark after the last collective (GPUs run them on different streams). */
    tpb_status_t (*mark)(tpb_device_t *dev, size_t slot, tpb_mark_phase_t phase);
    /** Wait for all work, then read marks [0, n) as microseconds on the clock.
     *  Called by every rank at the same point (the CUDA watchdog relies on it). */
    tpb_status_t (*marks_read)(tpb_device_t *dev, size_t n, double *us);
    /** How far a mark of the last marks_read may lie from its event's time on the clock,
     *  microseconds: half the widest host bracket of the anchors that placed the marks (a
     *  GPU's events). NULL: 0, the marks are the clock's own reads. */
    double (*marks_within)(tpb_device_t *dev);
    /** Wait until all work submitted by this rank has finished. Called by every
     *  rank at the same point, like marks_read. */
    tpb_status_t (*sync)(tpb_device_t *dev);
    /** Communicator of the TP group `group` (a sub-communicator of the world). */
    tpb_status_t (*comm_open)(tpb_device_t *dev, MPI_Comm group, tpb_comm_t **comm);
};

/** One row of a backend's capability table (as UCC's teams score their algorithms): it runs
 *  collectives of `kind` under the --comm values of `comms` (a mask of 1 << tpb_comm_kind_t)
 *  in the dtypes of `dtypes` (a mask of 1 << tpb_dtype_t), with blocks of any size where
 *  unequal is 1 (MPI's v-collectives) or equal ones only (ncclReduceScatter, ncclAllGather),
 *  by `call`. */
typedef struct {
    tpb_coll_t kind;
    unsigned comms;
    unsigned dtypes;
    int unequal;
    const char *call;
} tpb_backend_cap_t;

#define TPB_CAP_COMMS_ALL ((1u << TPB_COMM_CCL) | (1u << TPB_COMM_MPI))
#define TPB_CAP_DTYPES_ALL (~0u)

/** A backend: what can be known without a device, and open, which starts one. */
typedef struct {
    const char *name;                /**< as --backend spells it, and the record */
    const char *about;               /**< --help: what it drives, one line */
    const char *dtypes;              /**< --help: the dtypes it runs ("fp32 | fp64") */
    int built;                       /**< 0: a class whose check and open say how to build it */
    tpb_backend_defaults_t defaults; /**< see tpb_backend_defaults_t */
    /** Devices this backend can drive in this process (0: not usable here). */
    int (*device_count)(void);
    /** TPB_OK if the backend can run cfg as far as it can tell without a device (the dtype,
     *  the dtype on the collectives' path, features it lacks), else a one-line error saying
     *  what it supports. The same answer on every rank, in a run and in --dry-run. */
    tpb_status_t (*check_config)(const tpb_backend_cfg_t *cfg);
    /** What it can run: its capability table (tpb_backend_cap_t), ncaps rows; a config of a
     *  collective, --comm, block sizes and dtype no row holds is skipped where configs are
     *  planned, with the reason tpb_backend_supports gives (and the dry run shows it). */
    const tpb_backend_cap_t *caps;
    int ncaps;
    /** The GEMM rate of a rank (GFLOP/s) that --dry-run's time estimates assume, with how
     *  it was guessed in basis[cap]; NaN where the class cannot tell without a device. */
    double (*rate_guess)(const tpb_backend_cfg_t *cfg, char *basis, size_t cap);
    /** The memory (bytes) a rank of local_size on its node may use, as far as the class can
     *  tell without a device, for --dry-run's memory check (the run's own asks the device
     *  it opened); NaN where it cannot tell. */
    double (*mem_guess)(int local_size);
    /** Start: select and set up the device (collective over args->world). *dev is set only
     *  on success. */
    tpb_status_t (*open)(const tpb_backend_args_t *args, tpb_device_t **dev);
} tpb_backend_class_t;

/** The host backend (always built). */
extern const tpb_backend_class_t tpb_backend_host;

/** The GPU vendors' classes, tpb_backend_NAME each (tpb_backend_cuda: the CUDA backend, or a
 *  class whose check and open say it is not built): a TPB_GPU_VENDOR(NAME) row of
 *  TPB_GPU_VENDOR_ROWS each, which configure writes from the registry,
 *  src/backend/vendors.inc (config/tpb_vendors.m4). */
#define TPB_GPU_VENDOR(name) extern const tpb_backend_class_t tpb_backend_##name;
TPB_GPU_VENDOR_ROWS
#undef TPB_GPU_VENDOR

/** The registry: every backend, in the order auto prefers them (the GPU vendors in the order
 *  of src/backend/vendors.inc, then the host); NULL-terminated. */
extern const tpb_backend_class_t *const tpb_backends[];

/** 1 if b runs collectives of kind under cfg (its --comm and dtype), with blocks of
 *  different sizes where unequal is 1, by a row of its capability table; else 0 with what it
 *  lacks in why[cap] ("the cuda backend's reduce-scatter needs equal blocks under --comm ccl
 *  (ncclReduceScatter)"). Pure. */
int tpb_backend_supports(const tpb_backend_class_t *b, const tpb_backend_cfg_t *cfg,
                         tpb_coll_t kind, int unequal, char *why, size_t cap);

/** The backend called name ("auto": the first built one of the registry with a device in
 *  this process, else the last); NULL if none is. */
const tpb_backend_class_t *tpb_backend_find(const char *name);

/** "auto, host or cuda": the names --backend takes, for --help and errors. */
const char *tpb_backend_names(void);

/* An outcome agreed over world (collective: every rank calls it, whatever its own status):
 * TPB_OK where every rank succeeded, else the first failing rank's status and message on
 * every rank (a backend's open: each undoes what it started, the watchdog's end being
 * collective too, before MPI ends). run/agree.h's tpb_agree is this. */
tpb_status_t tpb_backend_agree(MPI_Comm world, tpb_status_t st);

/* ---- calls through the tables (a caller holds one pointer, never an ops table) ---- */
static inline void tpb_dev_close(tpb_device_t *d)
{
    if (d)
        d->ops->close(d);
}
static inline void tpb_dev_info(tpb_device_t *d, tpb_device_info_t *i)
{
    d->ops->info(d, i);
}
static inline tpb_status_t tpb_dev_mem_free(tpb_device_t *d, double *bytes)
{
    return d->ops->mem_free(d, bytes);
}
static inline tpb_status_t tpb_dev_alloc(tpb_device_t *d, size_t bytes, void **ptr)
{
    return d->ops->alloc(d, bytes, ptr);
}
static inline void tpb_dev_free(tpb_device_t *d, void *ptr)
{
    d->ops->free(d, ptr);
}
static inline tpb_status_t tpb_dev_copy(tpb_device_t *d, void *dst, const void *src, size_t bytes,
                                        tpb_copy_dir_t dir)
{
    return d->ops->copy(d, dst, src, bytes, dir);
}
static inline tpb_status_t tpb_dev_gemm(tpb_device_t *d, const tpb_gemm_t *g)
{
    return d->ops->gemm(d, g);
}
static inline tpb_status_t tpb_dev_set_emulation(tpb_device_t *d, double factor)
{
    return d->ops->set_emulation(d, factor);
}
static inline tpb_status_t tpb_dev_emulation_probe(tpb_device_t *d, const tpb_gemm_t *g,
                                                   double *achieved)
{
    return d->ops->emulation_probe(d, g, achieved);
}
static inline tpb_status_t tpb_dev_marks_prepare(tpb_device_t *d, size_t n)
{
    return d->ops->marks_prepare(d, n);
}
static inline tpb_status_t tpb_dev_mark(tpb_device_t *d, size_t slot, tpb_mark_phase_t phase)
{
    return d->ops->mark(d, slot, phase);
}
static inline tpb_status_t tpb_dev_marks_read(tpb_device_t *d, size_t n, double *us)
{
    return d->ops->marks_read(d, n, us);
}

static inline double tpb_dev_marks_within(tpb_device_t *d)
{
    return d->ops->marks_within ? d->ops->marks_within(d) : 0.0;
}
static inline tpb_status_t tpb_dev_sync(tpb_device_t *d)
{
    return d->ops->sync(d);
}
static inline tpb_status_t tpb_dev_comm_open(tpb_device_t *d, MPI_Comm group, tpb_comm_t **c)
{
    return d->ops->comm_open(d, group, c);
}
static inline tpb_status_t tpb_comm_post(tpb_comm_t *c, const tpb_coll_desc_t *desc)
{
    return c->ops->post(c, desc);
}
static inline tpb_status_t tpb_comm_progress(tpb_comm_t *c)
{
    return c->ops->progress(c);
}
static inline tpb_status_t tpb_comm_wait(tpb_comm_t *c)
{
    return c->ops->wait(c);
}
static inline void tpb_comm_close(tpb_comm_t *c)
{
    if (c)
        c->ops->close(c);
}

/**
 * Fill rows x cols of backend memory dst with elements (row0 + r, col0 + c) of
 * the seeded random matrix `id` (see rng.h), scaled and encoded as dt's input
 * type. Used for the layer's inputs and the calibration GEMM alike.
 */
tpb_status_t tpb_backend_fill(tpb_device_t *dev, void *dst, long rows, long cols, long row0,
                              long col0, uint64_t seed, uint32_t id, double scale, tpb_dtype_t dt);

/** n elements of backend memory dst filled cheaply (uniform in [-1, 1), base/rng.h) as dt's
 *  input type: for GEMMs whose results nobody checks (the calibration's). */
tpb_status_t tpb_backend_fill_uniform(tpb_device_t *dev, void *dst, size_t n, uint64_t seed,
                                      tpb_dtype_t dt);

#endif /* TPB_BACKEND_H */
