/*
 * metrics.h - the formulas of doc/METRICS.md. Pure functions: inputs are plain
 * arrays, nothing is allocated except where stated, nothing is printed.
 */
#ifndef TPB_METRICS_H
#define TPB_METRICS_H

#include <stddef.h>

#include "base/stats.h"

/** Load balance LB = min T_r / max T_r (1 is perfect). */
double tpb_metric_lb(const double *t, size_t n);

/** Utilisation U = sum T_r / (n * max T_r). */
double tpb_metric_utilisation(const double *t, size_t n);

/** Parallel efficiency E = t1 / (n * t_step); NaN when t1 is unknown (NaN or <= 0). */
double tpb_metric_efficiency(double t1, size_t n, double t_step);

/** Heterogeneous efficiency E_het = (w_total / sum s_r) / t_step, with speeds s_r in
 *  work per time unit of t_step; NaN if any speed is not positive. */
double tpb_metric_efficiency_het(double w_total, const double *speeds, size_t n, double t_step);

/** nccl-tests algorithm bandwidth in GB/s: bytes / time (time in microseconds). */
double tpb_metric_algbw_gbs(double bytes, double time_us);

/** Achieved TFLOP/s for flop floating-point operations in time_us microseconds. */
double tpb_metric_tflops(double flop, double time_us);

/** How far the alpha-beta model holds for a series. */
typedef enum {
    TPB_FIT_OK = 0,       /**< both terms resolved, R^2 >= 0.9 */
    TPB_FIT_EXACT,        /**< two sizes: a line through two points, nothing checks it */
    TPB_FIT_POOR,         /**< R^2 < 0.9: T is not L + V/B over these sizes */
    TPB_FIT_NO_LATENCY,   /**< a free fit put L below 0: L fixed at 0, only B fitted */
    TPB_FIT_NO_BANDWIDTH, /**< larger messages were no slower: B not resolved (infinite) */
} tpb_fit_quality_t;

/** "ok", "exact", "poor", "latency not resolved", "bandwidth not resolved". */
const char *tpb_metric_fit_quality_name(tpb_fit_quality_t q);

/** The alpha-beta fit of one series, with 95 % intervals (NaN where there is no residual
 *  to estimate them from; hi bandwidth is infinite when the slope's interval reaches 0). */
typedef struct {
    double latency_us;    /**< L per message, >= 0 */
    double bandwidth_gbs; /**< B > 0 (infinite when not resolved) */
    double r2;            /**< weighted coefficient of determination */
    double latency_lo_us, latency_hi_us;
    double bandwidth_lo_gbs, bandwidth_hi_gbs;
    int points;
    tpb_fit_quality_t quality;
} tpb_comm_fit_t;

/** Least-squares fit of T(V) = r*L + V/B over n points (v bytes, t microseconds), weighted
 *  by 1/t^2 (relative residuals: sizes spanning decades all count), constrained to the
 *  physical L >= 0 and B > 0 (a term that the data push past its bound is fixed at it
 *  and said so in quality). Returns 0 on success, -1 if fewer than two distinct sizes or a
 *  time is not > 0. */
int tpb_metric_comm_fit(const double *v, const double *t, size_t n, int r, tpb_comm_fit_t *fit);

/** Predicted speed-up of a weighted over an even split with equal total work:
 *  mean(s) / min(s). */
double tpb_metric_predicted_speedup(const double *speeds, size_t n);

/** Relative straggler score of each rank: out[r] = min_i T_i / T_r. */
void tpb_metric_relative_scores(const double *t, size_t n, double *out);

/** The decomposition of seed 1 for one TP degree: T = T_comp/N + T_comm + T_idle. */
typedef struct {
    double comp_us; /**< T_comp / N: the ranks' mean compute */
    double comm_us; /**< T_comm(N): the transfer after the last arrival */
    double idle_us; /**< T_idle(N) = T - comp - comm: waits and start skew */
} tpb_decomp_t;

/** The terms of a mean step from the means of the step-setting group's mean compute and
 *  transfer (base/timeline.h's comp_mean, xfer_mean): they add up to step_us exactly, and
 *  idle >= 0 when they come from one timeline (A - min c0 >= any rank's compute). Pure. */
tpb_decomp_t tpb_metric_decompose(double comp_us, double comm_us, double step_us);

#endif /* TPB_METRICS_H */
