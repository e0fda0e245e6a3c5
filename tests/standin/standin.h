/*
 * standin.h - the inside of the GPU stand-in (tests/standin/README.md): CPU libraries with
 * the sonames of the CUDA runtime, cuBLASLt, cuBLAS and NCCL that run tpbal's CUDA backend
 * on a machine without a GPU. Test code only: never installed, never a backend users pick.
 *
 * libcudart.so.13 holds the state (devices, contexts, memory, streams, events, the time
 * model, the switches); libcublasLt.so.13 and libnccl.so.2 link it and reach that state
 * through the tpbsi_ functions below, exported from it.
 */
#ifndef TPBSI_STANDIN_H
#define TPBSI_STANDIN_H

#include <stddef.h>
#include <stdint.h>

#define TPBSI_MAX_DEVICES 16
#define TPBSI_MAX_RANKS 64

/** The stand-in's settings, read once from the environment (README.md lists them). */
typedef struct {
    int ndev;                        /**< TPBAL_STANDIN_DEVICES */
    double gflops;                   /**< TPBAL_STANDIN_GFLOPS: a device's GEMM rate at speed 1 */
    double alpha_us;                 /**< TPBAL_STANDIN_ALPHA_US: a collective's latency */
    double gbs;                      /**< TPBAL_STANDIN_GBS: a collective's bus bandwidth */
    double speed[TPBSI_MAX_DEVICES]; /**< TPBAL_STANDIN_SPEEDS, by device ordinal */
    size_t mem_bytes;                /**< TPBAL_STANDIN_MEM: each device's memory */
    int compute_mode;                /**< TPBAL_STANDIN_COMPUTE_MODE (cudaComputeMode values) */
    int green;                       /**< TPBAL_STANDIN_GREEN: green contexts in the driver */
    int wait_value;       /**< TPBAL_STANDIN_WAIT_VALUE: cuStreamWaitValue32 in the driver */
    int faulty;           /**< this process is the one TPBAL_STANDIN_FAULT_RANK names */
    long fail_malloc;     /**< TPBAL_STANDIN_FAIL_MALLOC: the Nth cudaMalloc fails */
    int busy;             /**< TPBAL_STANDIN_BUSY: every device busy or unavailable */
    long nccl_error;      /**< TPBAL_STANDIN_NCCL_ERROR: the Nth collective's async error */
    long nccl_hang;       /**< TPBAL_STANDIN_NCCL_HANG: the Nth collective never completes */
    long nccl_stall;      /**< TPBAL_STANDIN_NCCL_STALL: the Nth collective call never returns */
    long nccl_corrupt;    /**< TPBAL_STANDIN_NCCL_CORRUPT: the Nth (-1: every) result is wrong */
    long no_algo;         /**< TPBAL_STANDIN_NO_ALGO: the Nth heuristic finds none (-1 all) */
    long heuristic_stall; /**< TPBAL_STANDIN_HEURISTIC_STALL: the Nth heuristic never returns */
    double alternate;     /**< TPBAL_STANDIN_ALTERNATE: every other GEMM of a device this many
                               times as long (another process taking turns on the GPU) */
    double record_lag_us; /**< TPBAL_STANDIN_RECORD_LAG_US: the host lags this long before each
                               cudaEventRecord (a host thread slower than a short GEMM) */
    int no_math;          /**< TPBAL_STANDIN_NO_MATH: GEMMs and collectives take their model
                               time and compute nothing (results not checked); copies to
                               the device take bytes / copy_gbs and move nothing */
    double copy_gbs;      /**< TPBAL_STANDIN_COPY_GBS: the host link's rate, GB/s (no_math) */
    double preempt_us;    /**< TPBAL_STANDIN_PREEMPT_US: every preempt_every-th record on an idle
                               stream (an anchor's) is stamped this long after its call, the
                               call returning then (the host thread preempted inside it) */
    long preempt_every;   /**< TPBAL_STANDIN_PREEMPT_EVERY (3) */
    long sync_stall;      /**< TPBAL_STANDIN_SYNC_STALL: the Nth host synchronization (stream, event
                               or device) never returns */
    int nccl_in_progress; /**< TPBAL_STANDIN_NCCL_INPROGRESS: every non-blocking call returns
                               ncclInProgress (else only init and finalize do) */
    const char *dir;      /**< TPBAL_STANDIN_DIR: the node's lock files (set by run) */
    const char *run;      /**< TPBAL_STANDIN_RUN: names the run's shared memory */
} tpbsi_config_t;

