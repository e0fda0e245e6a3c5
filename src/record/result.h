/*
 * result.h - everything measured and derived for one config, as plain data,
 * and the pure functions that derive the metrics of doc/METRICS.md from the
 * timeline statistics and the configs measured before. The writers (report.h,
 * trace.h, record.h) only format a tpb_result_t.
 */
#ifndef TPB_RESULT_H
#define TPB_RESULT_H

#include <string.h>

#include "base/disturb.h"
#include "base/config_key.h"
#include "base/detect.h"
#include "base/overlap.h"
#include "base/dtype.h"
#include "base/metrics.h"
#include "base/timeline.h"
#include "base/whatif.h"
#include "base/tpb_types.h"

/**
 * Per-rank facts gathered to rank 0 besides the marks. The fields are listed
 * once, as X(C type, name, MPI datatype), so that the struct and the MPI
 * datatype that gathers it (run/wire.c) cannot disagree:
 *   speed             speed used by the policy (NaN if none)
 *   fraction          intended fraction (weighted) or shard / total (even, cost, adaptive)
 *   flop              this rank's GEMM FLOPs
 *   mem               bytes allocated for the config
 *   max_err           --check max relative error (NaN if not checked)
 *   speed_spread      relative IQR of a calibrated speed (NaN otherwise)
 *   peak_gflops       the device's theoretical peak for the dtype (0: unknown)
 *   emulate_achieved  slowdown the emulation achieved at set-up (1: none)
 *   shard             elements of the split dimension
 *   speed_samples     GEMMs timed by the calibration (0 if none)
 *   device_shared     ranks of its node driving its device (> 1: a shared GPU, whose
 *                     times are for correctness, not speed)
 *   marks_within_us   how far its marks of the measured loop may lie from their events on its
 *                     clock (a GPU's anchors: backend.h's marks_within; 0: clock reads)
 */
#define TPB_RANK_INFO_FIELDS(X)                                                                    \
    X(double, speed, MPI_DOUBLE)                                                                   \
    X(double, fraction, MPI_DOUBLE)                                                                \
    X(double, flop, MPI_DOUBLE)                                                                    \
    X(double, mem, MPI_DOUBLE)                                                                     \
    X(double, max_err, MPI_DOUBLE)                                                                 \
    X(double, speed_spread, MPI_DOUBLE)                                                            \
    X(double, peak_gflops, MPI_DOUBLE)                                                             \
    X(double, emulate_achieved, MPI_DOUBLE)                                                        \
    X(double, marks_within_us, MPI_DOUBLE)                                                         \
    X(long, shard, MPI_LONG)                                                                       \
    X(int, speed_samples, MPI_INT)                                                                 \
    X(int, device_shared, MPI_INT)

#define TPB_INFO_FIELD_(type, name, mpi) type name;
typedef struct {
    TPB_RANK_INFO_FIELDS(TPB_INFO_FIELD_)
} tpb_rank_info_t;
#undef TPB_INFO_FIELD_

/** One round of the adaptive policy (world-wide view). */
typedef struct {
    int iters;      /**< measured iterations in the round */
    double lb;      /**< worst group's LB over the round (median compute times) */
    double step_us; /**< slowest rank's median span (compute + wait + collective) */
    double gain;    /**< predicted gain of re-partitioning (rank 0's group) */
    int rebalanced; /**< some group re-partitioned after this round */
} tpb_round_t;

