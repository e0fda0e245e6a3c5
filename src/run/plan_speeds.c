/* plan_speeds.c - a plan's weighted shards: from calibrated or given speeds (--speeds),
 * from a cost profile (--policy cost) or from a shard plan file (--shards-from). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/partition.h"
#include "base/sizes.h"
#include "run/orient.h"
#include "run/plan.h"

static int weighted(tpb_policy_t p)
{
    return p == TPB_POLICY_WEIGHTED || p == TPB_POLICY_ADAPTIVE || p == TPB_POLICY_COST;
}

/* --policy cost: the optimal contiguous split of the profile's cost / speed (units of the
 * granularity), the last shard taking total mod g as the other splits do. */
static tpb_status_t cost_split(const tpb_config_plan_t *p, long total, const double *s)
{
    long g = p->granularity, units = total / g, counts[p->tp];
    double *ucost = malloc((size_t)units * sizeof(double));
    if (!ucost)
        return tpb_err_set(TPB_ERR_NOMEM, "out of memory for the cost split");
    tpb_cost_units(p->desc.profile, total, g, ucost);
    tpb_status_t st = tpb_partition_cost(ucost, units, p->tp, s, counts, NULL);
    free(ucost);
    TPB_CHECK_RET(st);
    for (int r = 0; r < p->tp; r++)
        p->shards[r] = counts[r] * g;
    p->shards[p->tp - 1] += total % g;
    for (int r = 0; r < p->tp; r++) /* what the split gives, as the cost decided it */
        p->fractions[r] = (double)p->shards[r] / (double)total;
    return TPB_OK;
}

/* Weighted shards from the plan's speeds; a skip if they cannot be made. */
static void weigh(tpb_config_plan_t *p)
{
    int t = p->tp;
    double s[t];
    for (int i = 0; i < t; i++)
        s[i] = p->speeds[i].speed;
    long total = tpb_split_total(p->shape, p->desc.orient->split);
    tpb_status_t st =
        p->policy == TPB_POLICY_COST
            ? cost_split(p, total, s)
            : tpb_partition_weighted(total, t, p->granularity, s, p->shards, p->fractions);
    if (st != TPB_OK) {
        snprintf(p->skip, sizeof(p->skip), "%s", tpb_err_msg());
        return;
    }
    for (int r = 0; p->policy == TPB_POLICY_ADAPTIVE && r < t; r++) /* its rounds move them */
        p->fractions[r] = (double)p->shards[r] / (double)total;
    p->mem_bytes = tpb_layer_bytes(&p->desc);
}

/* --speeds: the speeds of every block that weighs, in its group's placement order. */
tpb_status_t tpb_plans_given_speeds(tpb_plan_list_t *list, const tpb_options_t *o)
{
    for (int i = 0; i < list->n; i++) {
        tpb_config_plan_t *p = &list->p[i];
        if (!tpb_plan_needs_speeds(p))
            continue;
        const int *rank_of = tpb_plans_rank_of(list, p->placement);
        int g0 = p->position / p->tp * p->tp;
        tpb_cal_speed_t s[p->tp];
        for (int r = 0; r < p->tp; r++)
            s[r] = (tpb_cal_speed_t){.speed = o->speeds[rank_of[g0 + r]], .spread = NAN};
        TPB_CHECK_RET(tpb_plans_set_speeds(list, i, TPB_SPEEDS_GIVEN, s));
    }
    return TPB_OK;
}

/* --shards-from: plan p takes the shards (and speeds) of entry e for its group, which must
 * be the group the plan file names for the same world ranks in the same order. */
static tpb_status_t take_planned(tpb_plan_list_t *list, tpb_config_plan_t *p,
                                 const tpb_shardplan_entry_t *e)
{
    const int *rank_of = tpb_plans_rank_of(list, p->placement);
    int g0 = p->position / p->tp * p->tp, at = -1;
    for (int q = 0; q < e->nranks; q++)
        if (e->world_ranks[q] == rank_of[g0])
            at = q;
    int same = at >= 0 && at % p->tp == 0;
    for (int r = 0; same && r < p->tp; r++)
        same = e->world_ranks[at + r] == rank_of[g0 + r];
    if (!same)
        return tpb_err_set(TPB_ERR_INVALID,
                           "--shards-from: the plan of %ldx%ldx%ld %s %s tp %d has no group of "
                           "world ranks %d.. in this run's order (%s placement): plan with the "
                           "world and placement you run",
                           e->m, e->n, e->k, tpb_split_name(e->split), tpb_policy_name(e->policy),
                           e->tp, rank_of[g0], tpb_placement_name(p->placement));
    if (!(p->speeds = malloc((size_t)p->tp * sizeof(*p->speeds))))
        return tpb_err_set(TPB_ERR_NOMEM, "out of memory for the plans");
    long total = tpb_split_total(p->shape, p->desc.orient->split);
    for (int r = 0; r < p->tp; r++) {
        p->shards[r] = e->shards[at + r];
        p->fractions[r] = (double)p->shards[r] / (double)total;
        p->speeds[r] = (tpb_cal_speed_t){.speed = e->speeds[at + r], .spread = NAN};
    }
    p->speed_source = TPB_SPEEDS_PLAN;
    p->mem_bytes = tpb_layer_bytes(&p->desc);
    return TPB_OK;
}

tpb_status_t tpb_plans_take_planned(tpb_plan_list_t *list, const tpb_options_t *o)
{
    char what[sizeof(o->shards_from) + 20];
    snprintf(what, sizeof(what), "--shards-from %s", o->shards_from);
    TPB_CHECK_RET(tpb_shardplan_check(&o->shard_plan, o->granularity, o->dtype, what));
    int used = 0;
    for (int i = 0; i < list->n; i++) {
        tpb_config_plan_t *p = &list->p[i];
        if (p->skip[0] || p->shape->comm_only)
            continue;
        const tpb_shardplan_entry_t *e = tpb_shardplan_find(&o->shard_plan, &p->key);
        if (e && p->tp >= 2) /* TP 1: one shard, nothing to take, but the plan is used */
            TPB_CHECK_RET(take_planned(list, p, e));
        used += e != NULL;
    }
    if (!used) {
        const tpb_shardplan_entry_t *e = &o->shard_plan.e[0];
        return tpb_err_set(TPB_ERR_INVALID,
                           "%s plans none of this run's configs (its first: %ldx%ldx%ld %s %s tp "
                           "%d): run the shapes, splits, policies and TP degrees it plans",
                           what, e->m, e->n, e->k, tpb_split_name(e->split),
                           tpb_policy_name(e->policy), e->tp);
    }
    return TPB_OK;
}

int tpb_plan_needs_speeds(const tpb_config_plan_t *p)
{
    return !p->skip[0] && p->uses_speeds && !p->speeds;
}

tpb_status_t tpb_plans_set_speeds(tpb_plan_list_t *list, int i, tpb_speed_source_t source,
                                  const tpb_cal_speed_t *speeds)
{
    int block = list->p[i].block;
    for (int j = i; j < list->n && list->p[j].block == block; j++) {
        tpb_config_plan_t *p = &list->p[j];
        if (p->speed_source == TPB_SPEEDS_PLAN)
            continue; /* its shards are the plan file's */
        p->speeds = malloc((size_t)p->tp * sizeof(*speeds));
        if (!p->speeds)
            return tpb_err_set(TPB_ERR_NOMEM, "out of memory for speeds");
        memcpy(p->speeds, speeds, (size_t)p->tp * sizeof(*speeds));
        p->speed_source = source;
        if (weighted(p->policy))
            weigh(p);
    }
    return TPB_OK;
}
