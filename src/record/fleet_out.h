/*
 * fleet_out.h - --fleet's record (rank 0): the scores of a measured fleet (base/fleet.h)
 * against its median, a verdict per node with its reasons, the table, a one-line
 * --exclude= for Slurm, and fleet.json (schema tpbal-fleet/1, doc/METRICS.md "Fleets").
 */
#ifndef TPB_FLEET_OUT_H
#define TPB_FLEET_OUT_H

#include <stdio.h>

#include "base/fleet.h"
#include "base/buf.h"
#include "base/topo.h"
#include "base/tpb_status.h"

/** fleet.json's "schema". */
#define TPB_FLEET_SCHEMA "tpbal-fleet/1"

/** A node's scores and verdict. */
typedef struct {
    tpb_fleet_score_t gemm;  /**< its slowest rank's GEMM rate */
    tpb_fleet_score_t coll;  /**< its ranks' all-reduce (unknown with one rank) */
    tpb_fleet_score_t link;  /**< the worse of its links to its neighbours */
    tpb_fleet_score_t clock; /**< its slowest device's peak (clock x units) */
    tpb_fleet_verdict_t verdict;
    int slowest;   /**< its slowest rank (world) */
    char why[240]; /**< the components below the threshold, with their scores */
} tpb_fleet_node_t;

/** Every rank's score (ranks[world]) and every node's (nodes[nnodes]) at threshold thr.
 *  Pure. */
void tpb_fleet_judge_nodes(const tpb_fleet_data_t *d, double thr, tpb_fleet_score_t *ranks,
                           tpb_fleet_node_t *nodes);

/** Print the table and the exclude line on table, write out_dir/fleet.json (none when
 *  out_dir is ""); *excluded receives the nodes to exclude, and exclude (NULL: not wanted)
 *  the "--exclude=a,b" list ("" for none). */
tpb_status_t tpb_fleet_report(const tpb_fleet_data_t *d, double thr, const char *cmd, FILE *table,
                              const char *out_dir, int *excluded, tpb_buf_t *exclude);

/** --fleet --repeat N (rank 0, fleet_repeat.c): how often each node was excluded. */
typedef struct {
    char (*host)[TPB_HOST_LEN];
    int *count; /**< passes that excluded it */
    int n, cap, passes, done;
} tpb_fleet_passes_t;

void tpb_fleet_passes_init(tpb_fleet_passes_t *p, int passes);
void tpb_fleet_passes_free(tpb_fleet_passes_t *p);

/** The next pass's "--exclude=a,b" list ("": none). */
tpb_status_t tpb_fleet_passes_add(tpb_fleet_passes_t *p, const char *exclude);

/** '#' lines over the passes done: each node excluded and how often, the transient ones
 *  (excluded in half of the passes or fewer: left in), the --exclude list over them. */
void tpb_fleet_passes_answer(const tpb_fleet_passes_t *p, tpb_buf_t *txt);

/** The same, printed on out. */
void tpb_fleet_passes_print(const tpb_fleet_passes_t *p, FILE *out);

/** dir/repeat.json of the passes done (kind "fleet"). */
tpb_status_t tpb_fleet_passes_write(const tpb_fleet_passes_t *p, const char *dir, const char *cmd);

#endif /* TPB_FLEET_OUT_H */
