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

/** What --fleet measures, planned once from the options (run/plan.h tpb_fleet_plan_of):
 *  nothing of the fleet reads the options. */
typedef struct {
    tpb_shape_t shape; /**< the GEMM: the first --shape */
    tpb_dtype_t dtype;
    uint64_t seed;
    double bytes;     /**< --fleet-bytes: the collectives' message */
    double threshold; /**< --fleet-threshold: a node scoring below is excluded */
    double budget_s;  /**< --budget: seconds more GEMM looks may take (0: none) */
    int quiet;        /**< --quiet: no line of what stayed open */
    const tpb_backend_class_t *backend;
    tpb_backend_cfg_t cfg; /**< the backend's settings (the dry run's rate guess) */
    char out_dir[1024];    /**< --out: where fleet.json goes ("": none) */
} tpb_fleet_plan_t;

/** Measure the fleet fp plans (collective over world; the status agreed). Rank 0 receives d
 *  (free it with tpb_fleet_free). */
tpb_status_t tpb_fleet_measure(tpb_device_t *dev, MPI_Comm world, const tpb_topo_t *topo,
                               const tpb_fleet_plan_t *fp, tpb_fleet_data_t *d);

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
tpb_status_t tpb_fleet_budget_more(MPI_Comm world, const tpb_topo_t *topo,
                                   const tpb_fleet_plan_t *fp, const double *rate, int rounds,
                                   int cohort, int look, double look_s, tpb_fleet_budget_t *b,
                                   int *more);

void tpb_fleet_free(tpb_fleet_data_t *d);

#endif /* TPB_RUN_FLEET_H */
