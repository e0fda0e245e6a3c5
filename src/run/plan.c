/* plan.c - the plans of a run: identities, shards and memory needs, built once. */
#include "run/plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/partition.h"
#include "base/placement.h"
#include "base/sizes.h"
#include "record/wrap.h"
#include "run/coll.h"
#include "run/orient.h"

void tpb_plans_free(tpb_plan_list_t *list)
{
    for (int i = 0; i < list->n; i++) {
        free(list->p[i].shards);
        free(list->p[i].fractions);
        free(list->p[i].speeds);
    }
    free(list->p);
    free(list->shapes);
    free(list->own_factors);
    free(list->own_names);
    free(list->rank_of[0]);
    free(list->rank_of[1]);
    memset(list, 0, sizeof(*list));
}

/* The splits to run for shape sh: its preset's natural split, else --split. */
static unsigned shape_splits(const tpb_options_t *o, const tpb_shape_t *sh)
{
    return sh->splits ? sh->splits : o->splits;
}

/* The lowest value of a mask: at TP 1 every policy gives the same single shard and
 * sequence parallelism has nothing to scatter, so only the first of each runs. */
static unsigned first_of(unsigned mask)
{
    return mask & (unsigned)-(int)mask;
}

/* Whether policy p runs for collective coll at TP degree tp. */
static int policy_runs(const tpb_options_t *o, int tp, tpb_policy_t p, const tpb_coll_ops_t *coll)
{
    /* without a GEMM a reduction moves the same bytes whatever the blocks, and sequence
     * parallelism's blocks are even rows: even only */
    if (o->comm_only && (coll->sums || coll->even_rows) && p != TPB_POLICY_EVEN)
        return 0;
    return (o->policies & p) && (tp > 1 || p == first_of(o->policies));
}

/* Why the rows of M cannot be scattered over the group as sequence parallelism's
 * collective (and the backend) needs ("" if they can): a row for every rank of every
 * chunk, and equal blocks where the backend supports only those
 * (tpb_backend_supports: its capability table). */
static void seqpar_rows(const tpb_options_t *o, const tpb_coll_ops_t *coll, int tp, long m,
                        int chunks, const long *even, char *why, size_t cap)
{
    tpb_backend_cfg_t cfg;
    char lacks[160] = "";
    why[0] = '\0';
    if (!coll->even_rows)
        return;
    tpb_options_backend_cfg(o, &cfg);
    int nc = chunks > 0 ? chunks : 1;
    if (o->comm_only) { /* the message's even shards are its blocks */
        long total = 0, unequal = 0;
        for (int q = 0; q < tp; q++) {
            total += even[q];
            unequal |= even[q] != even[0];
        }
        if (!tpb_backend_supports(o->backend, &cfg, coll->kind, (int)unequal, lacks, sizeof(lacks)))
            snprintf(why, cap,
                     "--comm-only --sequence-parallel on: %ld elements do not divide by tp %d, "
                     "and %s (use a size whose elements do, or --comm mpi)",
                     total, tp, lacks);
        return;
    }
    long least = m / nc; /* the smallest chunk */
    int unequal = m % nc != 0 || least % tp != 0;
    if (least < tp)
        snprintf(why, cap,
                 "--sequence-parallel on: M = %ld%s has fewer rows than the %d ranks "
                 "of a group",
                 m, chunks ? " (each chunk's)" : "", tp);
    else if (!tpb_backend_supports(o->backend, &cfg, coll->kind, unequal, lacks, sizeof(lacks)))
        snprintf(why, cap,
                 "--sequence-parallel on: M = %ld%s does not divide by tp %d, and %s (use "
                 "such an M, or --comm mpi)",
                 m, chunks ? " (each chunk's rows)" : "", tp, lacks);
}

/* A new plan at the end of the list (zeroed), or NULL without memory. */
static tpb_config_plan_t *push(tpb_plan_list_t *list)
{
    if (list->n == list->cap) {
        int cap = list->cap ? 2 * list->cap : 32;
        tpb_config_plan_t *p = realloc(list->p, (size_t)cap * sizeof(*p));
        if (!p)
            return NULL;
        list->p = p;
        list->cap = cap;
    }
    tpb_config_plan_t *p = &list->p[list->n++];
    memset(p, 0, sizeof(*p));
    return p;
}

