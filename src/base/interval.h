/*
 * interval.h - how sure a ratio of two medians is: the 95 % interval of
 * median(b) / median(a) of two series of iteration times, and the verdict it
 * supports against a tolerance. One method for every decision tpbal and its tools
 * make (the speed-up of a policy over even in the run's answer, tpbal-compare's
 * run against run), written twice and pinned together (tests/golden_model.c prints
 * these functions on constructed samples, tests/python/test_golden.py holds
 * tpbal_stats.py to them):
 *
 *   Each median's interval comes from its order statistics (distribution-free: the
 *   median of n samples lies between the l-th and u-th smallest with binomial
 *   probability), at the effective sample size of an AR(1) series, n (1 - rho) /
 *   (1 + rho) (consecutive iterations of a machine in a slow stretch are alike), and
 *   at least as wide as the batch-means interval (the t interval of the medians of 5
 *   consecutive batches: a machine that drifts during the series shows there). The
 *   two half-widths, in log space, add in quadrature.
 *
 * Pure: no allocation beyond stack-sized scratch of the series, nothing printed.
 */
#ifndef TPB_INTERVAL_H
#define TPB_INTERVAL_H

#include <stddef.h>

/** What a ratio says at a tolerance, one row each: X(ID, name). The enum and the names
 *  (tpb_verdict_name, the record's) are made from these rows in this order; a new verdict is
 *  a row here, and the build (-Wswitch-enum) names each place a verdict is said in words.
 *  BETTER: the whole interval faster than 1 / (1 + tol); WORSE: slower than 1 + tol; DRAW:
 *  within [1 / (1 + tol), 1 + tol]; INCONCLUSIVE: it straddles a bound, these samples cannot
 *  tell; DISTURBED: a speed-up beyond what balancing can buy, not an answer. */
#define TPB_VERDICTS(X)                                                                            \
    X(BETTER, "better")                                                                            \
    X(WORSE, "worse")                                                                              \
    X(DRAW, "draw")                                                                                \
    X(INCONCLUSIVE, "inconclusive")                                                                \
    X(DISTURBED, "disturbed")

typedef enum {
#define TPB_VERDICT_ENUM_(id, name) TPB_VERDICT_##id,
    TPB_VERDICTS(TPB_VERDICT_ENUM_)
#undef TPB_VERDICT_ENUM_
} tpb_verdict_t;
/** How many verdicts there are (not a tpb_verdict_t: switches need no case for it). */
#define TPB_VERDICT_COUNT (0 TPB_VERDICTS(TPB_VERDICT_ONE_))
#define TPB_VERDICT_ONE_(id, name) +1

/** "better", "worse", "draw", "inconclusive", "disturbed". */
const char *tpb_verdict_name(tpb_verdict_t v);

/** The ratio median(b) / median(a) with its 95 % interval [lo, hi] = ratio e^(-+half). */
typedef struct {
    double ratio, lo, hi;
    double half; /**< the half-width in log space (inf: too few samples) */
} tpb_ratio_ci_t;

/** Lag-1 autocorrelation of v[n] in its order (0 for n < 3 or no spread). */
double tpb_interval_lag1(const double *v, size_t n);

/** The batch-means half-width (log space) of the median of v[n] in order, from the
 *  medians of `batches` consecutive batches (0 if a batch would hold fewer than 4). */
double tpb_interval_batch_half(const double *v, size_t n, int batches);

/** The half-width in log space of the 95 % interval of the median of the series v[n]
 *  (its positive values; inf for fewer than 3). */
double tpb_interval_median_half(const double *v, size_t n);

/**
 * median(b) / median(a) and its interval. Identical samples (as multisets) are no
 * change at all, half 0, whatever their noise. ratio NaN when a median is not > 0.
 */
tpb_ratio_ci_t tpb_interval_ratio(const double *a, size_t na, const double *b, size_t nb);

/**
 * Two configs measured in interleaved blocks (tpb_interval_order): a[n] and b[n] in their
 * own iteration order, block j = iterations [j n / rounds, (j + 1) n / rounds) of each
 * measured side by side in round j, so that iteration i of a and iteration i of b ran one
 * block apart. The ratio median(b) / median(a) of all iterations, with the half-width of
 * the median of the paired ratios b_i / a_i (tpb_interval_median_half of that series: its
 * order statistics at the AR(1) effective size, at least its batch-means interval): a
 * change of the machine's speed that falls on both blocks of a round cancels in b_i / a_i,
 * and a spike moves one pair, not the interval. Identical samples: half 0. Fewer than 3
 * rounds or a time that is not > 0: half inf.
 */
tpb_ratio_ci_t tpb_interval_paired(const double *a, const double *b, size_t n, int rounds);

/** t(0.975) for df degrees of freedom: the table to 9, a Cornish-Fisher expansion above. */
double tpb_interval_t975(int df);

/* ---- the same at another confidence (a sequential verdict's looks: sequential.h) ---- */

/** The two-sided normal quantile of confidence conf (1.959964 at 0.95; inf at 1). */
double tpb_interval_z(double conf);

/** The two-sided t quantile of confidence conf with df degrees of freedom (its distribution
 *  in closed form, inverted by bisection; 2.776 for 4 at 0.95). */
double tpb_interval_t(int df, double conf);

/** tpb_interval_median_half at confidence conf (bit for bit the same at 0.95). */
double tpb_interval_median_half_at(const double *v, size_t n, double conf);

/** tpb_interval_ratio at confidence conf (bit for bit the same at 0.95). */
tpb_ratio_ci_t tpb_interval_ratio_at(const double *a, size_t na, const double *b, size_t nb,
                                     double conf);

/** tpb_interval_paired at confidence conf (bit for bit the same at 0.95). */
tpb_ratio_ci_t tpb_interval_paired_at(const double *a, const double *b, size_t n, int rounds,
                                      double conf);

/**
 * The verdict on a time ratio r = new / old (lower is better) with half-width half at
 * tolerance tol (a fraction): BETTER when the new is faster beyond the tolerance, WORSE
 * when slower beyond it, DRAW inside it, INCONCLUSIVE otherwise (and for a ratio that is
 * not > 0 or a NaN half-width).
 */
tpb_verdict_t tpb_interval_decide(double r, double half, double tol);

/** The smallest change these samples could call WORSE, as a fraction: (1 + tol) e^half - 1. */
double tpb_interval_detectable(double half, double tol);

/**
 * The block order of an interleaved measurement of k configs in `rounds` rounds: round j
 * runs every config once, forward on even rounds and backward on odd ones (ABBA for two:
 * a linear drift falls on every config alike). order[rounds * k] receives config indices.
 */
void tpb_interval_order(int k, int rounds, int *order);

#endif /* TPB_INTERVAL_H */
