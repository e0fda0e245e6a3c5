/*
 * verdict.h - how sure the answer is of a policy: the speed-up of a weighted (or
 * cost-aware) config over the even config of its group with a 95 % interval (paired
 * blocks when the two were measured side by side, base/interval.h), the most balancing
 * could buy (the physical bound), and the verdict the answer acts on. Pure.
 */
#ifndef TPB_VERDICT_H
#define TPB_VERDICT_H

#include "base/interval.h"
#include "base/sequential.h"
#include "record/result.h"

/** The tolerance of a verdict: a speed-up within 5 % either way is a draw. */
#define TPB_VERDICT_TOL 0.05

typedef struct {
    double speedup, lo, hi; /**< T_even / T_this (medians) and its 95 % interval */
    double bound;           /**< the most balancing can buy here (NaN: unknown) */
    tpb_verdict_t verdict;
    int paired;  /**< the interval is from interleaved blocks (else unpaired) */
    int rounds;  /**< ... their rounds */
    int looks;   /**< --budget: the looks their set took (0: none; the interval's level is
                      tpb_verdict_conf's) */
    double conf; /**< the interval's confidence */
} tpb_policy_verdict_t;

/** The confidence of a paired interval after `looks` looks of --budget (base/sequential.h:
 *  97.5 % for one, 99.2 % for two, ...), 95 % without a budget (looks 0). */
double tpb_verdict_conf(int looks);

/**
 * The most a re-balancing of the even config's work can buy at the rates the ranks showed
 * in the policy's config (r = its work / its median compute: the rates the speed-up was
 * measured at), everything else in the even step unchanged (x = T - max_r c_r):
 *   bound = (max_r w_r / r_r + x) / (max_g sum_g(w) / sum_g(r) + x)
 * w, c: the even config's work and compute; the world's ranks in groups of tp. A speed-up
 * measured above it was not measured at one set of rates (the even config slower than its
 * rates say). NaN when a time or a work is missing. Pure.
 */
double tpb_balance_bound(double step, const double *compute, const double *work,
                         const double *p_compute, const double *p_work, int world, int tp);

/**
 * The verdict on h (a non-even policy) over ev, the even config of its group, at
 * tolerance tol: from their iteration steps (paired when both were measured in the same
 * interleaved set of at least 3 rounds), DISTURBED when the speed-up exceeds the bound by
 * more than tol. Without steps: the ratio of medians, no interval, INCONCLUSIVE. Pure but
 * for reading their per-rank figures back (record/spill.h).
 */
tpb_policy_verdict_t tpb_verdict_of(const tpb_history_t *ev, const tpb_history_t *h, double tol);

/** " (N paired rounds)" of a paired verdict, with its --budget looks and their level where
 *  it had a budget; nothing for an unpaired one. */
void tpb_verdict_rounds_text(tpb_buf_t *txt, const tpb_policy_verdict_t *v);

/** A --budget verdict's "budget_looks" and "confidence" keys (nothing without a budget). */
void tpb_verdict_looks_json(tpb_buf_t *js, const tpb_policy_verdict_t *v);

/** The even config of h's group and layer among hist[0..n), or NULL. Pure. */
const tpb_history_t *tpb_verdict_even_of(const tpb_history_t *hist, int n, const tpb_history_t *h);

/** A time the way a person reads it into out: 830 us, 12.3 ms, 1.25 s ("-": not finite). */
const char *tpb_human_us(char *out, size_t cap, double us);

/** A test's false-alarm rate alpha in plain words: "chance alone names one at most once in
 *  200 runs" (0.005); out returned. */
const char *tpb_alarm_words(char *out, size_t cap, double alpha);

#endif /* TPB_VERDICT_H */
