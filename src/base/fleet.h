/*
 * fleet.h - node qualification (--fleet): what was measured of every rank, node and link
 * of a fleet, and the scores and verdicts derived from it against the fleet's median.
 * Pure: no MPI, no I/O.
 *
 *   score      a rank's (node's, link's) figure over the fleet's median of that figure (a
 *              GEMM rate, a collective's or a link's bus bandwidth), round by round against
 *              the ones measured at the same time, then the median over the rounds: 1 is
 *              the median, 0.5 half as fast
 *   interval   the 95 % interval of that median over the rounds (a device's peak, known
 *              without rounds, has none: below the threshold it is "suspect" at most)
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

/** A score with its 95 % interval. */
typedef struct {
    double score, lo, hi;
} tpb_fleet_score_t;

/** --budget with --fleet: more rounds of every rank's GEMM while a node's slowest rank is
 *  suspect (its score below the threshold, its interval reaching above), look after look
 *  (base/sequential.h: look k's intervals at 1 - 0.05 / (k (k + 1))). */
typedef struct {
    double budget_s, spent_s; /**< the budget (0: none) and what the later looks took */
    int looks;                /**< the looks the GEMM rounds took (1: the planned ones) */
    int open;                 /**< nodes still suspect for their GEMM at the last look */
    int why;                  /**< why it stopped: 0 nothing open, 1 budget, 2 the most looks */
} tpb_fleet_budget_t;

/** What a fleet run measured (rank 0), by world rank, node (first-seen host order) and link
 *  (link i joins node i and node i + 1), each figure once per round. */
typedef struct {
    int world, nnodes, rounds;
    const char (*hosts)[72];   /**< host of every world rank (borrowed, TPB_HOST_LEN) */
    const int *node_of;        /**< node of every world rank (borrowed) */
    long m, n, k;              /**< the GEMM every rank timed */
    const char *dtype;         /**< its dtype's name */
    double bytes;              /**< the collectives' message */
    int turns;                 /**< 1: a node's ranks took turns (they share cores or a GPU) */
    int gemm_rounds;           /**< the GEMM's rounds (rounds, or more looks of --budget's) */
    double gemm_conf;          /**< the level of the GEMM scores' intervals (0.95 without budget) */
    tpb_fleet_budget_t budget; /**< --budget: what it spent on more GEMM rounds */
    double *gemm;              /**< world x gemm_rounds: GFLOP/s of the GEMM, per round */
    int *cohort;               /**< world: the ranks timed together (a turn; 0: all at once) */
    double *peak;              /**< world: the device's peak, GFLOP/s (0: unknown) */
    double *coll;              /**< nnodes x rounds: the node's all-reduce, bus GB/s (NaN: alone) */
    double *link;              /**< (nnodes - 1) x rounds: a 2-rank all-reduce across link i */
    double *link_alpha_us;     /**< nnodes - 1: the same with an 8-byte message, us (median) */
} tpb_fleet_data_t;

/**
 * Scores of n items measured in `rounds` rounds, v[n x rounds] (NaN: not measured), against
 * their cohort's median in the same round (cohort[i] >= 0: the items measured at the same
 * time, each cohort's median taken once a round; NULL: one cohort): item i's round-j ratio v_ij /
 * median over its cohort of v_qj, its score the median of its ratios, its interval the median's
 * over the rounds (base/interval.h, of the inverse ratios: times). What changed for every item of a
 * round (a machine's speed, a turn's moment) cancels; an item slow in every round is slow. out[n];
 * NaN where unknown.
 */
void tpb_fleet_scores(const double *v, const int *cohort, int n, int rounds,
                      tpb_fleet_score_t *out);

/** tpb_fleet_scores with intervals at confidence conf (bit for bit the same at 0.95). */
void tpb_fleet_scores_at(const double *v, const int *cohort, int n, int rounds, double conf,
                         tpb_fleet_score_t *out);

/** Every node's slowest rank by score (the lowest; the first of a tie; an unknown score loses
 *  to a known one): slowest[nnodes], -1 for a node without ranks. */
void tpb_fleet_slowest(const tpb_fleet_score_t *ranks, const int *node_of, int world, int nnodes,
                       int *slowest);

/** The median of the finite, positive values of v[n] (NaN if none). */
double tpb_fleet_median_of(const double *v, int n);

/** A figure of its rounds v[rounds]: their median (NaN if none) and the half-width in log
 *  space of its 95 % interval (base/interval.h, of the inverses: times). */
void tpb_fleet_figure(const double *v, int rounds, double *median, double *half);

/** What one node is found to be. */
typedef enum {
    TPB_FLEET_OK = 0,  /**< every score at or above the threshold, or unknown */
    TPB_FLEET_SUSPECT, /**< a score below the threshold, its interval reaching above */
    TPB_FLEET_EXCLUDE  /**< a score below the threshold with its whole interval */
} tpb_fleet_verdict_t;

/** "ok", "suspect", "exclude". */
const char *tpb_fleet_verdict_name(tpb_fleet_verdict_t v);

/** The verdict on one score at the threshold (OK for an unknown score). */
tpb_fleet_verdict_t tpb_fleet_judge(tpb_fleet_score_t s, double threshold);

/** The nodes whose slowest rank's GEMM score is suspect at threshold (what --budget measures
 *  more of); *first receives the first such node's slowest rank (-1: none). */
int tpb_fleet_gemm_open(const tpb_fleet_score_t *ranks, const int *node_of, int world, int nnodes,
                        double threshold, int *first);

#endif /* TPB_FLEET_H */
