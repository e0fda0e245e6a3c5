/*
 * sweep.h - the whole run: every (tp, shape, split, policy) config, measured
 * on every rank, gathered and reported by rank 0.
 */
#ifndef TPB_SWEEP_H
#define TPB_SWEEP_H

#include <stdio.h>

#include "backend/backend.h"
#include "buf.h"
#include "calibrate.h"
#include "clock.h"
#include "result.h"
#include "topo.h"

#define TPB_CLOCK_EXCHANGES 50

/** A finished config, as later configs need it (T_1, T_even). */
typedef struct {
    int tp;
    tpb_split_t split;
    tpb_policy_t policy;
    long m, n, k;
    double step_med, xfer_med;
    double *t1_rank; /**< TP=1 only: each rank's time for the whole layer (owned) */
} tpb_history_t;

/** One config of the sweep: a TP degree, shape, split and policy. */
typedef struct tpb_point {
    int tp;
    MPI_Comm group;
    tpb_comm_t *comm;
    const tpb_shape_t *shape;
    tpb_split_t split;
    tpb_policy_t policy;
    const double *speeds;       /* group speeds (NaN-free) or NULL */
    const tpb_cal_speed_t *cal; /* the same with their spread and sample count, or NULL */
    const char *speed_source;   /* "calibration", "file", "speeds", "none" */
} tpb_point_t;

typedef struct {
    MPI_Comm world;
    const tpb_options_t *o;
    const tpb_backend_ops_t *ops;
    tpb_backend_t *be;
    const char *backend_name;
    const tpb_topo_t *topo;
    const tpb_clock_t *clock;
    const char *command_line;
    /* rank 0 only */
    FILE *out;                  /**< the table (stdout) */
    tpb_device_info_t *devices; /**< world entries */
    tpb_clock_sample_t *sync0;  /**< offsets at the start */
    tpb_clock_sample_t *sync1;  /**< offsets at the latest re-sync */
    double t0_us;               /**< run start on rank 0's clock */
    tpb_buf_t jsonl, csv, ranks_csv;
    tpb_history_t *hist;
    int nhist, cap_hist;
    tpb_cal_table_t cal;
    double progress_at;
    /* all ranks */
    int nconfigs, total_configs, check_failed, skipped;
} tpb_sweep_t;

/**
 * Set up a sweep (collective): gather device facts and clock offsets to rank 0,
 * print the header, load the calibration file. On error nothing is kept.
 */
tpb_status_t tpb_sweep_init(tpb_sweep_t *s);

/**
 * Run every config (collective). *fatal is set when the error could not be
 * agreed on by all ranks (a failure inside a timed loop): the caller must
 * abort the job rather than finalize.
 */
tpb_status_t tpb_sweep_run(tpb_sweep_t *s, int *fatal);

/** Final clock sync, metadata and summary (collective). */
tpb_status_t tpb_sweep_finish(tpb_sweep_t *s);

void tpb_sweep_free(tpb_sweep_t *s);

/** Length of the dimension that split cuts (K for row, N for col). */
long tpb_split_total(const tpb_shape_t *sh, tpb_split_t split);

/**
 * Speeds of this rank's TP group for point c (group entries, collective over
 * the world): --speeds, the calibration file, or a calibration GEMM at each
 * rank's even shard (added to the file). Sets c->speed_source.
 */
tpb_status_t tpb_sweep_speeds(tpb_sweep_t *s, tpb_point_t *c, tpb_cal_speed_t *speeds);

/* ---- rank 0's outputs (sweep_out.c) ---- */

/** Print the run header to s->out. */
void tpb_sweep_print_header(const tpb_sweep_t *s);

/** The run-metadata JSON object (one line). sync1 may be NULL before the end. */
void tpb_sweep_metadata(const tpb_sweep_t *s, tpb_buf_t *b, int finished);

/** Report one config: table row, result files and trace (rank 0). */
tpb_status_t tpb_sweep_emit(tpb_sweep_t *s, const tpb_result_t *res, const tpb_mark_t *marks);

/** Rewrite results.jsonl / results.csv / ranks.csv from the buffers (rank 0). */
tpb_status_t tpb_sweep_write_files(tpb_sweep_t *s, int finished);

/** Print the T(N) decomposition per TP degree and the fitted comm model (rank 0). */
void tpb_sweep_summary(tpb_sweep_t *s);

#endif /* TPB_SWEEP_H */