static tpb_status_t push_skip(tpb_plan_list_t *list, int block, tpb_placement_t pl, int tp,
                              const char *why)
{
    tpb_config_plan_t *p = push(list);
    if (!p)
        return tpb_err_set(TPB_ERR_NOMEM, "out of memory for the plans");
    *p = (tpb_config_plan_t){.block = block, .key = {.tp = tp, .placement = pl}};
    snprintf(p->skip, sizeof(p->skip), "%s", why);
    return TPB_OK;
}

/* What a config of a block is: its split, sequence parallelism, policy and chunks. */
typedef struct {
    tpb_split_t split;
    tpb_seqpar_t seqpar;
    tpb_policy_t policy;
    int chunks;
} kind_t;

/* One measured config of a block whose even shards are `even`. */
static tpb_status_t push_config(tpb_plan_list_t *list, const tpb_options_t *o, int block,
                                tpb_placement_t pl, int pos, int tp, const tpb_shape_t *sh,
                                const kind_t *kd, const long *even)
{
    tpb_split_t sp = kd->split;
    tpb_config_plan_t *p = push(list);
    if (!p)
        return tpb_err_set(TPB_ERR_NOMEM, "out of memory for the plans");
    *p = (tpb_config_plan_t){
        .key = {.tp = tp,
                .placement = pl,
                .split = sp,
                .seqpar = kd->seqpar,
                .policy = kd->policy,
                .m = sh->m,
                .n = sh->n,
                .k = sh->k,
                .chunks = kd->chunks,
                .comm_only = sh->comm_only},
        .block = block,
        .shape = sh,
        .position = pos,
        .granularity = o->granularity,
        .uses_speeds = tp > 1 && (o->policies &
                                  (TPB_POLICY_WEIGHTED | TPB_POLICY_ADAPTIVE | TPB_POLICY_COST))};
    snprintf(p->shape_name, sizeof(p->shape_name), "%s", sh->name);
    p->shards = malloc((size_t)tp * sizeof(long));
    p->fractions = malloc((size_t)tp * sizeof(double));
    if (!p->shards || !p->fractions)
        return tpb_err_set(TPB_ERR_NOMEM, "out of memory for the plans");
    memcpy(p->shards, even, (size_t)tp * sizeof(long));
    long total = tpb_split_total(sh, sp);
    for (int i = 0; i < tp; i++)
        p->fractions[i] = (double)even[i] / (double)total;
    p->desc = (tpb_layer_desc_t){
        .key = p->key, /* the layer's identity is the plan's */
        .orient = tpb_orient_of(sp),
        .coll = tpb_coll_of(sp, o->col_collective, kd->seqpar),
        .dtype = o->dtype,
        .group_rank = pos % tp,
        .shards = p->shards,
        .seed = o->seed,
        .profile = o->cost_profile.nblocks ? &o->cost_profile : NULL,
        .granularity = o->granularity,
        .polls = o->overlap_polls,
        .marks = {.iters = (size_t)(o->warmup + o->iters), .chunks = kd->chunks}};
    p->mem_bytes = tpb_layer_bytes(&p->desc);
    list->measured++;
    return TPB_OK;
}

/* A config, or a skip when M cannot be cut as it needs (fewer rows than chunks; rows
 * sequence parallelism cannot scatter). */
static tpb_status_t push_kind(tpb_plan_list_t *list, const tpb_options_t *o, int block,
                              tpb_placement_t pl, int pos, int tp, const tpb_shape_t *sh,
                              const kind_t *kd, const long *even)
{
    char why[256];
    why[0] = '\0';
    if (kd->chunks > sh->m)
        snprintf(why, sizeof(why), "--chunks %d: M = %ld has fewer rows than chunks", kd->chunks,
                 sh->m);
    else
        seqpar_rows(o, tpb_coll_of(kd->split, o->col_collective, kd->seqpar), tp, sh->m, kd->chunks,
                    even, why, sizeof(why));
    if (why[0]) { /* the rows of one sequence parallelism: --block skips that one's block */
        TPB_CHECK_RET(push_skip(list, block, pl, tp, why));
        list->p[list->n - 1].seqpar = kd->seqpar;
        return TPB_OK;
    }
    return push_config(list, o, block, pl, pos, tp, sh, kd, even);
}

