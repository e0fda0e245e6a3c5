/*
 * sweep_impl.h - what sweep.c hands to sweep_units.c (what is measured together); nothing
 * else includes it.
 */
#ifndef TPB_SWEEP_IMPL_H
#define TPB_SWEEP_IMPL_H

#include "run/sweep.h"

/** Plan i: its block's speeds when first needed, then the config or its skip line
 *  (collective). */
tpb_status_t tpb_sweep_run_plan(tpb_sweep_t *s, int i);

/** The plans measured with plan i side by side (i first; at most TPB_SET_MAX) into idx;
 *  returns how many (1: alone). */
int tpb_sweep_set_of(const tpb_sweep_t *s, int i, const unsigned char *done, int *idx);

/** Plans idx[k] of one block side by side (--interleave), or one after the other where their
 *  layers do not fit beside each other (collective). */
tpb_status_t tpb_sweep_run_set(tpb_sweep_t *s, const int *idx, int k);

/** --block: plan i is a skip entry that a block of its placement and TP degree reports. */
int tpb_sweep_block_reports(const tpb_sweep_t *s, int i);

/** --block: the blocks of plan i's placement, TP degree and sequence parallelism (every
 *  policy a unit of the shapes' plans in order), or the skip line that says why not; their
 *  plans are marked in done (collective). idx: room for every plan. */
tpb_status_t tpb_sweep_run_block(tpb_sweep_t *s, int i, unsigned char *done, int *idx);

#endif /* TPB_SWEEP_IMPL_H */
