/*
 * clocktree.h - the clock offsets of P ranks composed down a binomial tree (pure).
 *
 * Rank c's parent is c less its highest set bit; in round j (j = 0 .. rounds - 1) every
 * rank c with 2^j <= c < 2^(j+1) measures its offset to its parent c - 2^j, the pairs of a
 * round disjoint and measured at once, so that any rank's critical path holds `rounds`
 * = ceil(log2 P) pairs of ping-pongs instead of rank 0's P - 1 (ReproMPI's hierarchical
 * synchronisation, with min-RTT pairs as run/clocksync.c measures them). A rank's offset to
 * rank 0 is the sum of its pairs' offsets along its path to the root, and its uncertainty
 * the sum of theirs: the composed sample's rtt_us is the sum of the path's RTTs, so that
 * rtt/2 stays the bound on the offset's error that tpb_clock_sample_t documents.
 */
#ifndef TPB_CLOCKTREE_H
#define TPB_CLOCKTREE_H

#include "base/clock.h"

/** One pair's measurement, made by the child: its offset to its parent (the child's clock
 *  minus the parent's), the exchange's RTT, and when (on the parent's clock). */
typedef struct {
    double offset_us;
    double rtt_us;
    double at_us;
} tpb_clock_pair_t;

/** The parent of rank c > 0 in the tree (c less its highest set bit); -1 for rank 0. */
int tpb_clock_tree_parent(int c);

/** The rounds of a tree over size ranks: ceil(log2 size) (0 for one rank). */
int tpb_clock_tree_rounds(int size);

/** The round in which rank c > 0 measures its pair (the index of its highest set bit). */
int tpb_clock_tree_round(int c);

/**
 * Every rank's sample on rank 0's clock from the size pairs (pairs[0] is ignored: rank 0's
 * sample is offset 0, RTT 0, at at0_us): offsets and RTTs summed along each path, the time
 * of each pair moved onto rank 0's clock.
 */
void tpb_clock_tree_compose(const tpb_clock_pair_t *pairs, int size, double at0_us,
                            tpb_clock_sample_t *out);

#endif /* TPB_CLOCKTREE_H */
