/*
 * placement.h - which ranks form a TP group (--tp-placement). Groups are always
 * t consecutive positions of an order of the world's ranks: packed keeps world
 * order (consecutive ranks, inside a node when it holds >= t ranks: Megatron's
 * layout); spread deals the ranks of the nodes out in turn, so that each group
 * takes one rank per node as far as possible. Pure.
 */
#ifndef TPB_PLACEMENT_H
#define TPB_PLACEMENT_H

#include "base/tpb_types.h"

/**
 * rank_of[p] = the world rank at position p of the placement's order, for n
 * ranks whose hosts are host_index[r] (0..nhosts-1, first-seen order). World
 * rank 0 is always at position 0.
 */
void tpb_placement_order(tpb_placement_t p, const int *host_index, int n, int *rank_of);

/** Distinct hosts among positions [g*t, (g+1)*t) of the order (host of each position). */
int tpb_placement_group_nodes(const int *host_of_pos, int t, int g);

#endif /* TPB_PLACEMENT_H */
