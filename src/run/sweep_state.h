/*
 * sweep_state.h - the sweep's state and its files' functions, private to src/run (the
 * public handle is run/sweep.h): every planned config (run/plan.h), measured on every rank,
 * gathered to rank 0 and handed to its record (record/record.h).
 *
 * The main header of src/run/ (plans, sweep, TP layer, split orientations,
 * calibration, clock sync, topology, agreement): run/ may include every layer
 * below it; nothing below run/ includes run/ (see base/tpb_types.h).
 *
 * Files: sweep.c (set-up, the loop over plans, placements and TP groups, the
 * end), sweep_config.c (one config: layer, measurement, gather, record),
 * sweep_measure.c (the timed loop and the adaptive rounds), sweep_overlap.c (a
 * chunked config's chunk marks and its parts alone), sweep_speeds.c (the speeds a
 * block weighs by), sweep_load.c (the machines' CPU load beside the run), progress.c (rank
 * 0's progress and heartbeat lines). They read the
 * plans (run/plan.h), not the options.
 */
#ifndef TPB_SWEEP_STATE_H
#define TPB_SWEEP_STATE_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "backend/backend.h"
#include "base/clock.h"
#include "base/detect.h"
#include "base/slurm.h"
#include "base/topo.h"
#include "cli/options.h"
#include "record/answer.h"
#include "record/record.h"
#include "run/calibrate.h"
#include "run/gather.h"
#include "run/plan.h"
#include "run/sweep.h"

/** The adaptive policy's rounds of the current config (kept by rank 0). */
/** A stop is honoured within about this many seconds of measured iterations (the ranks
 *  agree on it between iterations, outside the marks: sweep_measure.c). */
#define TPB_STOP_CHECK_S 0.1
/** ... and every this many iterations where no warm-up measured their pace. */
#define TPB_STOP_CHECK_NOWARM 16

typedef struct {
    tpb_round_t *r;
    long *shards; /**< n x world shards */
    int n, cap;
} tpb_rounds_t;

/** What only rank 0 holds: the record and what it is made of. */
typedef struct {
    tpb_record_t rec;
    tpb_device_info_t *devices; /**< world entries */
    tpb_clock_sample_t *sync0;  /**< offsets at the start */
    tpb_clock_sample_t *sync1;  /**< offsets at the latest re-sync */
    char mpi_version[MPI_MAX_LIBRARY_VERSION_STRING];
    tpb_calfile_t cal;  /**< --calibration-file */
    double progress_at; /**< the last progress line (0: none yet) */
    double start_at;    /**< the first config's start: the sweep's elapsed time */
    double config_at;   /**< the current config's (or set's) start */
    double beat_at;     /**< the last heartbeat line of the current config */
    double work_done;   /**< the configs started before the current one (tpb_sweep_plan_work) */
    double work_all;    /**< every config of the sweep */
    long iter0;         /**< iter_base when the current config started */
    long iters_now;     /**< ... and its iterations (a set: all of its configs') */
    tpb_rounds_t rounds;
    unsigned char *cal_warned; /**< world entries: its calibration was said not to settle */
    pthread_mutex_t lock;      /**< the record's state and files: one thread at a time (the
                                    main thread, the signal thread, the watchdog's) */
} tpb_recorder_t;

/** A rank's CPU time and its machine's at a moment (sweep_load.c). */
typedef struct {
    double self_s, busy_s, at_s; /**< this process's CPU, the machine's busy time, the wall */
    int ncpu;                    /**< the machine's CPUs (0: not measured) */
    uint64_t machine;            /**< the machine's id (its boot id) */
} tpb_load_mark_t;

/** Most looks a set takes under --budget (its marks' room: this many times --iters). */
#define TPB_BUDGET_LOOKS TPB_RECORD_BUDGET_LOOKS

/** Where the sweep's loop is: the placement and TP group being measured. */
typedef struct {
    MPI_Comm world;         /**< the ranks in the current placement's order (ctx.world at start) */
    const tpb_topo_t *topo; /**< the world in placement order (rank = position) */
    tpb_placement_t placement; /**< of the configs being measured */
    const int *rank_of;        /**< position -> world rank in that placement (the plans') */
    tpb_topo_t placed_topo;    /**< the world in placement order (hosts permuted) */
    MPI_Comm group;            /**< this rank's TP group of the current (placement, tp) */
    int group_tp;              /**< that group's TP degree (the group, not the last plan's) */
    tpb_comm_t *comm;          /**< the backend's communicator of that group */
    long iter_base;            /**< iterations (warm-up included) run before this config */
} tpb_sweep_pos_t;