/* The plans of one (placement, tp, shape, split) block. */
static tpb_status_t push_block(tpb_plan_list_t *list, const tpb_options_t *o, int block,
                               tpb_placement_t pl, int pos, int tp, const tpb_shape_t *sh,
                               tpb_split_t sp)
{
    long even[tp], total = tpb_split_total(sh, sp);
    if (tpb_partition_even(total, tp, o->granularity, even) != TPB_OK)
        return push_skip(list, block, pl, tp, tpb_err_msg());
    if (o->cost_profile.nblocks && !sh->comm_only &&
        tpb_cost_fits(&o->cost_profile, total, o->granularity) != TPB_OK)
        return push_skip(list, block, pl, tp, tpb_err_msg());
    for (unsigned q = TPB_SEQPAR_OFF; q <= TPB_SEQPAR_ON; q <<= 1) {
        if (!(o->seqpars & q) || (tp == 1 && q != first_of(o->seqpars)))
            continue;
        const tpb_coll_ops_t *coll = tpb_coll_of(sp, o->col_collective, (tpb_seqpar_t)q);
        for (unsigned p = TPB_POLICY_EVEN; p <= TPB_POLICY_COST; p <<= 1) {
            if (!policy_runs(o, tp, (tpb_policy_t)p, coll))
                continue;
            kind_t kd = {sp, (tpb_seqpar_t)q, (tpb_policy_t)p, 0};
            if (o->overlaps & TPB_OVERLAP_NONE)
                TPB_CHECK_RET(push_kind(list, o, block, pl, pos, tp, sh, &kd, even));
            if ((o->overlaps & TPB_OVERLAP_CHUNKED) && tp == 1 && !sh->comm_only) {
                TPB_CHECK_RET(push_skip(list, block, pl, tp,
                                        "--overlap chunked at tp 1: a group of one rank has no "
                                        "collective to overlap"));
                continue;
            }
            for (int c = 0; (o->overlaps & TPB_OVERLAP_CHUNKED) && c < o->nchunks; c++) {
                kd.chunks = o->chunks[c];
                TPB_CHECK_RET(push_kind(list, o, block, pl, pos, tp, sh, &kd, even));
            }
        }
    }
    return TPB_OK;
}

/* Every TP degree, shape and split of placement pl. */
static tpb_status_t push_placement(tpb_plan_list_t *list, const tpb_options_t *o,
                                   const tpb_topo_t *topo, tpb_placement_t pl, int *block)
{
    const int *rank_of = tpb_plans_rank_of(list, pl);
    int pos = 0;
    while (rank_of[pos] != topo->rank)
        pos++;
    for (int t = 0; t < o->ntp; t++) {
        int tp = o->tp[t];
        char why[128];
        if (tp > topo->size || topo->size % tp != 0) {
            snprintf(why, sizeof(why), "--tp %d does not divide the %d ranks", tp, topo->size);
            TPB_CHECK_RET(push_skip(list, (*block)++, pl, tp, why));
            continue;
        }
        if (tp == 1 && o->comm_only) {
            TPB_CHECK_RET(push_skip(list, (*block)++, pl, tp,
                                    "--comm-only --tp 1: a group of one rank has no collective"));
            continue;
        }
        for (int i = 0; i < list->nshapes; i++)
            for (unsigned sp = TPB_SPLIT_ROW; sp <= TPB_SPLIT_COL; sp <<= 1)
                if (shape_splits(o, &list->shapes[i]) & sp)
                    TPB_CHECK_RET(push_block(list, o, (*block)++, pl, pos, tp, &list->shapes[i],
                                             (tpb_split_t)sp));
    }
    return TPB_OK;
}

