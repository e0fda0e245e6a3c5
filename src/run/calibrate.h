/*
 * calibrate.h - measured speeds for the weighted policy, and the calibration
 * file that saves them for reuse.
 *
 * The file is CSV with the header
 *   split,m,n,k,tp,dtype,rank,host,gflops,spread,samples
 * one line per rank and config key; a key is (split, m, n, k, tp, dtype).
 * Files of the first format (without spread and samples) are still read.
 */
#ifndef TPB_CALIBRATE_H
#define TPB_CALIBRATE_H

#include "backend/backend.h"

/** A GEMM shape to calibrate: C[m x n] = A[m x k] B^T in dtype. */
typedef struct {
    long m, n, k;
    tpb_dtype_t dtype;
} tpb_gemm_shape_t;

/** When a calibration may stop (see doc/METRICS.md, "Calibration"). */
typedef struct {
    double target_spread; /**< stop once every rank's relative IQR is at most this */
    int min_samples;      /**< ... and it has at least this many samples */
    int max_samples;      /**< stop at this many samples on any rank */
    double budget_us;     /**< or once a rank has sampled this long (after min_samples) */
} tpb_cal_policy_t;

/** GEMMs timed per lock-step round of the calibration. */
#define TPB_CAL_BATCH 4

/** The defaults: 5 % spread, 8..200 samples, 2 s. */
#define TPB_CAL_POLICY_DEFAULT                                                                     \
    ((tpb_cal_policy_t){                                                                           \
        .target_spread = 0.05, .min_samples = 8, .max_samples = 200, .budget_us = 2e6})

/** One rank's calibrated speed and how much to trust it. */
typedef struct {
    double gflops; /**< FLOP of one GEMM / median time */
    double spread; /**< relative interquartile range of the times, (q75 - q25) / median */
    int samples;   /**< GEMMs timed (warm-up excluded) */
} tpb_cal_speed_t;

/**
 * Calibrate every rank of comm at once (collective): after one warm-up GEMM and
 * a barrier, all ranks time GEMMs of shape sh in lock-step rounds of
 * TPB_CAL_BATCH until every rank's spread is at most p->target_spread (with at
 * least p->min_samples) or one rank reaches p->max_samples or p->budget_us.
 * All ranks so see the contention of the real run. The backend's emulated
 * slowdown applies. Buffers are allocated and freed here; marks [0,
 * 2*TPB_CAL_BATCH) are used. The status is agreed on by every rank of comm.
 */
tpb_status_t tpb_calibrate_gemm(const tpb_backend_ops_t *ops, tpb_backend_t *be, MPI_Comm comm,
                                const tpb_gemm_shape_t *sh, const tpb_cal_policy_t *p,
                                tpb_cal_speed_t *out);

typedef struct {
    int split; /**< TPB_SPLIT_ROW or TPB_SPLIT_COL */
    long m, n, k;
    int tp;
    tpb_dtype_t dtype;
    int rank;
    char host[64];
    double gflops;
    double spread; /**< relative IQR of the calibration (NaN if the file had none) */
    int samples;   /**< GEMMs timed (0 if the file had none) */
} tpb_cal_entry_t;

typedef struct {
    tpb_cal_entry_t *e;
    int n, cap;
} tpb_cal_table_t;

/** Read path into t (empty table if the file does not exist). TPB_ERR_INVALID
 *  naming the file and line if it cannot be read or parsed. */
tpb_status_t tpb_caltable_load(const char *path, tpb_cal_table_t *t);

/** Parse CSV text (with header) into t. */
tpb_status_t tpb_caltable_parse(char *text, const char *origin, tpb_cal_table_t *t);

/** Speeds of ranks [r0, r0+count) for a key; returns 1 if all are present. */
int tpb_caltable_lookup(const tpb_cal_table_t *t, int split, long m, long n, long k, int tp,
                        tpb_dtype_t dt, int r0, int count, tpb_cal_speed_t *speeds);

/** Add (or replace) one rank's speed for a key. */
tpb_status_t tpb_caltable_put(tpb_cal_table_t *t, const tpb_cal_entry_t *e);

/** Write the table to path atomically (write then rename). */
tpb_status_t tpb_caltable_save(const char *path, const tpb_cal_table_t *t);

void tpb_caltable_free(tpb_cal_table_t *t);

#endif /* TPB_CALIBRATE_H */