/** What the sweep has counted and spent so far (every rank). */
typedef struct {
    int nconfigs, check_failed;
    int nsets;                  /**< interleaved sets measured so far */
    int nblocks;                /**< --block: blocks measured so far */
    tpb_record_budget_t budget; /**< --budget: what it spent and left open (the record's
                                     figures; rank 0's decisions, every rank counts them) */
    int stop_every;             /**< measured iterations between two stop checks (agreed) */
    double cal_us;              /**< calibration time not yet booked to a config's host time */
    tpb_load_mark_t load0;      /**< this rank's CPU time and its machine's at the sweep's start */
} tpb_sweep_acct_t;

/** This rank's device, as the sweep's set-up found it (read-only after it). */
typedef struct {
    double peak_gflops;  /**< its peak for the run's dtype */
    int ranks_on_device; /**< ranks of its node driving it (> 1: a shared GPU) */
    int host_waits;      /**< its collectives hold the host (tpb_device_info_t) */
} tpb_sweep_facts_t;

/** A run's sweep (every rank), and rank 0's recorder (run/sweep.h names it; only src/run
 *  sees inside): what main gave, read only (ctx: ctx.world and ctx.topo the world as found,
 *  for clock sync), the plans, this rank's device, where the loop is, what it counted. */
struct tpb_sweep {
    tpb_sweep_ctx_t ctx;
    tpb_plan_list_t plans; /**< every config and how it is measured (run/plan.h): the sweep
                                reads these, not the options; taken from main, freed here */
    tpb_sweep_facts_t facts;
    tpb_sweep_pos_t pos;
    tpb_sweep_acct_t acct;
    tpb_recorder_t *rec; /**< rank 0 only (NULL elsewhere) */
    int held;            /**< rank 0, under the record's lock: a --budget set past its first look */
};

/** The CPU load of the run's machines (sweep_load.c, collective): each rank's CPU time and
 *  its machine's busy time at the sweep's start; at its end rank 0 works out the largest
 *  share of a machine's CPUs that other processes took, for the record's noise line. */
tpb_status_t tpb_sweep_load_mark(tpb_sweep_t *s);
tpb_status_t tpb_sweep_load_end(tpb_sweep_t *s);

/** --budget: a set's first look is complete (on 1) or its records are written (on 0): a stop
 *  meanwhile keeps the record open for it (tpb_sweep_stop). Rank 0; a no-op elsewhere. */
void tpb_sweep_hold(tpb_sweep_t *s, int on);

/** Measure plan p on every rank; rank 0 records it (collective, sweep_config.c). */
tpb_status_t tpb_sweep_config(tpb_sweep_t *s, const tpb_config_plan_t *p);

/** One config while it is measured: its layer, marks and facts (sweep_config.c). */
typedef struct {
    const tpb_config_plan_t *plan; /**< as planned */
    tpb_config_plan_t moved;       /**< an adaptive round's plan (shards NULL: none) */
    tpb_layer_t *l;
    tpb_mark_t *raw;        /**< this rank's marks of the measured iterations */
    tpb_mark_t *all;        /**< rank 0: every rank's, gathered */
    tpb_rank_info_t info;   /**< this rank's facts */
    tpb_rank_info_t *infos; /**< rank 0: every rank's */
    long first;             /**< the run's iteration of its first measured one */
    int set;                /**< the interleaved set it was measured in (-1: alone) */
    int rounds;             /**< ... and that set's rounds (0: alone) */
    int id;                 /**< its config id, once closed */
    int block;              /**< --block: the block it ran in (-1: none) */
    int block_pos;          /**< ... and its place in the block's order */
    int cap;                /**< measured iterations it has room for (set before open; 0:
                                 --iters) */
    int iters;              /**< measured iterations (--iters, or more under --budget) */
    int looks;              /**< --budget: the looks its set took (0: no budget) */
    double host_us;         /**< its host time: set-up (inputs, plans, untimed iteration,
                                 probe, the calibration before it) and close (check, gather) */
    double drawn_s;         /**< ... of which drawing inputs (once a shape: run/inputs.h) */
} tpb_config_run_t;

