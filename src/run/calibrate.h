/*
 * calibrate.h - measured speeds for the weighted policy (the calibration file
 * that saves them is record/calfile.h).
 */
#ifndef TPB_CALIBRATE_H
#define TPB_CALIBRATE_H

#include "backend/backend.h"
#include "record/calfile.h"
#include "run/inputs.h"

/** A GEMM shape to calibrate: C[m x n] = A[m x k] B^T in dtype. With `inputs` (X and W of the
 *  config being calibrated, kept by tpb_inputs_prepare), A and B are their top-left blocks,
 *  copied out: the data the config will run on, and no fill; without, a cheap uniform fill. */
typedef struct {
    long m, n, k;
    tpb_dtype_t dtype;
    const tpb_inputs_block_t *inputs; /**< X (>= m x k) and W (>= n x k), or NULL */
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

/**
 * Calibrate every rank of comm at once (collective): after one warm-up GEMM and
 * a barrier, all ranks time GEMMs of shape sh in lock-step rounds of
 * TPB_CAL_BATCH until every rank's spread is at most p->target_spread (with at
 * least p->min_samples) or one rank reaches p->max_samples or p->budget_us.
 * All ranks so see the contention of the real run. The backend's emulated
 * slowdown applies. Buffers are allocated and freed here; marks [0,
 * 2*TPB_CAL_BATCH) are used. The status is agreed on by every rank of comm.
 */
tpb_status_t tpb_calibrate_gemm(tpb_device_t *dev, MPI_Comm comm, const tpb_gemm_shape_t *sh,
                                const tpb_cal_policy_t *p, tpb_cal_speed_t *out);

#endif /* TPB_CALIBRATE_H */
