/*
 * record.h - what rank 0 writes about a run: the header, one table row and one
 * record per config, the result files and traces, and the summary. It
 * receives plain result data (record/result.h) and the run's facts; it never
 * reads the sweep's internals.
 *
 * The main header of src/record/: record/ includes base/ and backend/ (device
 * facts) only (see base/tpb_types.h for the layering rules).
 */
#ifndef TPB_RECORD_H
#define TPB_RECORD_H

#include <stdio.h>

#include "backend/backend.h"
#include "base/buf.h"
#include "base/clock.h"
#include "base/costprofile.h"
#include "base/detect.h"
#include "base/sequential.h"
#include "base/slurm.h"
#include "base/topo.h"
#include "record/outappend.h"
#include "record/outfile.h"
#include "record/report.h"
#include "record/result.h"
#include "record/spill.h"

/** --trace-iters auto: rank-iterations per trace file, window and spikes together (about
 *  190 MiB of trace events at TP 8 with the arrows: bench/gather). */
#define TPB_TRACE_BUDGET 300000

/** Version of the result files' schema (the run record's "schema"). */
#define TPB_SCHEMA_VERSION 1

/** The run record's "status". */
typedef enum {
    TPB_RUN_RUNNING = 0, /**< configs are still being measured */
    TPB_RUN_FINISHED,    /**< every config measured, summary written */
    TPB_RUN_TIMEOUT,     /**< a collective did not complete within --timeout */
    TPB_RUN_INTERRUPTED, /**< SIGTERM, SIGINT or SIGUSR1 (Slurm's time limit, scancel, Ctrl-C) */
    TPB_RUN_FAILED       /**< another error after the first config */
} tpb_run_status_t;
/** The longest status name ("interrupted"): the run record keeps room for it. */
#define TPB_RUN_STATUS_WIDTH 11

/** "running", "finished", "timeout", "interrupted", "failed". */
const char *tpb_run_status_name(tpb_run_status_t st);

/** The facts of a run that the record writes (all borrowed, as plain data). */
typedef struct {
    const char *command_line;
    const char *backend;     /**< the backend's name */
    const char *mpi_version; /**< MPI_Get_library_version's text */
    const tpb_topo_t *topo;
    const tpb_device_info_t *devices; /**< world entries */
    const double *emulate;            /**< --emulate-speed per rank, or NULL */
    const double *sched;              /**< --emulate-schedule's factors per rank, or NULL */
    long sched_iter;                  /**< ... from this iteration of the run on */
    tpb_dtype_t dtype;
    int iters, warmup;
    long granularity;
    const tpb_cost_profile_t *cost_profile; /**< --cost-profile, or NULL */
    unsigned long long seed;
    int timeline, check;
    int trace_iters;   /**< iterations per trace: 0 auto, -1 all, else N (--trace-iters) */
    int trace_per_run; /**< --trace-per run: one trace.json (record/trace.h) */
    int inject_delay_rank, inject_clock_rank;
    int clock_exchanges;
    const tpb_slurm_t *slurm; /**< Slurm's facts, or NULL (written as null) */
    const char *out_dir;      /**< "" for no files */
    int force;                /**< --force: replace an earlier run's files at the first config */
    int comm_only;            /**< --comm-only: the collectives' table */
    int comm_gap_us;          /**< --comm-gap (comm-only), 0 when back-to-back */
    tpb_collectives_t collectives; /**< --collectives: how MPI collectives were called */
    double cal_target_spread;      /**< the calibration's goal (relative IQR) */
    FILE *table;                   /**< where the table goes (stdout) */
    tpb_table_width_t width;       /**< the table's columns (--wide) */
} tpb_run_info_t;

/** The most looks a set takes under --budget (run/sweep.h's TPB_BUDGET_LOOKS). */
#define TPB_RECORD_BUDGET_LOOKS TPB_SEQ_LOOKS

/** What --budget spent over the sweep (the summary's "budget" and its answer line; the
 *  sweep keeps it as it goes: run/sweep_budget.c). */
typedef struct {
    double budget_s, spent_s; /**< the budget and what the sets' later looks took */
    int sets;                 /**< sets it watched (measured side by side) */
    int extended;             /**< ... measured more than once */
    int for_straggler;        /**< ... of them for the persistent straggler alone */
    int for_ranking;          /**< ... for a --block's TP ranking alone */
    int open_budget;          /**< ... left open when the budget ran out */
    int open_looks;           /**< ... left open after the most looks a set takes */
} tpb_record_budget_t;

