/*
 * timeline.h - who waited for whom: analysis of the per-iteration marks of
 * every rank of a config (all on rank 0's clock). Pure: no MPI, no I/O.
 *
 * Marks of one iteration on rank r: c0 (compute start), c1 (compute end =
 * arrival a_r at the collective), x1 (collective end). In a TP group,
 * A = max a_r is the last arrival, wait_r = A - a_r, comm_r = x1_r - A.
 */
#ifndef TPB_TIMELINE_H
#define TPB_TIMELINE_H

#include "base/tpb_status.h"

#define TPB_MAX_SPIKES 32 /**< spikes kept per config (all are counted) */

/** The marks of one iteration on one rank, as X(C type, name, MPI datatype): the struct and
 *  its MPI datatype (run/wire.c) come from this one list. */
#define TPB_MARK_FIELDS(X)                                                                         \
    X(double, c0, MPI_DOUBLE)                                                                      \
    X(double, c1, MPI_DOUBLE)                                                                      \
    X(double, x1, MPI_DOUBLE)

#define TPB_MARK_FIELD_(type, name, mpi) type name;
typedef struct {
    TPB_MARK_FIELDS(TPB_MARK_FIELD_)
} tpb_mark_t;
#undef TPB_MARK_FIELD_

/** Per rank, over the measured iterations. Times in microseconds. */
typedef struct {
    double compute_med, compute_p95;
    double wait_med, wait_p95;
    double comm_med, comm_p95;
    double coll_med;      /**< x1 - c1: the collective call as seen by the rank (clock-free) */
    double wait_free_med; /**< clock-free wait estimate: coll - min over the group of coll */
    int last_count;       /**< iterations in which this rank arrived last in its group */
    double lateness_us;   /**< mean (A - second-last arrival) over those iterations */
    double score;         /**< min over the group of compute_med / own compute_med */
} tpb_rank_stats_t;

typedef struct {
    int iter;       /**< measured iteration index */
    int rank;       /**< the rank that arrived last in the group that set the step */
    double step_us; /**< that iteration's step time */
} tpb_spike_t;

/** Per config. The step of an iteration is the largest group step
 *  (max x1 - min c0 within a group) over the groups. */
typedef struct {
    double step_med, step_p95, step_min, step_max;
    double step_mean;      /**< mean step: the T that the summary's T(N) terms add up to */
    double xfer_mean;      /**< mean over iterations of the step-setting group's max x1 - A */
    double comp_mean;      /**< ... of the mean compute of that group's ranks (T_comp/N); the step
                            *   less both is the idle, A - min c0 - mean compute >= 0 */
    double xfer_med;       /**< median over iterations of max_r x1 - A (worst group) */
    double xfer_free_med;  /**< clock-free transfer bound: min over ranks of x1 - c1 */
    int straggler_rank;    /**< rank most often last (ties: larger lateness; -1 if t = 1) */
    double straggler_frac; /**< fraction of iterations it was last in its group */
    double straggler_late_us; /**< its mean lateness */
    int causality_violations; /**< (rank, iteration) with x1 < A (tpb_timeline_violations) */
    int nspikes;              /**< iterations with step > 1.5 x median */
    tpb_spike_t spikes[TPB_MAX_SPIKES];
} tpb_config_stats_t;

/**
 * Analyse marks[world * iters] (rank-major: marks[r * iters + i]) for groups of
 * tp consecutive ranks. ranks[world] and cfg receive the statistics.
 * TPB_ERR_NOMEM if scratch space cannot be allocated (outputs untouched).
 */
tpb_status_t tpb_timeline_analyse(const tpb_mark_t *marks, int world, int tp, int iters,
                                  tpb_rank_stats_t *ranks, tpb_config_stats_t *cfg);

/**
 * Whether the straggler of cfg stands out from noise in groups of tp: last more often than
 * halfway between chance (1/tp) and always, (1 + 1/tp) / 2 of the iterations, and late
 * by at least 5 % of the median step on average. Between equal ranks the last one is
 * whoever happens to be; the table shows it in parentheses and the summary leaves it out.
 */
int tpb_straggler_clear(const tpb_config_stats_t *cfg, int tp);

/** The step of every iteration: the largest group step (max x1 - min c0 within a group). */
void tpb_timeline_steps(const tpb_mark_t *marks, int world, int tp, int iters, double *step);

/**
 * The iterations a trace keeps (--trace-iters N): the N consecutive iterations centred on
 * the slowest step, and every spike (step > 1.5 x the median: the stalls a straggler
 * caused) outside it, up to N of them, the slowest. keep[iters] receives 1 for a kept
 * iteration. n >= iters (or n < 1) keeps all. Returns how many are kept. Linear time. TPB_ERR_NOMEM
 * is not possible: pure.
 */
int tpb_timeline_trace_window(const double *step, int iters, int n, unsigned char *keep);

/**
 * --trace-iters auto: every iteration while rows x iters <= budget, else a window and the
 * spikes (tpb_timeline_trace_window) of budget / rows iterations in all (at least 16): the
 * window gives room to the spikes, at most half of it. keep[iters] as there; returns how
 * many are kept. Pure.
 */
int tpb_timeline_trace_budget(const double *step, int iters, int rows, long budget,
                              unsigned char *keep);

/**
 * Causality violations: (rank r, iteration) pairs in which r's collective ended before its
 * group's last arrival A (by rank q) by more than unc[r] + unc[q], the stated uncertainties
 * (us) of the two ranks' clock offsets: a count above 0 means the clocks are off by more
 * than they say. unc NULL: every uncertainty 0 (x1 < A). Pure.
 */
int tpb_timeline_violations(const tpb_mark_t *marks, int world, int tp, int iters,
                            const double *unc);

/** The rank (position) that arrived last in group g in iteration i, and in *late its lead
 *  over the second last (0 at tp 1). */
int tpb_timeline_last_rank(const tpb_mark_t *marks, int tp, int iters, int g, int i, double *late);

/**
 * Group g alone (what tpb_timeline_analyse does for each group): ranks[g*tp .. g*tp+tp)
 * (zeroed before) receive their statistics, grp[0..2][iters] the group's step, transfer
 * after its last arrival and mean compute per iteration, free_x[iters] the least x1 - c1
 * of its ranks. work holds 2 iters doubles of scratch.
 */
void tpb_timeline_group(const tpb_mark_t *marks, int tp, int iters, int g, double *work,
                        double *free_x, double *grp[3], tpb_rank_stats_t *ranks);

/** cfg's figures over the iterations from each iteration's step, the step-setting group's
 *  transfer and mean compute, the worst group's transfer and the least x1 - c1. */
void tpb_timeline_figures(const double *step, const double *set_xfer, const double *set_comp,
                          const double *xfer, const double *free_x, int iters,
                          tpb_config_stats_t *cfg);

/** cfg's straggler from every rank's statistics (ranks[world]): the rank most often last
 *  (ties: the larger mean lateness), its fraction and lateness; -1 at tp 1. */
void tpb_timeline_straggler(const tpb_rank_stats_t *ranks, int world, int tp, int iters,
                            tpb_config_stats_t *cfg);

/** Last arrival A of group g (ranks g*tp .. g*tp+tp-1) in iteration i. */
double tpb_timeline_last_arrival(const tpb_mark_t *marks, int tp, int iters, int g, int i);

#endif /* TPB_TIMELINE_H */
