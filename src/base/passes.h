/*
 * passes.h - verdicts over the passes of --repeat (issue 42): N passes of a whole sweep in
 * one launch, each with its own calibration and clock sync, each deciding as one run does;
 * over them:
 *
 *  - a ratio (a policy's step over even's) from each pass's estimate and interval: where
 *    the passes agree within their intervals (Cochran's Q of their logs around the
 *    inverse-variance mean at most its degrees of freedom, n - 1: the DerSimonian-Laird
 *    point where the between-pass variance estimate is 0) the passes are pooled (that
 *    mean, its 95 % normal interval); where they disagree more, a pass is the unit (the
 *    mean of the logs, a t interval on n - 1 degrees of freedom from their spread, never
 *    narrower than the pooled one);
 *  - the run-to-run variation: the sample standard deviation of the passes' log medians;
 *  - a persistent straggler pooled over the passes' blocks: the binomial test of
 *    base/detect.h over all passes' effective blocks, and the rank the slowest most often
 *    in more than half of the passes; a rank that only one pass (or a minority) names is
 *    a transient.
 *
 * Pure: nothing allocated, nothing printed.
 */
#ifndef TPB_PASSES_H
#define TPB_PASSES_H

#include "base/detect.h"
#include "base/interval.h"

/** Most passes one launch takes (--repeat). */
#define TPB_PASSES_MAX 64

/** A ratio over passes. */
typedef struct {
    double ratio;  /**< exp of the combined log ratio (NaN: no pass had one) */
    double half;   /**< the 95 % half-width in log space (inf: cannot tell) */
    double spread; /**< the passes' log ratios' sample SD (0 for one pass) */
    double q;      /**< Cochran's Q around the inverse-variance mean (NaN: unknown) */
    int by_pass;   /**< 1: the passes disagree more than their intervals: a pass is the unit */
    int n;         /**< passes with an estimate */
    tpb_verdict_t verdict;
} tpb_passes_ratio_t;

/**
 * ratio[n] (time ratios, new over old: lower is better), each with its log half-width
 * half[n] at confidence conf[n] (inf or NaN: no interval; a ratio that is not > 0 is left
 * out), combined as above and decided at tolerance tol (tpb_interval_decide). One pass:
 * its own interval, re-stated at 95 %.
 */
tpb_passes_ratio_t tpb_passes_ratio(const double *ratio, const double *half, const double *conf,
                                    int n, double tol);

/** The sample standard deviation of log v over v's positive, finite entries of n (0 for
 *  one, NaN for none): a config's run-to-run variation, as a fraction for small values. */
double tpb_passes_spread(const double *v, int n);

/** What the passes say of a persistent straggler at one TP degree. */
typedef enum {
    TPB_PASSES_NONE = 0,   /**< the pooled blocks could name one and name nobody */
    TPB_PASSES_PERSISTENT, /**< the pooled test and more than half of the passes name it */
    TPB_PASSES_TRANSIENT,  /**< a test names it, but in a minority of the passes */
    TPB_PASSES_UNDECIDABLE /**< too few blocks even pooled */
} tpb_passes_slow_t;

typedef struct {
    int rank;          /**< the candidate: the most pooled blocks as the slowest (-1: none) */
    int named;         /**< passes where it was the slowest most often */
    int flagged;       /**< passes whose own test called it persistent */
    int count, blocks; /**< its pooled effective blocks as the slowest, of all passes' */
    int need;          /**< blocks the pooled test needs (blocks + 1: never) */
    double deficit;    /**< the median of its deficits in the passes that named it */
    tpb_passes_slow_t verdict;
} tpb_passes_straggler_t;

/** Over p[n], each pass's tpb_persistent_t at TP degree tp (base/detect.h): the pooled
 *  straggler. */
tpb_passes_straggler_t tpb_passes_straggler(const tpb_persistent_t *p, int n, int tp);

/** "none", "persistent", "transient", "not enough data". */
const char *tpb_passes_slow_name(tpb_passes_slow_t v);

#endif /* TPB_PASSES_H */
