/*
 * disturb.h - is a config's series of steps one figure? A config is disturbed when its
 * measured steps are bimodal (another process taking turns on the device, a clock stepping
 * between two rates: the median then lies between the modes and is no step at all) or
 * spiky (the 95th percentile above 1.2 times the median). Pure: no MPI, no I/O.
 *
 * Bimodal: the split of the sorted log steps into a low and a high group that leaves the
 * least squared distance to the groups' means (the best 2-means split in one dimension); the
 * series is bimodal when both groups hold at least max(3, n/10) steps, their typical values
 * lie at least TPB_DISTURB_RATIO apart, and Ashman's D = sqrt(2)|m1 - m2| / sqrt(s1^2 + s2^2)
 * is at least TPB_DISTURB_ASHMAN (a normal series split this way gives about 2.7; two clean
 * modes give far more). Fewer than TPB_DISTURB_MIN_STEPS steps: not enough data to tell.
 * The rates at which it calls a steady series disturbed and finds a disturbed one:
 * bench/disturbsim (doc/METRICS.md, "Disturbed configs").
 */
#ifndef TPB_DISTURB_H
#define TPB_DISTURB_H

#define TPB_DISTURB_MIN_STEPS 10
#define TPB_DISTURB_P95 1.2    /**< p95 / median above this: spiky */
#define TPB_DISTURB_RATIO 1.15 /**< the modes at least this far apart */
#define TPB_DISTURB_ASHMAN 3.5 /**< and at least this separated */

typedef enum {
    TPB_STEADY = 0,    /**< one figure */
    TPB_DISTURBED = 1, /**< bimodal or spiky */
    TPB_UNDECIDED = 2  /**< too few steps to tell */
} tpb_disturb_verdict_t;

typedef struct {
    tpb_disturb_verdict_t verdict;
    int bimodal;       /**< two modes (the figures below are set) */
    int spiky;         /**< p95 / median above TPB_DISTURB_P95 */
    double p95_ratio;  /**< p95 / median */
    double low_us;     /**< bimodal: the median of the low mode */
    double high_us;    /**< ... of the high mode */
    double high_share; /**< ... the share of steps in the high mode */
    double ashman;     /**< ... Ashman's D of the split */
} tpb_disturb_t;

/** Judge steps[n] (microseconds, > 0; NaN entries are left out). */
tpb_disturb_t tpb_disturb_judge(const double *steps, int n);

/** "steady", "disturbed", "not enough data". */
const char *tpb_disturb_name(tpb_disturb_verdict_t v);

/** "steps bimodal: 1401 us in 52 %, 2737 us in 48 %" or "spiky steps: p95 1.31 x the median"
 *  (both when both) into out[cap]; "" when steady or undecided. */
void tpb_disturb_describe(const tpb_disturb_t *d, char *out, unsigned long cap);

#endif /* TPB_DISTURB_H */