/** A config's layer built and its emulation probed (collective); free with tpb_config_free
 *  whatever it returns. */
tpb_status_t tpb_config_open(tpb_sweep_t *s, const tpb_config_plan_t *p, tpb_config_run_t *c);

/** After its measurement: --check, the overlap parts, the gather, the re-sync and rank 0's
 *  record (collective). */
tpb_status_t tpb_config_close(tpb_sweep_t *s, tpb_config_run_t *c);

void tpb_config_free(tpb_config_run_t *c);

/** Whether plan p's timelines go to rank 0 in parts (--gather, sweep_gather.c). */
int tpb_sweep_in_parts(const tpb_sweep_t *s, const tpb_config_plan_t *p);

/**
 * Config c (of plan p) measured: its timelines to rank 0 in parts (collective; run/gather.h):
 * every rank's marks on rank 0's clock, each TP group analysed by its first rank; out (rank
 * 0's) receives the analysis and the picked groups' marks.
 */
tpb_status_t tpb_sweep_gather_parts(tpb_sweep_t *s, const tpb_config_plan_t *p,
                                    const tpb_config_run_t *c, tpb_gathered_t *out);

/**
 * k units of nl configs each, c[k * nl] (each open), measured side by side (collective,
 * sweep_measure.c). A unit is one config (nl = 1: the policies of one block, --interleave
 * on), or a --block's GEMMs, which every iteration of the unit runs back to back in
 * order. Every unit's warm-up, then tpb_interleave_rounds(iters) rounds in which each unit
 * runs one block of its measured iterations, in tpb_interval_order's order (ABBA), a
 * barrier after every block (one round, each unit's iterations in one go, for a single
 * unit or a --block with --interleave off). Each config keeps its own marks (c[i].raw)
 * and its iterations in its own order; c[i].rounds receives the rounds (0: one).
 */
tpb_status_t tpb_sweep_measure_set(tpb_sweep_t *s, tpb_config_run_t *c, int k, int nl);

/**
 * --block, after the configs c[nl] of one block are closed (collective; rank 0 records):
 * the block's step per iteration from its GEMMs' gathered marks, its tokens per second
 * per rank, recorded as the block s->nblocks + (its unit).
 */
tpb_status_t tpb_sweep_block(tpb_sweep_t *s, const tpb_config_run_t *c, int nl);

/**
 * --block --budget, rank 0 after look `look` of a block's set (k units of nl GEMMs, one per
 * policy; steps[u n + i] unit u's block step in its measured iteration i, n so far in
 * `rounds` rounds): 1 where more of the set may decide the block's TP ranking: a ranking
 * against the blocks recorded before open and involving the set's degree, or a unit's own
 * interval too wide to rank it where the block has another degree (tpb_answer_block_open,
 * *out says which); 0 elsewhere, on the other ranks and without --block.
 */
int tpb_sweep_block_open(const tpb_sweep_t *s, const tpb_config_run_t *c, int k, int nl,
                         const double *steps, int n, int rounds, int look, tpb_block_open_t *out);

/** Work of plan p for the ETA (progress.c): its iterations' FLOPs on a rank plus 64 a byte
 *  of its buffers; 0 for a skipped entry. Only ratios matter. Pure. */
double tpb_sweep_plan_work(const tpb_sweep_t *s, const tpb_config_plan_t *p);

/** Rank 0's progress line on stderr when config p starts (or a set of k led by p; work:
 *  theirs): quiet for the first 5 s, then at most one every 5 s, with the elapsed time and
 *  the time left (the elapsed time scaled by the work left over the work done). */
void tpb_sweep_progress(tpb_sweep_t *s, const tpb_config_plan_t *p, double work, int k);

/** Rank 0's progress line "tpbal: [pass K of N, ]TEXT" on stderr, folded at the plans'
 *  err_width (continuations indented 4 spaces): the one way progress, heartbeat and
 *  --budget lines are said. */
