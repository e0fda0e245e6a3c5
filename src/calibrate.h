/*
 * calibrate.h - measured speeds for the weighted policy, and the calibration
 * file that saves them for reuse.
 *
 * The file is CSV with the header
 *   split,m,n,k,tp,dtype,rank,host,gflops
 * one line per rank and config key; a key is (split, m, n, k, tp, dtype).
 */
#ifndef TPB_CALIBRATE_H
#define TPB_CALIBRATE_H

#include "backend/backend.h"

/**
 * Time reps GEMMs of C[m x n] = A[m x k] B[k x n] (after one warm-up) on the
 * backend, with its emulated slowdown, and return the median speed in GFLOP/s.
 * Uses marks [0, 2*reps+2); buffers are allocated and freed here.
 */
tpb_status_t tpb_calibrate_gemm(const tpb_backend_ops_t *ops, tpb_backend_t *be, long m, long n,
                                long k, tpb_dtype_t dt, int reps, double *gflops);

typedef struct {
    int split; /**< TPB_SPLIT_ROW or TPB_SPLIT_COL */
    long m, n, k;
    int tp;
    tpb_dtype_t dtype;
    int rank;
    char host[64];
    double gflops;
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

/** Speeds of ranks [r0, r0+n) for a key; returns 1 if all are present. */
int tpb_caltable_lookup(const tpb_cal_table_t *t, int split, long m, long n, long k, int tp,
                        tpb_dtype_t dt, int r0, int count, double *gflops);

/** Add (or replace) one rank's speed for a key. */
tpb_status_t tpb_caltable_put(tpb_cal_table_t *t, const tpb_cal_entry_t *e);

/** Write the table to path atomically (write then rename). */
tpb_status_t tpb_caltable_save(const char *path, const tpb_cal_table_t *t);

void tpb_caltable_free(tpb_cal_table_t *t);

#endif /* TPB_CALIBRATE_H */
