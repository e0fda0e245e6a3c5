/*
 * fleet.h - node qualification (--fleet): what was measured of every rank, node and link
 * of a fleet, and the scores and verdicts derived from it against the fleet's median.
 * Pure: no MPI, no I/O.
 *
 *   score      a rank's (node's, link's) figure over the fleet's median of that figure (a
 *              GEMM rate, a collective's or a link's bus bandwidth, a device's peak): 1 is
 *              the median, 0.5 half as fast
 *   interval   the figure's own 95 % interval (the median's, in log space: half), carried
 *              to the score (the fleet's median, over many ranks, is taken as exact)
 *   exclude    a node any of whose scores is below the threshold with its whole interval
 *              (the reason: "GEMM" (its slowest rank's rate), "collective" (its ranks'
 *              all-reduce), "link" (a link to a neighbour node), "clock" (its device's peak:
 *              clock and units)); "suspect" where the score is below but the interval
 *              reaches above
 */
#ifndef TPB_FLEET_H
#define TPB_FLEET_H

/** The default threshold of --fleet-threshold. */
#define TPB_FLEET_THRESHOLD 0.9

/** A figure and the half-width of its 95 % interval in log space (NaN: not measured). */
typedef struct {
    double value, half;
} tpb_fleet_fig_t;

/** A score with its 95 % interval. */
typedef struct {
    double score, lo, hi;
} tpb_fleet_score_t;

/** What a fleet run measured (rank 0), by world rank, node (first-seen host order) and link
 *  (link i joins node i and node i + 1). */
typedef struct {
    int world, nnodes;
    const char (*hosts)[72]; /**< host of every world rank (borrowed, TPB_HOST_LEN) */
    const int *node_of;      /**< node of every world rank (borrowed) */
    long m, n, k;            /**< the GEMM every rank timed */
    const char *dtype;       /**< its dtype's name */
    double bytes;            /**< the collectives' message */
    int turns;               /**< 1: a node's ranks took turns (they share cores or a GPU) */
    tpb_fleet_fig_t *gemm;   /**< world: GFLOP/s of the GEMM */
    double *peak;            /**< world: the device's peak, GFLOP/s (0: unknown) */
    tpb_fleet_fig_t *coll;   /**< nnodes: the node's ranks' all-reduce, bus GB/s (NaN: alone) */
    tpb_fleet_fig_t *link;   /**< nnodes - 1: bus GB/s of a 2-rank all-reduce across link i */
    double *link_alpha_us;   /**< nnodes - 1: the same with an 8-byte message, us */
} tpb_fleet_data_t;

/** What one node is found to be. */
typedef enum {
    TPB_FLEET_OK = 0,  /**< every score at or above the threshold, or unknown */
    TPB_FLEET_SUSPECT, /**< a score below the threshold, its interval reaching above */
    TPB_FLEET_EXCLUDE  /**< a score below the threshold with its whole interval */
} tpb_fleet_verdict_t;

/** "ok", "suspect", "exclude". */
const char *tpb_fleet_verdict_name(tpb_fleet_verdict_t v);

/** The median of the finite, positive values of f[n] (NaN if none). */
double tpb_fleet_median(const tpb_fleet_fig_t *f, int n);

/** f against ref: f / ref with f's interval (NaN where either is unknown). */
tpb_fleet_score_t tpb_fleet_score(tpb_fleet_fig_t f, double ref);

/** The verdict on one score at the threshold (OK for an unknown score). */
tpb_fleet_verdict_t tpb_fleet_judge(tpb_fleet_score_t s, double threshold);

/**
 * The normal approximation of the 95 % half-width, in log space, of the median of n
 * samples whose relative interquartile range is rel_iqr: 1.96 x 1.2533 x (IQR / 1.349) /
 * sqrt(n) (the median's standard error for a normal sample; NaN for n < 2).
 */
double tpb_fleet_half_from_iqr(double rel_iqr, int n);

#endif /* TPB_FLEET_H */
