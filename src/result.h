/*
 * result.h - everything measured and derived for one config, and the pure
 * function that derives the metrics of doc/METRICS.md from the timeline
 * statistics. The writers (report.h) only format a tpb_result_t.
 */
#ifndef TPB_RESULT_H
#define TPB_RESULT_H

#include "dtype.h"
#include "options.h"
#include "timeline.h"

/** Per-rank facts gathered to rank 0 besides the marks. */
typedef struct {
    double shard;         /**< elements of the split dimension */
    double speed;         /**< speed used by the policy (NaN if none) */
    double fraction;      /**< intended fraction (weighted) or shard / total */
    double flop;          /**< this rank's GEMM FLOPs */
    double mem;           /**< bytes allocated for the config */
    double max_err;       /**< --check max relative error (NaN if not checked) */
    double speed_spread;  /**< relative IQR of the calibrated speed (NaN if not calibrated) */
    double speed_samples; /**< GEMMs timed by the calibration (0 if none) */
} tpb_rank_info_t;

typedef struct {
    int id; /**< config index in the run, from 0 */
    const char *backend;
    int world, tp, iters, warmup;
    tpb_split_t split;
    tpb_policy_t policy;
    tpb_colcoll_t colcoll;
    long m, n, k;
    tpb_dtype_t dtype;
    char shape_name[48];
    const char *speed_source; /**< "calibration", "speeds", "file" or "none" */
    /* per rank (world entries, borrowed) */
    const tpb_rank_info_t *info;
    const tpb_rank_stats_t *ranks;
    tpb_config_stats_t stats;
    /* derived */
    double lb, u;    /**< worst group */
    double e, e_het; /**< NaN when unknown */
    double r;        /**< compute / comm */
    double tflops;   /**< per group: layer FLOP / median step */
    double busbw_gbs, algbw_gbs;
    double predicted_speedup; /**< mean(s)/min(s) of the worst group (NaN without speeds) */
    double speedup;           /**< T_even / T_weighted, on the weighted row (else NaN) */
    double t1_us;             /**< T_1 used for e (NaN if no TP=1 point) */
    const char *check;        /**< "pass", "fail" or "off" */
    double max_rel_err;
} tpb_result_t;

/** Bytes moved by the config's collective (the whole M x N output). */
double tpb_result_coll_bytes(const tpb_result_t *res);

/**
 * Derive lb, u, e, e_het, r, tflops, bandwidths and predicted_speedup from
 * res->info, res->ranks and res->stats (which must be set). t1_us is the
 * TP=1 step time of the same shape and split (NaN if unknown). Pure.
 */
void tpb_result_derive(tpb_result_t *res, double t1_us);

#endif /* TPB_RESULT_H */
