/*
 * sweep.h - the whole run: every (tp, shape, split, policy) config, measured
 * on every rank, gathered to rank 0 and handed to its record (out/record.h).
 *
 * The main header of src/run/ (sweep, TP layer, split orientations,
 * calibration, clock sync, topology, agreement): run/ may include every layer
 * below it; nothing below run/ includes run/ (see base/tpb_types.h).
 */
#ifndef TPB_SWEEP_H
#define TPB_SWEEP_H

#include <stdio.h>

#include "backend/backend.h"
#include "base/clock.h"
#include "base/slurm.h"
#include "base/topo.h"
#include "cli/options.h"
#include "out/record.h"
#include "run/calibrate.h"
#include "run/layer.h"

/** One config of the sweep: a TP degree, shape, split and policy. */
typedef struct tpb_point {
    int tp;
    MPI_Comm group;
    tpb_comm_t *comm;
    const tpb_shape_t *shape;
    tpb_split_t split;
    tpb_policy_t policy;
    const double *speeds;       /**< group speeds (NaN-free) or NULL */
    const tpb_cal_speed_t *cal; /**< the same with their spread and sample count, or NULL */
    tpb_speed_source_t speed_source;
} tpb_point_t;

/** The measuring context of a run (every rank); rank 0 also holds the record. */
typedef struct {
    MPI_Comm world; /**< the ranks in the current placement's order (MPI_COMM_WORLD at start) */
    MPI_Comm real_world;         /**< MPI_COMM_WORLD: clock sync */
    const tpb_topo_t *real_topo; /**< where every world rank runs */
    tpb_placement_t placement;   /**< of the configs being measured */
    int *rank_of;                /**< position -> world rank in that placement (every rank) */
    tpb_topo_t placed_topo;      /**< the world in placement order (hosts permuted) */
    const tpb_options_t *o;
    const tpb_backend_ops_t *ops;
    tpb_backend_t *be;
    const tpb_topo_t *topo; /**< the world in placement order (rank = position) */
    const tpb_clock_t *clock;
    const char *command_line;
    const tpb_slurm_t *slurm; /**< what Slurm says about the job (present = 0 without it) */
    FILE *out;                /**< the table (stdout) */
    /* rank 0 only */
    tpb_record_t rec;           /**< what rank 0 writes */
    tpb_device_info_t *devices; /**< world entries */
    tpb_clock_sample_t *sync0;  /**< offsets at the start */
    tpb_clock_sample_t *sync1;  /**< offsets at the latest re-sync */
    char mpi_version[MPI_MAX_LIBRARY_VERSION_STRING];
    tpb_cal_table_t cal;
    double progress_at;
    /* all ranks */
    int nconfigs, total_configs, check_failed;
    long iter_base;     /**< iterations (warm-up included) run before this config */
    double peak_gflops; /**< this rank's device peak for the run's dtype */
    /* the adaptive policy's rounds of the current config (rank 0) */
    tpb_round_t *rounds;
    long *round_shards; /**< nrounds x world shards */
    int nrounds, cap_rounds;
    /** A rank failed inside a timed loop and the others may be stuck in it:
     *  main must abort the job rather than finalize. */
    int fatal;
} tpb_sweep_t;

/**
 * Set up a sweep (collective): gather device facts and clock offsets to rank 0,
 * print the header, load the calibration file. On error nothing is kept.
 */
tpb_status_t tpb_sweep_init(tpb_sweep_t *s);

/** Run every config (collective). On error s->fatal says whether the ranks agree. */
tpb_status_t tpb_sweep_run(tpb_sweep_t *s);

/** Final clock sync, metadata and summary (collective). */
tpb_status_t tpb_sweep_finish(tpb_sweep_t *s);

/**
 * Rank 0, after an error: rewrite the result files with the run's status
 * ("timeout", "interrupted" or "failed") and the configs measured so far (a
 * no-op before the first config). Not collective: safe when other ranks hang.
 */
void tpb_sweep_close(tpb_sweep_t *s, tpb_status_t why);

void tpb_sweep_free(tpb_sweep_t *s);

/** The splits to run for shape sh: its preset's natural split, else --split. */
unsigned tpb_sweep_shape_splits(const tpb_sweep_t *s, const tpb_shape_t *sh);

/** 1 if TP degree tp divides the world (else the sweep skips it). */
int tpb_sweep_tp_valid(const tpb_sweep_t *s, int tp);

/**
 * Everything that can be checked before measuring, on every rank and agreed
 * (collective): that every (tp, shape, split) fits in this rank's memory at the
 * even split (the weighted split is checked again at its config), and that the
 * calibration file can be written. Nothing is written; on error no file is touched.
 */
tpb_status_t tpb_sweep_preflight(tpb_sweep_t *s);

/**
 * The timed loop of config c (collective, run/measure.c): warm-up, then the
 * measured iterations (in rounds of --rebalance-every for the adaptive policy,
 * which may replace *l with a layer of new shards, written into d->shards).
 * Marks of the measured iterations into raw[iters]. Sets s->fatal when a rank
 * may be left inside the loop.
 */
tpb_status_t tpb_measure(tpb_sweep_t *s, const tpb_point_t *c, tpb_layer_t **l, tpb_layer_desc_t *d,
                         tpb_mark_t *raw);

/**
 * Speeds of this rank's TP group for point c (group entries, collective over
 * the world): --speeds, the calibration file, or a calibration GEMM at each
 * rank's even shard (added to the file). Sets c->speed_source.
 */
tpb_status_t tpb_sweep_speeds(tpb_sweep_t *s, tpb_point_t *c, tpb_cal_speed_t *speeds);

#endif /* TPB_SWEEP_H */
