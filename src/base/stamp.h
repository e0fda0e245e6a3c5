/*
 * stamp.h - this rank's progress, for the --timeout watchdog (backend/mpi_watch.h): the
 * phase it is in, when it last made progress, whether it is waiting for the other ranks (in
 * an MPI call that needs them), and the library call it is inside, if any. Stamped at each
 * phase and iteration by the sweep, around every MPI wait (run/agree.h: TPB_MPI_RET) and
 * around the device calls that can block (a cuBLASLt heuristic, a stream synchronize, an
 * NCCL call). A watchdog thread that finds the stamp older than --timeout knows the rank has
 * been stuck that long, and where.
 *
 * Lock-free stores only (a few nanoseconds and one clock read a stamp): callable from any
 * thread, and on the timed path between iterations. No MPI, nothing else of ours but the
 * clock.
 */
#ifndef TPB_STAMP_H
#define TPB_STAMP_H

/** Where a rank is. Names: tpb_phase_name. */
typedef enum {
    TPB_PHASE_START = 0, /**< start-up: device, communicators, clocks */
    TPB_PHASE_PLAN,      /**< planning the configs */
    TPB_PHASE_CALIBRATE, /**< the calibration's GEMMs */
    TPB_PHASE_INPUTS,    /**< generating a config's inputs */
    TPB_PHASE_SETUP,     /**< a config's layer: buffers, plans, its untimed iteration */
    TPB_PHASE_PROBE,     /**< the emulation probe */
    TPB_PHASE_WARMUP,    /**< warm-up iterations */
    TPB_PHASE_MEASURE,   /**< measured iterations */
    TPB_PHASE_CHECK,     /**< --check */
    TPB_PHASE_GATHER,    /**< timelines gathered, clocks re-synced */
    TPB_PHASE_RECORD,    /**< rank 0 writes the records */
    TPB_PHASE_FLEET,     /**< a --fleet qualification */
    TPB_PHASE_CLOSE,     /**< closing communicators and the device */
    TPB_PHASE_COUNT
} tpb_phase_t;

/** What a stamp says. */
typedef struct {
    double at_us; /**< last progress (tpb_clock_now_us) */
    tpb_phase_t phase;
    int peers;        /**< 1: inside an MPI call that waits for the other ranks */
    int config;       /**< the config's id, -1: none */
    long iter;        /**< the iteration of the run, -1: none */
    const char *call; /**< the library call it is inside (a string literal), or NULL */
} tpb_stamp_t;

/** "the calibration's GEMMs", ... (never NULL). */
const char *tpb_phase_name(tpb_phase_t p);

/** Progress now, entering phase p (no iteration, no call, not waiting). */
void tpb_stamp(tpb_phase_t p);

/** Progress now, nothing else changed (a long loop of host work). */
void tpb_stamp_progress(void);

/** Progress now at iteration iter of the run (the phase stays). */
void tpb_stamp_iter(long iter);

/** The config now measured (-1: none); progress now. */
void tpb_stamp_config(int id);

/** Entering (1) or leaving (0) a wait for the other ranks; both are progress. */
void tpb_stamp_peers(int waiting);

/** Entering the library call `call` (a string literal), or leaving it (NULL). Entering is
 *  progress; the time inside is what the watchdog bounds. */
void tpb_stamp_call(const char *call);

/** The rank failed with msg and now cleans up (phase TPB_PHASE_CLOSE): a clean-up that blocks
 *  (a free behind a wedged device) is reported with this first error (kept once). */
void tpb_stamp_failed(const char *msg);

/** The first error tpb_stamp_failed kept ("" none). */
const char *tpb_stamp_error(void);

/** A consistent enough copy of the stamp (fields written by other threads may be one stamp
 *  apart). */
void tpb_stamp_read(tpb_stamp_t *out);

/** "the calibration's GEMMs (config 3, iteration 12), inside cublasLtMatmulAlgoGetHeuristic"
 *  into out[cap]. */
void tpb_stamp_describe(const tpb_stamp_t *s, char *out, unsigned long cap);

#endif /* TPB_STAMP_H */