/* The measurement's settings, once (its factors and names: own_settings). */
static tpb_measure_t measure_of(const tpb_options_t *o)
{
    return (tpb_measure_t){.iters = o->iters,
                           .warmup = o->warmup,
                           .timeline = o->timeline,
                           .interleave = o->interleave,
                           .budget_s = o->budget_s,
                           .check = o->check,
                           .rebalance_every = o->rebalance_every,
                           .inject = o->inject_delay,
                           .comm_gap_us = o->comm_gap_us,
                           .sched_iter = o->sched_iter,
                           .emulate_mode = o->emulate_mode,
                           .col_collective = o->col_collective,
                           .quiet = o->quiet,
                           .pass = 1,
                           .passes = o->repeat > 1 ? o->repeat : 1,
                           .err_width = tpb_wrap_width(STDERR_FILENO, o->wide),
                           .block = o->block,
                           .gather = o->gather,
                           .trace_ranks = o->trace_ranks};
}

/* The shapes, the measurement's factors and its names copied into the list (the plans, m and
 * the run record's part point at the copies: the plans need nothing of the options). */
static tpb_status_t own_settings(tpb_plan_list_t *list, const tpb_options_t *o)
{
    size_t ne = (size_t)o->nemulate, ns = (size_t)o->nsched, np = strlen(o->preset) + 1,
           nc = strlen(o->calibration_file) + 1;
    list->shapes = malloc((size_t)(o->nshapes > 0 ? o->nshapes : 1) * sizeof(*list->shapes));
    list->own_factors = malloc((ne + ns + 1) * sizeof(double));
    list->own_names = malloc(np + nc);
    if (!list->shapes || !list->own_factors || !list->own_names)
        return tpb_err_set(TPB_ERR_NOMEM, "out of memory for the plans' settings");
    memcpy(list->shapes, o->shapes, (size_t)o->nshapes * sizeof(*list->shapes));
    list->nshapes = o->nshapes;
    if (ne)
        memcpy(list->own_factors, o->emulate, ne * sizeof(double));
    if (ns)
        memcpy(list->own_factors + ne, o->sched, ns * sizeof(double));
    memcpy(list->own_names, o->preset, np);
    memcpy(list->own_names + np, o->calibration_file, nc);
    list->m.emulate = list->run.emulate = ne ? list->own_factors : NULL;
    list->m.sched = list->run.sched = ns ? list->own_factors + ne : NULL;
    list->m.preset = list->own_names;
    list->m.calibration_file = list->own_names + np;
    return TPB_OK;
}

/* The run record's part that the options decide: built once, here (the sweep reads the plans,
 * not the options). */
static tpb_run_info_t run_of(const tpb_options_t *o)
{
    return (tpb_run_info_t){.sched_iter = o->sched_iter, /* its factors: own_settings */
                            .dtype = o->dtype,
                            .iters = o->iters,
                            .warmup = o->warmup,
                            .granularity = o->granularity,
                            .cost_profile = o->cost_profile.nblocks ? &o->cost_profile : NULL,
                            .seed = o->seed,
                            .timeline = o->timeline,
                            .trace_iters = o->trace_iters,
                            .trace_per_run = o->trace_per_run,
                            .check = o->check,
                            .inject_delay_rank = o->inject_delay.rank,
                            .inject_clock_rank = o->inject_clock.rank,
                            .out_dir = o->out_dir,
                            .force = o->force,
                            .comm_only = o->comm_only,
                            .comm_gap_us = o->comm_gap_us,
                            .collectives = o->collectives,
                            .width = o->wide ? TPB_TABLE_WIDE : TPB_TABLE_COMPACT};
}

