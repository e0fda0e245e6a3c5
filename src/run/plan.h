/*
 * plan.h - one plan per config, built once from the options and handed on:
 * counting, the memory preflight, calibration, the measurement and the record
 * all read the plan; nothing recomputes a partition or a layer description.
 *
 * A plan is this rank's view of one config: its identity (placement, TP
 * degree, shape or message size, split orientation with its collective,
 * policy, dtype), the layer description of this rank's part, the shards of
 * this rank's TP group (even, weighted by speeds, or set by an adaptive
 * round) and this rank's memory need at those shards. Plans of one (placement,
 * tp, shape, split) form a block and share their speeds.
 *
 * Building is pure (no MPI): every rank builds the same list from the same
 * options and topology, so every rank agrees on what is measured and skipped.
 */
#ifndef TPB_PLAN_H
#define TPB_PLAN_H

#include "base/config_key.h"
#include "base/topo.h"
#include "cli/options.h"
#include "run/fleet.h"
#include "record/calfile.h"
#include "record/record.h"
#include "run/layer.h"

/** How every config of the run is measured: the options the measurement reads, taken
 *  once when the plans are built (the sweep reads these, never the options). */
typedef struct {
    int iters, warmup;     /**< measured and warm-up iterations of a config */
    int timeline;          /**< per-iteration marks (0: one span around the loop) */
    int interleave;        /**< --interleave: the policies of a block side by side */
    double budget_s;       /**< --budget: seconds the sweep may add to open sets (0: none) */
    int check;             /**< --check */
    int rebalance_every;   /**< adaptive: measured iterations a round */
    tpb_inject_t inject;   /**< --inject-delay */
    double comm_gap_us;    /**< --comm-gap: a comm-only rank's "compute" */
    const double *emulate; /**< --emulate-speed per world rank, or NULL (the list's) */
    const double *sched;   /**< --emulate-schedule's factors per world rank, or NULL */
    long sched_iter;       /**< ... from this iteration of the run on */
    tpb_emulate_mode_t emulate_mode;
    tpb_coll_t col_collective;    /**< --col-collective (recorded with every config) */
    int quiet;                    /**< no progress lines */
    int pass, passes;             /**< --repeat: this pass (from 1) of how many (1: none) */
    int err_width;                /**< progress lines folded at this width (0: whole) */
    int block;                    /**< --block: the shapes run back to back as one step */
    const char *preset;           /**< --preset or --model ("" none; the list's) */
    const char *calibration_file; /**< --calibration-file ("" none; the list's) */
    int gather;                   /**< --gather: TPB_GATHER_AUTO, _FULL or _PARTS */
    int trace_ranks;              /**< --trace-ranks (-1: every rank) */
    tpb_backend_cfg_t backend;    /**< the backend's settings (tpb_options_backend_cfg) */
} tpb_measure_t;

/** One config, as this rank runs it. */
typedef struct {
    /* identity: made once here, copied whole into its result (base/config_key.h) */
    TPB_CONFIG_KEY;
    int block; /**< index of its (placement, tp, shape, split) block: one calibration */
    const tpb_shape_t *shape; /**< one of its list's shapes */
    /* this rank's part */
    int position;          /**< this rank's position in the placement's order */
    tpb_layer_desc_t desc; /**< split, sizes, dtype, group rank; desc.shards = shards */
    long granularity;      /**< shard unit */
    long *shards;          /**< the group's tp shards along N (col) or K (row) (owned) */
    double *fractions;     /**< intended fraction of every group rank (owned) */
    int uses_speeds;       /**< the block runs a policy that weighs (so its speeds are obtained) */
    tpb_speed_source_t speed_source;
    tpb_cal_speed_t *speeds; /**< the group's speeds (owned), NULL until known */
    double mem_bytes;        /**< what this rank allocates at shards */
    char skip[256];          /**< non-empty: not measured, and why (one table line) */
} tpb_config_plan_t;

/** Every config of a run, in the order they are measured. */
typedef struct {
    tpb_config_plan_t *p;
    int n, cap;
    int measured;       /**< plans without a skip */
    int *rank_of[2];    /**< position -> world rank, per placement (packed, spread) (owned) */
    tpb_measure_t m;    /**< how each is measured */
    tpb_run_info_t run; /**< what the run record says of the command line (its options' part:
                             the sweep adds the command, the devices, the topology, ...) */
    const tpb_backend_class_t *backend; /**< the class that runs them (the registry's) */
    double *own_factors; /**< m.emulate and m.sched point here: the options' copied (owned) */
    char *own_names;     /**< m.preset and m.calibration_file point here (owned) */
    tpb_shape_t *shapes; /**< the shapes (or messages) the plans measure, the options' copied
                              (owned: the plans outlive the options' reading) */
    int nshapes;
} tpb_plan_list_t;

/** --fleet's plan from the options (what run/fleet.c and the dry run read instead). Pure. */
tpb_fleet_plan_t tpb_fleet_plan_of(const tpb_options_t *o);

/**
 * The plans of options o (resolved: o->backend names the backend) on topology topo
 * (rank = this rank): placements x TP degrees x shapes x splits x sequence parallelism
 * x policies (x chunk counts), with even shards, or weighted ones from --speeds. A TP
 * degree that does not divide the world, --comm-only at TP 1, a shape that cannot be
 * split and sequence-parallel rows the backend cannot scatter become skip entries. On
 * error (TPB_ERR_NOMEM) the list is empty.
 */