typedef struct {
    tpb_run_info_t run;
    const tpb_clock_sample_t *sync0; /**< offsets at the start (world entries, borrowed) */
    const tpb_clock_sample_t *sync1; /**< offsets at the latest re-sync (borrowed) */
    double t0_us;                    /**< run start on rank 0's clock */
    tpb_buf_t jsonl, csv, ranks_csv; /**< records not in the files yet (one config's, the end's) */
    tpb_outappend_t app[3];          /**< results.jsonl, results.csv, ranks.csv once written */
    tpb_outappend_t reserve;         /**< room held for results.jsonl's rewrite at the end */
    tpb_spill_t spill;               /**< the histories' per-rank arrays (record/spill.h) */
    int spill_tried;                 /**< opened at the first config's history */
    int appending;                   /**< the files are in place: configs are appended to them */
    long run_line_len;               /**< results.jsonl's run line as written (with its newline) */
    tpb_history_t *hist; /**< the serial configs (the summary and the answer are theirs) */
    int nhist, cap_hist;
    tpb_history_t *ohist; /**< the chunked configs (--overlap chunked) */
    int nohist, cap_ohist;
    tpb_history_t *bhist; /**< the blocks (--block): id, name, tokens (m), steps, policy */
    int nbhist, cap_bhist;
    int skipped;                     /**< configs skipped, with a line in the table */
    int check_failed;                /**< a config's --check failed */
    int claimed;                     /**< this run has written into out_dir (tpb_record_begin) */
    long status_at;                  /**< where results.jsonl as written holds the status' quote */
    tpb_run_status_t status_written; /**< ... and which status it holds there */
    int stopping;          /**< a stop was asked for: every record written says "interrupted" */
    int sealed;            /**< the interrupted record is written: nothing more is */
    int ended;             /**< a final status (finished, failed, ...) is written */
    long trace_end;        /**< --trace-per run: where trace.json's events end (0: none yet) */
    tpb_buf_t trace_infos; /**< ... and its configs' otherData objects, comma-separated */
    long pending_end;      /**< ... the same of the trace written, until it is in place */
    tpb_buf_t pending_infos;
    char (*files)[TPB_OUTFILE_NAME]; /**< the files this run wrote into out_dir */
    int nfiles, cap_files;
    tpb_buf_t warnings; /**< '#' warning lines said once, after the table (tpb_record_warn) */
    double cpu_others;  /**< the largest share of a machine's CPUs that other processes took
                             during the sweep (base/cpuload.h; NaN: not measured) */
    char cpu_others_host[TPB_HOST_LEN]; /**< ... that machine's (its first rank's host) */
    tpb_record_budget_t budget;         /**< --budget: what it spent (budget_s 0: none) */
    char stop_reason[1024]; /**< why a run that did not finish ended (its one-line error) */
} tpb_record_t;

/** Start the record of a run; the clock samples are read when written. */
void tpb_record_init(tpb_record_t *r, const tpb_run_info_t *run, const tpb_clock_sample_t *sync0,
                     const tpb_clock_sample_t *sync1);

void tpb_record_free(tpb_record_t *r);

/** Print the run header (backend, versions, one line per rank, clock sync, table head). */
void tpb_record_header(const tpb_record_t *r);

/** Append the run-metadata JSON object (one line) for the given status (record_run.c). */
void tpb_record_run_json(const tpb_record_t *r, tpb_buf_t *b, tpb_run_status_t status);

/**
 * One measured config: analyse its timelines (marks: world x iters, on rank 0's
 * clock), derive its metrics with tpb_result_finish, print its table row,
 * append its records and rewrite the result files and its trace. res->ranks and
 * res->stats are filled here.
 */
tpb_status_t tpb_record_config(tpb_record_t *r, const tpb_result_t *res, const tpb_mark_t *marks);

/** A '# warning: ...' line (printf format, no newline) printed once after the table,
 *  before the summary (the same line said twice is printed once). */
void tpb_record_warn(tpb_record_t *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/**
 * A --block measured: its configs (b->configs) already recorded. Its step (median, p95,
 * min, max of b->steps), tokens per second per rank with the 95 % interval of the median
 * step, the sum of its GEMMs' median steps beside it; one table line, one "block" record
 * in results.jsonl (record_block.c), kept for the answer.
 */
tpb_status_t tpb_record_block(tpb_record_t *r, const tpb_block_result_t *b);

/** A config that was not measured: one line in the table, counted. */
void tpb_record_skip(tpb_record_t *r, const char *why);

/**
 * The run's record written at its start (status "running", no config yet), so that a run
 * stopped or killed before its first config leaves its command and why it ended. A no-op
 * without out_dir, and with --force: an earlier run's files are replaced only once this
 * run has a result of its own.
 */
tpb_status_t tpb_record_begin(tpb_record_t *r);

/**
 * Rewrite results.jsonl, results.csv and ranks.csv atomically with the run's
 * status. A no-op without out_dir and before the record is begun (tpb_record_begin) or,
 * with --force, before the run's first config.
 * Once a stop was asked for (tpb_record_stop), "running" is written as
 * "interrupted"; once sealed, nothing is written.
 */
tpb_status_t tpb_record_write(tpb_record_t *r, tpb_run_status_t status);

/**
 * A stop was asked for (a signal): write the record now as "interrupted" (so that a
 * launcher's SIGKILL a second later finds it marked), and, with seal, write nothing more;
 * without, the records that follow still go in, each saying "interrupted" (a --budget set's
 * completed looks). The caller holds the record's writes (one thread at a time). Returns
 * tpb_record_write's.
 */
tpb_status_t tpb_record_stop(tpb_record_t *r, int seal);

/**
 * The run measured nothing (every config skipped): the files it wrote into out_dir at its
 * start (tpb_record_begin; none with --force, whose earlier files stay) removed, by its own
 * list, and nothing more written (seal). A no-op once a config's or a block's record is in
 * the files, or where the run wrote more than its three result files.
 */
tpb_status_t tpb_record_discard(tpb_record_t *r);

/** Print and record T(N) = T_comp/N + T_comm + T_idle per TP degree and the fitted comm model. */
void tpb_record_summary(tpb_record_t *r);

/** --budget: the later looks the sets recorded so far at TP degree tp took (each set once:
 *  record/answer.h's tpb_answer_extensions), for a look's share of the straggler test. */
int tpb_record_extensions_at(const tpb_record_t *r, int tp);

/** --budget: the persistent straggler over the configs recorded so far at tp, the test held
 *  to alpha (record/answer.h: tpb_answer_persistent_at); rank -1 where none has blocks. */
tpb_persistent_t tpb_record_persistent_at(const tpb_record_t *r, int tp, double alpha);

#endif /* TPB_RECORD_H */
