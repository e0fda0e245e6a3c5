/* plan_order.c - the order in which the sweep measures the plans (run/plan.h): a config
 * alone, the policies of one block side by side (--interleave), or a --block's units; the
 * sweep (sweep.c, sweep_units.c) and the dry run walk the plans by these same rules, so
 * that a config's id (its place in the order measured) is the same in both. Pure. */
#include <string.h>

#include "run/plan.h"

/* The plans measured with plan i (i first; at most TPB_SET_MAX): the other policies of its
 * block and sequence parallelism. Returns how many (1: alone). */
int tpb_plans_set_of(const tpb_plan_list_t *l, int i, const unsigned char *done, int *idx)
{
    const tpb_config_plan_t *p = &l->p[i];
    int k = 0;
    idx[k++] = i;
    if (!tpb_plan_interleavable(&l->m, p))
        return 1;
    for (int j = i + 1; j < l->n && l->p[j].block == p->block && k < TPB_SET_MAX; j++)
        if (!done[j] && tpb_plan_interleavable(&l->m, &l->p[j]) &&
            tpb_config_key_side_by_side(&l->p[j].key, &p->key))
            idx[k++] = j;
    return k;
}

/* The plans of plan i's placement and TP degree: [returned, *end). */
static int range_of(const tpb_plan_list_t *l, int i, int *end)
{
    const tpb_config_plan_t *p = &l->p[i];
    int b = i;
    unsigned same = TPB_KEY_PLACEMENT | TPB_KEY_TP;
    while (b > 0 && tpb_config_key_same(&l->p[b - 1].key, &p->key, same))
        b--;
    for (*end = i; *end < l->n && tpb_config_key_same(&l->p[*end].key, &p->key, same); (*end)++)
        ;
    return b;
}

/* --block: plan i is a skip entry that a block of its range reports (its range has a plan
 * to measure). */
int tpb_plans_block_reports(const tpb_plan_list_t *l, int i)
{
    int end, b = range_of(l, i, &end);
    for (int j = b; j < end; j++)
        if (!l->p[j].skip[0])
            return 1;
    return 0;
}

/* q is of p's variant (base/config_key.h: sequence parallelism); with any, a plan without
 * one (a skip made before the variant was chosen) counts for every variant. */
static int same_variant(const tpb_config_plan_t *q, const tpb_config_plan_t *p, int any)
{
    static const tpb_config_key_t none;
    return tpb_config_key_same(&q->key, &p->key, TPB_KEY_VARIANT) ||
           (any && tpb_config_key_same(&q->key, &none, TPB_KEY_VARIANT));
}

/* --block: the plans measured with plan i as blocks (i first): every policy of its
 * placement, TP degree and sequence parallelism, each a unit of the shapes' plans in
 * order. idx receives k units of *nl plans; returns k, or 0 (every plan in *skip, marked in done)
 * where a shape cannot be planned at this TP degree. */
int tpb_plans_block_of(const tpb_plan_list_t *l, int i, unsigned char *done, int *idx, int *nl,
                       const char **skip)
{
    const tpb_config_plan_t *p = &l->p[i];
    unsigned pols[8];
    int npol = 0, k = 0, end, begin = range_of(l, i, &end);
    *skip = NULL;
    for (int j = begin; j < end; j++) {
        const tpb_config_plan_t *q = &l->p[j];
        /* a shape that cannot be planned at this degree (for this sequence parallelism):
         * no block; a policy's plan that cannot (weighted shards): no unit of that policy */
        if (q->skip[0] && !q->policy && same_variant(q, p, 1) && !*skip)
            *skip = q->skip;
        if (!q->policy || !same_variant(q, p, 0) || done[j])
            continue;
        int seen = 0;
        for (int u = 0; u < npol; u++)
            seen |= pols[u] == (unsigned)q->policy;
        if (!seen && npol < 8)
            pols[npol++] = (unsigned)q->policy;
    }
    *nl = 0;
    for (int u = 0; u < npol; u++) {
        int got = 0;
        for (int j = begin; j < end; j++) {
            const tpb_config_plan_t *q = &l->p[j];
            if (q->policy && same_variant(q, p, 0) && !done[j] &&
                q->policy == (tpb_policy_t)pols[u])
                idx[k * *nl + got++] = j;
        }
        if (u == 0)
            *nl = got;
        k += got == *nl;
    }
    for (int j = begin; j < end; j++)
        if (*skip || same_variant(&l->p[j], p, 1))
            done[j] = 1;
    return *skip ? 0 : k;
}

int tpb_plans_order(const tpb_plan_list_t *l, int *order)
{
    unsigned char done[l->n + 1];
    int idx[l->n + 1], n = 0;
    memset(done, 0, sizeof(done));
    for (int i = 0; i < l->n; i++) {
        if (done[i] || (l->m.block && l->p[i].skip[0]))
            continue; /* measured in an earlier set, or a skip line (its block's) */
        if (l->m.block) {
            int nl = 0;
            const char *skip = NULL;
            int k = tpb_plans_block_of(l, i, done, idx, &nl, &skip);
            for (int u = 0; u < k; u++) { /* a unit with a plan that cannot run: left out */
                int ok = 1;
                for (int j = 0; j < nl; j++)
                    ok &= !l->p[idx[u * nl + j]].skip[0];
                for (int j = 0; j < nl && ok; j++)
                    order[n++] = idx[u * nl + j];
            }
            continue;
        }
        int k = tpb_plans_set_of(l, i, done, idx);
        for (int j = 0; j < k; j++) {
            done[idx[j]] = 1;
            if (!l->p[idx[j]].skip[0])
                order[n++] = idx[j];
        }
    }
    return n;
}