tpb_status_t tpb_plans_build(const tpb_options_t *o, const tpb_topo_t *topo, tpb_plan_list_t *list);

/** --shards-from: the plan at path read and parsed by rank 0 alone (at most
 *  tpb_shardplan_max_bytes(size): what a run of size ranks can use), packed and passed to
 *  every rank (collective, agreed: one line naming the file on error, *out empty). */
tpb_status_t tpb_plan_share_shards(MPI_Comm world, int rank, int size, const char *path,
                                   tpb_shardplan_t *out);

void tpb_plans_free(tpb_plan_list_t *list);

/** The order of placement p (position -> world rank). */
static inline const int *tpb_plans_rank_of(const tpb_plan_list_t *list, tpb_placement_t p)
{
    return list->rank_of[p == TPB_PLACE_SPREAD];
}

/** 1 if the plans of p's block need speeds that are not known yet (calibration or file). */
int tpb_plan_needs_speeds(const tpb_config_plan_t *p);

/**
 * Give every plan of the block of list->p[i] the group's speeds (tp entries,
 * group order) and their source; weighted and adaptive plans get shards in
 * proportion to them. A plan whose shards cannot be made (a speed that is not
 * finite and positive) gets a skip. TPB_ERR_NOMEM only.
 */
tpb_status_t tpb_plans_set_speeds(tpb_plan_list_t *list, int i, tpb_speed_source_t source,
                                  const tpb_cal_speed_t *speeds);

/** --speeds: every plan that weighs takes the given speeds of its group (plan_speeds.c). */
tpb_status_t tpb_plans_given_speeds(tpb_plan_list_t *list, const tpb_options_t *o);

/**
 * --shards-from: every plan the file names takes its shards and speeds; TPB_ERR_INVALID when
 * a group's world ranks differ from the file's or the file plans none of the run's configs.
 */
tpb_status_t tpb_plans_take_planned(tpb_plan_list_t *list, const tpb_options_t *o);

/**
 * The plan an adaptive round hands on: p with new shards, their fractions of the split
 * dimension and the memory need at them, into *next (its own arrays; free it with
 * tpb_plan_release). p is not changed. TPB_ERR_NOMEM only (then *next owns nothing).
 */
tpb_status_t tpb_plan_reshard(const tpb_config_plan_t *p, const long *shards,
                              tpb_config_plan_t *next);

/** Free what a plan made by tpb_plan_reshard owns. */
void tpb_plan_release(tpb_config_plan_t *p);

/** TPB_OK if p fits in avail bytes on world rank `rank`, else the one-line NOMEM. */
tpb_status_t tpb_plan_check_memory(const tpb_config_plan_t *p, double avail, int rank);

/** The first plan of the list that does not fit in avail bytes (the preflight). */
tpb_status_t tpb_plans_check_memory(const tpb_plan_list_t *list, double avail, int rank);

/** Plan q may be measured side by side with others of its block (plan_budget.c): --interleave
 *  on, a timeline, no schedule that changes speeds at an iteration of the run, a TP group, a
 *  serial layer, a policy with fixed shards. */
int tpb_plan_interleavable(const tpb_measure_t *m, const tpb_config_plan_t *q);

/** --budget set, and no plan it could measure again (no set of configs side by side, too few
 *  iterations for its rounds, --interleave off): refused in one line saying why, not left to
 *  do nothing. TPB_OK without --budget. */
tpb_status_t tpb_plans_check_budget(const tpb_plan_list_t *list);

/* ---- the order the sweep measures them in (plan_order.c, pure) ---- */

/** Most configs measured side by side: the policies with fixed shards (even, weighted, cost). */
#define TPB_SET_MAX 4

/** The plans measured with plan i side by side (i first; at most TPB_SET_MAX) into idx: the
 *  other policies of its block and sequence parallelism not yet done; returns how many (1:
 *  alone). */
int tpb_plans_set_of(const tpb_plan_list_t *l, int i, const unsigned char *done, int *idx);

/** --block: plan i is a skip entry that a block of its placement and TP degree reports (its
 *  range has a plan to measure). */
int tpb_plans_block_reports(const tpb_plan_list_t *l, int i);

/** --block: the plans measured with plan i as blocks (i first): every policy of its
 *  placement, TP degree and sequence parallelism, each a unit of the shapes' plans in order.
 *  idx receives k units of *nl plans; returns k, or 0 (*skip says why) where a shape cannot
 *  be planned at this TP degree; the range's plans are marked in done. */
int tpb_plans_block_of(const tpb_plan_list_t *l, int i, unsigned char *done, int *idx, int *nl,
                       const char **skip);

/** The plans the sweep measures, in its order, into order[] (room for l->n): a config's id
 *  is its place here (the dry run prints these ids); skip entries, and a block's unit with a
 *  plan that cannot run, are left out. Returns how many. A plan skipped only while the run
 *  goes (a calibration the backend refuses) shifts the run's later ids. */
int tpb_plans_order(const tpb_plan_list_t *l, int *order);

#endif /* TPB_PLAN_H */
