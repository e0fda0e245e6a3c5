/*
 * sweep_impl.h - what sweep.c hands to sweep_units.c (what is measured together); nothing
 * else includes it.
 */
#ifndef TPB_SWEEP_IMPL_H
#define TPB_SWEEP_IMPL_H

#include "run/sweep_state.h"

/** Plan i: its block's speeds when first needed, then the config or its skip line
 *  (collective). */
tpb_status_t tpb_sweep_run_plan(tpb_sweep_t *s, int i);

/** Plans idx[k] of one block side by side (--interleave), or one after the other where their
 *  layers do not fit beside each other (collective). */
tpb_status_t tpb_sweep_run_set(tpb_sweep_t *s, const int *idx, int k);

/** --block: the blocks of plan i's placement, TP degree and sequence parallelism (every
 *  policy a unit of the shapes' plans in order), or the skip line that says why not; their
 *  plans are marked in done (collective). idx: room for every plan. */
tpb_status_t tpb_sweep_run_block(tpb_sweep_t *s, int i, unsigned char *done, int *idx);

#endif /* TPB_SWEEP_IMPL_H */