void tpb_sweep_say(const tpb_sweep_t *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/** The sweep's first progress line, before its first config (rank 0, stderr; none with
 *  -q): the configs, the ranks and the whole run's estimate (run/estimate.h) at the
 *  backend's rate guess, taken on every rank at once and the slowest kept (collective). */
void tpb_sweep_announce(tpb_sweep_t *s);

/** A heartbeat line on stderr (rank 0) every 10 s of a config that runs longer: its
 *  iterations done, its time so far (called between iterations; cheap otherwise). */
void tpb_sweep_beat(tpb_sweep_t *s);

/** Rounds of an interleaved set of `iters` measured iterations: blocks of about 4, 3 to 10
 *  rounds (fewer iterations: one round, not paired). */
static inline int tpb_interleave_rounds(int iters)
{
    int r = iters / 4;
    return iters < 6 ? 1 : r < 3 ? 3 : r > 10 ? 10 : r;
}

/** The measured iterations set c[k * nl] (k units of nl layers) has room for: --iters, or
 *  TPB_BUDGET_LOOKS times that where --budget may extend it (sweep_budget.c). */
int tpb_sweep_budget_cap(const tpb_sweep_t *s, const tpb_config_plan_t *const *p, int k, int nl);

/**
 * After `look` looks of a set measured side by side (k units of nl layers; rank 0's steps[u n
 * + i]: unit u's step in its measured iteration i, n so far in `rounds` rounds; look_us: the
 * last look's time):
 * whether to measure one more look (collective: rank 0 decides and says why on stderr,
 * every rank learns it in *more and spends the same budget).
 */
tpb_status_t tpb_sweep_budget_more(tpb_sweep_t *s, const tpb_config_run_t *c, int k, int nl,
                                   const double *steps, int n, int rounds, int look, double look_us,
                                   const double *rate, int *more);

/**
 * --budget after look `look` of set c (collective, sweep_straggle.c): rate[nb] this rank's
 * rate in every block of the set's nc configs so far (config by config, nb / nc each, a
 * block an interleaved round); rank 0 receives in *p the test of the persistent straggler over
 * these blocks at the look's share of 1 % (its rank a world rank) and in *open whether it is still
 * open (base/detect.h: tpb_detect_open); 0 where the set has no blocks (TP 1, comm-only).
 */
tpb_status_t tpb_sweep_straggler_look(tpb_sweep_t *s, const tpb_config_run_t *c, int nc,
                                      const double *rate, int nb, int look, int *open,
                                      tpb_persistent_t *p);

/** A new clock sample per rank where it is about as certain as the start's (collective). */
tpb_status_t tpb_sweep_resync(tpb_sweep_t *s);

/**
 * The timed loop of plan p (collective, sweep_measure.c): warm-up, then the
 * measured iterations (in rounds of --rebalance-every for the adaptive policy,
 * whose rounds may hand on a plan with new shards in *moved (tpb_plan_reshard; the
 * caller releases it; moved->shards stays NULL otherwise) and replace *l with a layer
 * built for it). Marks of the measured iterations into raw[iters]. A failure of this rank
 * alone (the others may be left inside the loop) is not agreed (tpb_err_agreed).
 */
tpb_status_t tpb_sweep_measure(tpb_sweep_t *s, const tpb_config_plan_t *p, tpb_config_plan_t *moved,
                               tpb_layer_t **l, tpb_mark_t *raw);

/**
 * --overlap chunked, after plan p's measurement (collective, sweep_overlap.c): every
 * rank's chunk marks of the measured iterations and its alone timings (the whole GEMM,
 * the chunks' GEMMs, the chunks' collectives, the serial collective: medians of a few,
 * outside the timed loop) gathered to rank 0 by position: *chunk (size x iters x chunks
 * x 3) and *alone (size x TPB_ALONE_N), rank 0 only (owned by the caller; NULL elsewhere).
 */
tpb_status_t tpb_sweep_overlap(tpb_sweep_t *s, const tpb_config_plan_t *p, tpb_layer_t *l,
                               double **chunk, double **alone);

/** Rank 0: the gathered chunk marks onto its clock with the samples the config's other marks
 *  are corrected with (after the config's re-sync). */
void tpb_sweep_overlap_clock(const tpb_sweep_t *s, const tpb_config_plan_t *p, double *chunk);

/**
 * The speeds of the block of plan list->p[i] (collective over the world, in
 * sweep_speeds.c): the calibration file, or a calibration GEMM at each rank's
 * even shard (added to the file); given to every plan of the block.
 */
tpb_status_t tpb_sweep_speeds(tpb_sweep_t *s, int i);

#endif /* TPB_SWEEP_STATE_H */
