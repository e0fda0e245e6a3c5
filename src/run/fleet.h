/*
 * fleet.h - --fleet's measurement (run/fleet.c): every rank's GEMM rate, every node's
 * all-reduce over its ranks and every neighbouring pair of nodes' link, gathered to rank 0
 * as a tpb_fleet_data_t (base/fleet.h), which record/fleet_out.c scores and writes.
 */
#ifndef TPB_RUN_FLEET_H
#define TPB_RUN_FLEET_H

#include "backend/backend.h"
#include "base/fleet.h"
#include "base/topo.h"
#include "cli/options.h"

/** Measure the fleet (collective over world; the status agreed). Rank 0 receives d (free
 *  it with tpb_fleet_free); the GEMM is o->shapes[0] in o->dtype, the collectives' message
 *  `bytes`. */
tpb_status_t tpb_fleet_measure(tpb_device_t *dev, MPI_Comm world, const tpb_topo_t *topo,
                               const tpb_options_t *o, double bytes, tpb_fleet_data_t *d);

/** Rank 0: d from every rank's gathered figures (fleet.c's FLEET_FIGS(g) a rank, g GEMM
 *  rounds). TPB_ERR_NOMEM only. */
tpb_status_t tpb_fleet_fill(const tpb_topo_t *topo, const double *all, int g, tpb_fleet_data_t *d);

/**
 * --budget after look `look` of every rank's GEMM (collective over world): rank 0 gathers
 * every rank's rate[rounds] and cohort, scores them at the look's level (base/sequential.h)
 * and finds the nodes still suspect for their GEMM (base/fleet.h); *more on every rank: 1
 * where one is and another look (look_s, the last one's time) fits in what is left of b's
 * budget and the most looks (TPB_SEQ_LOOKS). Rank 0 keeps in b what stayed open and why,
 * and says it on stderr (unless --quiet).
 */
tpb_status_t tpb_fleet_budget_more(MPI_Comm world, const tpb_topo_t *topo, const tpb_options_t *o,
                                   const double *rate, int rounds, int cohort, int look,
                                   double look_s, tpb_fleet_budget_t *b, int *more);

void tpb_fleet_free(tpb_fleet_data_t *d);

#endif /* TPB_RUN_FLEET_H */
