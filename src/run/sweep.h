/*
 * sweep.h - the whole run as one handle: every planned config (run/plan.h) measured on every
 * rank, gathered to rank 0 and handed to its record. What a caller (tpbal.c) may do with a
 * sweep; its state and the functions of its files are src/run's own (run/sweep_state.h).
 */
#ifndef TPB_SWEEP_H
#define TPB_SWEEP_H

#include <stdio.h>

#include "backend/backend.h"
#include "base/clock.h"
#include "base/slurm.h"
#include "base/topo.h"
#include "record/record.h"
#include "run/plan.h"

/** A sweep (opaque). */
typedef struct tpb_sweep tpb_sweep_t;

/** What a sweep is given and only reads: where it runs and what it prints to. */
typedef struct {
    MPI_Comm world;         /**< the ranks (MPI_COMM_WORLD) */
    const tpb_topo_t *topo; /**< the world as found (rank = MPI rank) */
    const tpb_backend_class_t *backend;
    tpb_device_t *dev;
    const tpb_clock_t *clock;
    const char *command_line;
    const tpb_slurm_t *slurm; /**< what Slurm says about the job (present = 0 without it) */
    FILE *out;                /**< the table (stdout) */
} tpb_sweep_ctx_t;

/** A sweep of the plans in *plans (taken: *plans is left empty) in context ctx, into *out
 *  (tpb_sweep_free). TPB_ERR_NOMEM only (the plans freed). Not collective. */
tpb_status_t tpb_sweep_new(const tpb_sweep_ctx_t *ctx, tpb_plan_list_t *plans, tpb_sweep_t **out);

/**
 * Set up s (collective): check that each config fits in memory and that the calibration
 * file can be written (nothing is written before), gather device facts and clock offsets
 * to rank 0, print the header, load the calibration file. On error nothing is kept.
 */
tpb_status_t tpb_sweep_init(tpb_sweep_t *s);

/** Run every config (collective). On error tpb_err_agreed(st) says whether every rank ended
 *  with it (else this rank failed alone, inside a timed loop, and the others may be stuck). */
tpb_status_t tpb_sweep_run(tpb_sweep_t *s);

/**
 * A stop signal arrived (rank 0, in the signal thread): the record is written now as
 * "interrupted" with the configs measured so far, and nothing more is written; returns 0.
 * Where a --budget set is past its first look (tpb_sweep_hold), the record stays open for it
 * and 1 is returned: the set is recorded with the looks it completed, the sweep ends at its
 * next stop check, and --out stays held till then (a SIGKILL frees its lock anyway). Takes the
 * record's lock; no MPI. A no-op elsewhere and before the record exists.
 */
int tpb_sweep_stop(tpb_sweep_t *s);

/** Final clock sync, metadata and summary (collective). */
tpb_status_t tpb_sweep_finish(tpb_sweep_t *s);

/**
 * Rank 0, after an error: rewrite the result files with the run's status
 * ("timeout", "interrupted" or "failed") and the configs measured so far (a
 * no-op before the first config). Not collective: safe when other ranks hang.
 */
void tpb_sweep_close(tpb_sweep_t *s, tpb_status_t why);

/** Frees s and what it owns (its plans); NULL: nothing. */
void tpb_sweep_free(tpb_sweep_t *s);

/** Rank 0's record of the run (NULL elsewhere, and before tpb_sweep_init). */
const tpb_record_t *tpb_sweep_record(const tpb_sweep_t *s);

/** 1 where a config failed --check (every rank knows after tpb_sweep_run). */
int tpb_sweep_check_failed(const tpb_sweep_t *s);

/** The GEMM rate the estimates assume: the backend's rate guess for the plans' settings
 *  (basis[cap]: how it was had), taken on every rank of world at once and the slowest kept
 *  (the host measures: ranks that share cores slow each other as in the run); NaN where
 *  unknown on every rank (collective). */
double tpb_sweep_rate(MPI_Comm world, const tpb_backend_class_t *b, const tpb_plan_list_t *list,
                      char *basis, size_t cap);

/** The CPUs the ranks of world draw inputs on together (run/inputs.h), the estimates' divisor:
 *  the sum over the ranks of each one's share of its node's cores (backend/bind.h's
 *  tpb_bind_share, as the host backend's BLAS threads: cores two ranks may both run on count
 *  half to each). At least 1; 1 where MPI fails (collective). */
double tpb_sweep_draw_cpus(MPI_Comm world);

/** Whether the timelines of a config measured as m says (its iterations, --gather, --block,
 *  the timeline; chunks: its overlap chunks) on `world` ranks go to rank 0 in parts (pure; the dry
 * run says it too). */
int tpb_gather_in_parts(const tpb_measure_t *m, int world, int chunks);

#endif /* TPB_SWEEP_H */