/** The settings (parsed on first use; a bad value ends the process with one line). */
const tpbsi_config_t *tpbsi_config(void);

/** Report a misuse of the API: "tpbal-standin: ..." on stderr, counted. */
void tpbsi_complain(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/** Misuses reported so far in this process. */
long tpbsi_complaints(void);

/** What the stand-in counts in a process; with TPBAL_STANDIN_STATS=DIR set, the counts are
 *  written to DIR/stats.PID ("name value" lines) when the process exits. */
typedef enum {
    TPBSI_N_MALLOC,      /**< cudaMalloc calls */
    TPBSI_N_HEURISTIC,   /**< cublasLtMatmulAlgoGetHeuristic calls */
    TPBSI_N_MATMUL,      /**< GEMMs run */
    TPBSI_N_COLL,        /**< NCCL operations run (a group is one) */
    TPBSI_N_COMMS,       /**< NCCL communicators created */
    TPBSI_N_GEMM_OVER,   /**< GEMMs whose host work outlasted the model */
    TPBSI_N_COLL_OVER,   /**< collectives whose host work outlasted the model */
    TPBSI_N_SM_TARGETED, /**< GEMMs planned for fewer SMs than their context has (an SM
                              count target below it: SMs left to collectives) */
    TPBSI_N_LATE_RECORD, /**< timing events recorded on a stream that had gone idle after
                              device work no host call had seen end: a mark stamped late */
    TPBSI_N_COUNTERS
} tpbsi_counter_t;

/** Add n to counter c. */
void tpbsi_count(tpbsi_counter_t c, long n);

/** Microseconds on CLOCK_MONOTONIC (the device timer). */
double tpbsi_now_us(void);

/** Sleep until CLOCK_MONOTONIC reaches t_us (no-op when it has). */
void tpbsi_sleep_until(double t_us);

/* ---- memory ---- */

/** Where an address may be for a call: device memory only, or also pinned host memory
 *  that is mapped into the device's address space (cudaHostAllocMapped). */
typedef enum { TPBSI_DEVICE = 1, TPBSI_DEVICE_OR_MAPPED = 2 } tpbsi_where_t;

/**
 * The storage behind [ptr, ptr + bytes) for the call `what`, or NULL after a complaint that
 * names the call, the pointer and the sizes (not device memory, freed, or reaching past its
 * allocation). Device addresses are not dereferenceable on the host (as on a GPU): the
 * stand-in works on the storage this returns. *device is the allocation's device.
 */
void *tpbsi_resolve(const void *ptr, size_t bytes, tpbsi_where_t where, const char *what,
                    int *device);

/** 1 if ptr lies in a live device allocation, else 0; no complaint. */
int tpbsi_is_device(const void *ptr);

/* ---- streams ---- */

typedef struct tpbsi_stream tpbsi_stream_t;

/** A unit of a stream's work, run by the stream's worker in order. */
typedef struct tpbsi_op {
    void (*run)(struct tpbsi_op *op, tpbsi_stream_t *s);
    void (*done)(struct tpbsi_op *op); /**< frees the op (after run, or if never run) */
    /** NULL, or 1 while the op waits for a value that host code must write (an unmet
     *  cuStreamWaitValue32): the stream is parked there until then */
    int (*parked)(const struct tpbsi_op *op);
    int work; /**< device work an event may close (a GEMM, a collective) */
    struct tpbsi_op *next;
} tpbsi_op_t;

/** The stream handle h (NULL and cudaStreamLegacy: the current device's default stream),
 *  or NULL after a complaint naming the call. */
tpbsi_stream_t *tpbsi_stream(void *h, const char *what);

/** Queue op on s (taking it). */
void tpbsi_enqueue(tpbsi_stream_t *s, tpbsi_op_t *op);

/** The device of s, and the speed of its work: the device's speed times the share of its
 *  SMs that the stream's context holds (a green context's). */
int tpbsi_stream_device(const tpbsi_stream_t *s);
double tpbsi_stream_speed(const tpbsi_stream_t *s);
/** The SMs the stream's context holds (a green context's, else the device's). */
unsigned tpbsi_stream_sms(const tpbsi_stream_t *s);

/** Hold the device's compute engine for a GEMM (across the processes of the node when
 *  TPBAL_STANDIN_DIR is set): GEMMs of one device take turns, as on a time-sliced GPU. */
void tpbsi_engine_lock(int device);
void tpbsi_engine_unlock(int device);

/** The device current on this thread (cudaSetDevice), its PCI bus id and UUID bytes. */
int tpbsi_current_device(void);
void tpbsi_device_bus_id(int device, char *out, size_t cap);

/**
 * Lazy module loading (CUDA Programming Guide, "Lazy Loading", on by default since CUDA 12.2
 * on Linux; CUDA_MODULE_LOADING=EAGER turns it off): the first use of a kernel loads it, and a
 * load waits until the device's streams are idle. A stream parked on an unmet
 * cuStreamWaitValue32 is never idle while the only thread that could write the value waits
 * here: that is the deadlock a GPU shows, so it is reported (a complaint naming `what` and the
 * parked stream) and -1 returned instead of waiting for ever. 0: loaded (after the wait), or
 * loaded before (key: the kernel's identity on the device).
 */
int tpbsi_kernel_load(int device, unsigned long long key, const char *what);

/** Wake every thread waiting on stream progress (after a shared-memory flag changes). */
void tpbsi_progress_signal(void);

/* ---- the time model (model.c, pure) ---- */

/** Microseconds a GEMM of flops takes at gflops x speed. */
double tpbsi_gemm_us(double flops, double gflops, double speed);

/** Bytes a collective moves over the bus per rank, as nccl-tests counts them: all-reduce
 *  2(n-1)/n of the buffer, all-gather and reduce-scatter (n-1)/n of the whole array, a
 *  broadcast the buffer once. */
typedef enum {
    TPBSI_ALLREDUCE,
    TPBSI_ALLGATHER,
    TPBSI_REDUCESCATTER,
    TPBSI_BROADCAST
} tpbsi_coll_t;
double tpbsi_bus_bytes(tpbsi_coll_t kind, double bytes, int nranks);

/** Microseconds for bus bytes: alpha + bytes / bandwidth. */
double tpbsi_coll_us(double bus_bytes, double alpha_us, double gbs);

/** SMs a green context gets for a request of want SMs of total (at least min, a multiple of
 *  align, at most total): cuDevSmResourceSplitByCount's rounding. */
unsigned tpbsi_sm_split(unsigned total, unsigned want, unsigned min, unsigned align);

/* ---- number formats (model.c, pure): IEEE half, bfloat16, fp8 e4m3 and e5m2 (OCP) ---- */
float tpbsi_half_to_float(uint16_t h);
uint16_t tpbsi_float_to_half(float f);
float tpbsi_bf16_to_float(uint16_t h);
uint16_t tpbsi_float_to_bf16(float f);
float tpbsi_e4m3_to_float(uint8_t v);
uint8_t tpbsi_float_to_e4m3(float f);
float tpbsi_e5m2_to_float(uint8_t v);
uint8_t tpbsi_float_to_e5m2(float f);
/** f rounded to tensor-float-32 (10 mantissa bits, to nearest even). */
float tpbsi_round_tf32(float f);

#endif /* TPBSI_STANDIN_H */