tpb_status_t tpb_plans_build(const tpb_options_t *o, const tpb_topo_t *topo, tpb_plan_list_t *list)
{
    memset(list, 0, sizeof(*list));
    list->m = measure_of(o);
    tpb_options_backend_cfg(o, &list->m.backend);
    list->run = run_of(o);
    list->backend = o->backend;
    tpb_status_t st = own_settings(list, o); /* the shapes, factors and names: the list's */
    int block = 0;
    for (unsigned pl = TPB_PLACE_PACKED; pl <= TPB_PLACE_SPREAD && st == TPB_OK; pl <<= 1) {
        int *order = malloc((size_t)topo->size * sizeof(int));
        if (!order) {
            st = tpb_err_set(TPB_ERR_NOMEM, "out of memory for the placement of %d ranks",
                             topo->size);
            break;
        }
        tpb_placement_order((tpb_placement_t)pl, topo->host_index, topo->size, order);
        list->rank_of[pl == TPB_PLACE_SPREAD] = order;
        if (o->placements & pl)
            st = push_placement(list, o, topo, (tpb_placement_t)pl, &block);
    }
    if (st == TPB_OK && o->shard_plan.n) /* before --speeds: a planned config keeps its own */
        st = tpb_plans_take_planned(list, o);
    if (st == TPB_OK && o->nspeeds)
        st = tpb_plans_given_speeds(list, o);
    if (st == TPB_OK && !o->fleet) /* --fleet's budget is its own (run/fleet.c) */
        st = tpb_plans_check_budget(list);
    if (st != TPB_OK)
        tpb_plans_free(list);
    return st;
}

tpb_status_t tpb_plan_reshard(const tpb_config_plan_t *p, const long *shards,
                              tpb_config_plan_t *next)
{
    int t = p->tp;
    *next = *p;
    next->shards = malloc((size_t)t * sizeof(long));
    next->fractions = malloc((size_t)t * sizeof(double));
    next->speeds = p->speeds ? malloc((size_t)t * sizeof(*p->speeds)) : NULL;
    if (!next->shards || !next->fractions || (p->speeds && !next->speeds)) {
        tpb_plan_release(next);
        return tpb_err_set(TPB_ERR_NOMEM, "out of memory for a re-balanced plan");
    }
    if (p->speeds)
        memcpy(next->speeds, p->speeds, (size_t)t * sizeof(*p->speeds));
    long total = tpb_split_total(p->shape, p->desc.orient->split);
    for (int r = 0; r < t; r++) {
        next->shards[r] = shards[r];
        next->fractions[r] = (double)shards[r] / (double)total;
    }
    next->desc.shards = next->shards;
    next->mem_bytes = tpb_layer_bytes(&next->desc);
    return TPB_OK;
}

void tpb_plan_release(tpb_config_plan_t *p)
{
    free(p->shards);
    free(p->fractions);
    free(p->speeds);
    p->shards = NULL;
    p->fractions = NULL;
    p->speeds = NULL;
}

tpb_status_t tpb_plan_check_memory(const tpb_config_plan_t *p, double avail, int rank)
{
    char what[160];
    const tpb_shape_t *sh = p->shape;
    snprintf(what, sizeof(what), "shape %ldx%ldx%ld (%s, tp %d, %s)", sh->m, sh->n, sh->k,
             tpb_dtype_name(p->desc.dtype), p->tp, tpb_split_name(p->desc.orient->split));
    return tpb_mem_check(p->mem_bytes, avail, rank, what, "");
}

tpb_status_t tpb_plans_check_memory(const tpb_plan_list_t *list, double avail, int rank)
{
    for (int i = 0; i < list->n; i++) {
        if (list->p[i].skip[0] || tpb_plan_check_memory(&list->p[i], avail, rank) == TPB_OK)
            continue;
        char msg[512];
        snprintf(msg, sizeof(msg), "%s", tpb_err_msg());
        return tpb_err_set(TPB_ERR_NOMEM, "%s (nothing was measured or written)", msg);
    }
    return TPB_OK;
}

tpb_fleet_plan_t tpb_fleet_plan_of(const tpb_options_t *o)
{
    tpb_fleet_plan_t fp = {.shape = o->shapes[0],
                           .dtype = o->dtype,
                           .seed = o->seed,
                           .bytes = (double)o->fleet_bytes,
                           .threshold = o->fleet_threshold,
                           .budget_s = o->budget_s,
                           .quiet = o->quiet,
                           .backend = o->backend};
    tpb_options_backend_cfg(o, &fp.cfg);
    snprintf(fp.out_dir, sizeof(fp.out_dir), "%s", o->out_dir);
    return fp;
}