typedef struct {
    TPB_CONFIG_KEY; /**< its identity, from its plan (base/config_key.h) */
    int id;         /**< config index in the run, from 0 */
    const char *backend;
    int world, iters, warmup;
    tpb_coll_t col_collective; /**< --col-collective (recorded for every split) */
    tpb_dtype_t dtype;
    tpb_speed_source_t speed_source;
    tpb_emulate_mode_t emulate_mode;
    const double *emulate_asked; /**< factors in effect per world rank at the first measured
                                      iteration (NULL: the run's --emulate-speed) */
    int emulate_switch_iter;     /**< measured iteration from which --emulate-schedule's
                                      factors hold, when it falls inside (-1: none) */
    const int *rank_of;          /**< position -> world rank (NULL: identity); the per-rank
                                      arrays of this result are by position */
    int max_group_nodes;         /**< most nodes one TP group spans (set by the record) */
    const int *kept_groups;      /**< --gather parts: the TP groups whose marks rank 0 kept,
                                      ascending (NULL: every group's) */
    int nkept_groups;
    int analysed;              /**< --gather parts: ranks, stats, whatif, steps and slow come
                                    analysed in parts (run/gather.h); the record takes them */
    const tpb_round_t *rounds; /**< adaptive policy: nrounds rounds (borrowed) */
    const long *round_shards;  /**< nrounds x world shards */
    int nrounds;
    tpb_coll_t coll;     /**< the collective the config ran */
    double busbw_factor; /**< its nccl-tests bus-bandwidth factor at this TP degree */
    double coll_bytes;   /**< bytes of the collective's whole result (nccl-tests' S) */
    /* per rank (world entries, borrowed) */
    const tpb_rank_info_t *info;
    const tpb_rank_stats_t *ranks;
    tpb_config_stats_t stats;
    tpb_whatif_t whatif;       /**< the replay with median compute (NaN with --timeline off) */
    const double *steps;       /**< every measured iteration's step (NULL with --timeline off) */
    int interleave_set;        /**< --interleave: the set it was measured in (-1: alone) */
    int interleave_rounds;     /**< ... and its rounds (0: alone) */
    int budget_looks;          /**< --budget: the looks its set took (0: no budget) */
    int block;                 /**< --block: the block it ran in (-1: none) */
    int block_pos;             /**< ... its place in the block's order */
    const tpb_slow_t *slow;    /**< per block and group, the slowest rank (base/detect.h) */
    const double *slow_dev;    /**< per block and position, its log rate against the others' */
    int nslow;                 /**< entries of slow: blocks x groups */
    int polls;                 /**< pieces of a chunk's GEMM */
    const double *chunk_marks; /**< world x iters x chunks x 3 on rank 0's clock (borrowed) */
    tpb_overlap_t overlap;     /**< its figures (base/overlap.h), when chunks > 0 */
    double serial_step_us;     /**< chunked: the median step of the same config run serially
                                    (overlap none) in this run, NaN if it was not */
    tpb_disturb_t disturb;     /**< its measured steps one figure, bimodal or spiky (base/disturb.h;
                                    undecided with --timeline off: no step of each iteration) */
    double host_s;     /**< rank 0's wall time for it outside its timed loops: set-up (inputs,
                            plans, untimed iteration, probe, its calibration) and close (check,
                            gather), up to its record (doc/METRICS.md, "Host time") */
    double inputs_s;   /**< ... of which rank 0 drew inputs (the first config of a shape) */
    const char *trace; /**< the trace file holding its timeline in --out (NULL: none): a
                            killed run's files, for --force, are what its records name */
    /* derived */
    double lb, u;      /**< worst group */
    double e, e_het;   /**< NaN when unknown */
    double r;          /**< compute / comm */
    double tflops;     /**< per group: layer FLOP / median step */
    double layer_flop; /**< the layer's FLOPs over one group (block-sparse: what is computed);
                            0: the dense 2 M N K */
    double
        pct_peak; /**< worst group: group GFLOP/s over the sum of its ranks' peaks (NaN: unknown) */
    double busbw_gbs, algbw_gbs;
    double predicted_speedup; /**< weighted rows: the even step over the step predicted from
                                   the even config's per-rank compute and the weighted
                                   shards; without that config mean(s)/min(s) of the worst
                                   group (NaN without speeds) */
    double speedup;           /**< T_even / T_weighted, on the weighted row (else NaN) */
    double t1_us;             /**< T_1 used for e (NaN if no TP=1 point) */
    tpb_check_t check;
    double max_rel_err;
} tpb_result_t;

