/*
 * sequential.h - a verdict that stays valid when measuring goes on until it is
 * sure (issue 42, --budget): a group-sequential design with an alpha-spending
 * function. Look k (1, 2, ...: the planned iterations, then each extension) spends
 *
 *     alpha_k = alpha / (k (k + 1)),    sum over every k >= 1 = alpha,
 *
 * and decides on the paired interval of everything measured so far at confidence
 * 1 - alpha_k (tpb_interval_paired_at). The first look that is not inconclusive
 * stops; by the union bound, the chance that any look of a run of any length makes
 * a false decision is at most the sum of the alpha_k it spent, at most alpha, where
 * each look's interval holds its level. No assumption on how many looks come or
 * when: a budget may stop at any of them. The price is width: look 1 at 97.5 %
 * (alpha 0.05), look 2 at 99.2 %, look 5 at 99.83 %. bench/seqsim checks the rate
 * of false verdicts on constructed series (doc/METRICS.md, "Sequential verdicts").
 *
 * Pure: nothing allocated beyond the interval's scratch, nothing printed.
 */
#ifndef TPB_SEQUENTIAL_H
#define TPB_SEQUENTIAL_H

#include <stddef.h>

#include "base/interval.h"

/** The most looks --budget takes of anything it extends (a set, a fleet's GEMM rounds). */
#define TPB_SEQ_LOOKS 8

/** alpha / (look (look + 1)): the error look (>= 1) may spend; 0 for look < 1. */
double tpb_seq_spend(double alpha, int look);

/** 1 - tpb_seq_spend(alpha, look): the confidence of look's interval. */
double tpb_seq_conf(double alpha, int look);

/** One look's verdict: the ratio median(b) / median(a), its interval at conf, the
 *  verdict at the tolerance, and whether the look stops (a verdict that is not
 *  inconclusive: better, worse or draw). */
typedef struct {
    tpb_ratio_ci_t ci;
    double conf;
    tpb_verdict_t verdict;
    int look, stop;
} tpb_seq_look_t;

/**
 * Look number look of two configs measured in interleaved blocks: a[n] and b[n] in their
 * iteration order over `rounds` rounds so far (tpb_interval_paired's layout), decided at
 * tolerance tol with the error look spends of alpha.
 */
tpb_seq_look_t tpb_seq_paired(const double *a, const double *b, size_t n, int rounds, int look,
                              double alpha, double tol);

#endif /* TPB_SEQUENTIAL_H */