/**
 * Derive lb, u, e, e_het, r, tflops, bandwidths and predicted_speedup from
 * res->info, res->ranks and res->stats (which must be set). t1_us is the
 * TP=1 step time of the same shape and split (NaN if unknown). Pure.
 */
void tpb_result_derive(tpb_result_t *res, double t1_us);

/** The world rank at position r (the identity without a placement order). */
static inline int tpb_result_world_rank(const tpb_result_t *res, int r)
{
    return res->rank_of ? res->rank_of[r] : r;
}

/** Rank r's GEMM rate over its peak (NaN when the peak or the time is unknown). Pure. */
double tpb_result_rank_pct_peak(const tpb_result_t *res, int r);

/** Step samples kept per config in the record (tpbal-compare's two-sample decisions):
 *  every iteration's step up to this many, else this many quantiles of them. */
#define TPB_STEP_SAMPLES 1000

/** The most ranks sharing one device among res's ranks (1: none shares). Pure. */
int tpb_result_device_shared(const tpb_result_t *res);

/** The record's step samples of res into out[TPB_STEP_SAMPLES], rounded to 1 ns: all
 *  iterations' steps while iters <= TPB_STEP_SAMPLES, else the quantiles (j + 0.5) /
 *  TPB_STEP_SAMPLES. Returns how many (0 without steps); *quantiles says which. Pure. */
int tpb_result_step_samples(const tpb_result_t *res, double *out, int *quantiles);

/** A --block measured (base/block.h): its GEMMs' configs run back to back as one step. */
typedef struct {
    TPB_CONFIG_KEY;   /**< its GEMMs' TP degree, placement, policy and sequence parallelism
                           (their first GEMM's key) */
    int id;           /**< the block's index in the run, from 0 */
    const char *name; /**< the preset's (the model's) name */
    int world, iters;
    long tokens;         /**< M: rows (tokens) of every GEMM of the block */
    int ngemm;           /**< its GEMMs */
    const int *configs;  /**< their config ids, in the block's order (borrowed) */
    const double *steps; /**< the block's step of every measured iteration (borrowed) */
    int set, rounds;     /**< interleaved: its set (-1: alone) and the set's rounds */
    int looks;           /**< --budget: the looks its set took (0: no budget) */
} tpb_block_result_t;

/** The per-position arrays a finished config keeps (tpb_history_t.arr): read them with
 *  tpb_history_load (record/spill.h), which reads them from memory or the record's file. */
typedef enum {
    TPB_HIST_COMPUTE, /**< each position's median compute, us (double[world]) */
    TPB_HIST_WORK,    /**< each position's GEMM FLOPs (double[world]) */
    TPB_HIST_SLOW,    /**< its blocks' slowest ranks, as world ranks (tpb_slow_t[nslow]) */
    TPB_HIST_DEV,     /**< per block and world rank, its log rate against the others' */
    TPB_HIST_ARRAYS
} tpb_hist_array_t;

/** A finished config, as later configs and the summary need it. */
typedef struct {
    TPB_CONFIG_KEY; /**< its identity (its result's) */
    int id;         /**< its config id (a block's: the block's id) */
    int world;      /**< entries of the per-position arrays */
    tpb_coll_t coll;
    double coll_bytes;
    int group_nodes; /**< most nodes one group spans */
    double step_med, xfer_med;
    double busbw_gbs; /**< the table's busbw (NaN: unknown) */
    double t1_us;     /**< TP=1 only: the fastest rank's time for the whole layer (NaN: none) */
    double *steps;    /**< every measured iteration's step, in its order (owned; NULL: none) */
    int nsteps;
    int set, rounds;               /**< interleaved: its set (-1: alone) and the set's rounds */
    int looks;                     /**< --budget: the looks the set took (0: no budget) */
    void *arr[TPB_HIST_ARRAYS];    /**< its per-position arrays in memory (owned; NULL: none, or
                                        in spill) */
    const struct tpb_spill *spill; /**< the file holding the arrays of `spilled` (NULL: none) */
    unsigned spilled;              /**< bit a: array a is in spill at at[a] */
    long at[TPB_HIST_ARRAYS];
    int nslow; /**< entries of its TPB_HIST_SLOW: blocks x groups */
    /* what the closing summary says of it */
    double step_mean, xfer_mean, comp_mean; /**< T, T_comm, T_comp/N: they add up (NaN: unknown) */
    double speedup, predicted_speedup;      /**< weighted and cost rows: over the even config */
    int straggler_world;                    /**< world rank of a straggler beyond noise, -1: none */
    double straggler_frac, straggler_late_us;
    double spread_worst;   /**< calibrated speeds: the largest spread of a rank, NaN: none */
    int spread_world;      /**< and that rank (world) */
    tpb_overlap_t overlap; /**< its figures (chunked configs, kept apart from the serial) */
} tpb_history_t;

/** Free what h owns. */
void tpb_history_free(tpb_history_t *h);

/** What the answer reads of block b (its identity, steps, set, rounds and looks) into *h,
 *  its step's median step_med; h borrows b's steps. Pure. */
void tpb_block_history(const tpb_block_result_t *b, double step_med, tpb_history_t *h);

/** 1 if a and b measured the same shape (and layer name). Pure. */
static inline int tpb_history_same_shape(const tpb_history_t *a, const tpb_history_t *b)
{
    return tpb_config_key_same(&a->key, &b->key, TPB_KEY_SIZES | TPB_KEY_SHAPE);
}

/** 1 if a and b belong to one answer: the same shape, TP degree and placement. Pure. */
static inline int tpb_history_same_group(const tpb_history_t *a, const tpb_history_t *b)
{
    return tpb_config_key_same(&a->key, &b->key,
                               TPB_KEY_SIZES | TPB_KEY_SHAPE | TPB_KEY_TP | TPB_KEY_PLACEMENT);
}

/** 1 if a and b are configs of the same layer: split, shape and sequence parallelism (a
 *  TP-1 config has nothing to scatter and stands for either). Pure. */
static inline int tpb_history_same_layer(const tpb_history_t *a, const tpb_history_t *b)
{
    return tpb_config_key_same(&a->key, &b->key, TPB_KEY_SPLIT | TPB_KEY_SIZES) &&
           (tpb_config_key_same(&a->key, &b->key, TPB_KEY_VARIANT) || a->tp == 1 || b->tp == 1);
}

/**
 * Everything a config's record needs beyond its own measurements, in one function (pure
 * but for reading the even config's per-rank figures back: record/spill.h): T_1 (its own fastest
 * rank at TP = 1, else the fastest rank of the TP = 1 config of the same shape and split in hist),
 * the metrics of tpb_result_derive, the speed-up over the even config of the same (tp, shape,
 * split) in hist and the speed-up predicted from that config's measurements
 * (weighted and cost rows: tpb_predict_weighted_step), and the --check verdict from every
 * rank's max_err (TPB_CHECK_OFF when check_on is 0; the tolerance is the
 * dtype's). res->ranks and res->stats must be set.
 */
void tpb_result_finish(tpb_result_t *res, const tpb_history_t *hist, int nhist, int check_on);

/**
 * The step a weighted (or cost-aware) split should take, predicted from the even config
 * alone: each rank computes for its even time scaled by its new work (its GEMM FLOPs,
 * which follow the shard, or the shard's cost under a --cost-profile: c_r w_r / e_r, its
 * measured speed on the work it now gets), and everything else in the even step (the
 * collective, the waits not due to compute) stays:
 *   T_w = T_even - max_r c_r + max_r c_r w_r / e_r
 * over the world's ranks (the step is the slowest group's). NaN if a time or the work
 * is missing. Pure.
 */
double tpb_predict_weighted_step(double even_step, const double *even_compute,
                                 const double *even_work, const double *new_work, int world);

#endif /* TPB_RESULT_H */
