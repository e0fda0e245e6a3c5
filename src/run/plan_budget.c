/* plan_budget.c - which plans are measured side by side (a set), and whether --budget can act
 * on any of them: an option that the plans make inert is refused, not ignored (plan.h). */
#include "run/plan.h"

#include "run/sweep_state.h"

int tpb_plan_interleavable(const tpb_measure_t *m, const tpb_config_plan_t *q)
{
    return m->interleave && m->timeline && !m->sched && tpb_interleave_rounds(m->iters) > 1 &&
           !q->skip[0] && q->tp > 1 && q->desc.chunks == 0 && !q->shape->comm_only &&
           q->policy != TPB_POLICY_ADAPTIVE;
}

/* 1 where plan i has a partner measured beside it (tpb_plans_set_of's rule, either way round). */
static int in_a_set(const tpb_plan_list_t *list, int i)
{
    const tpb_config_plan_t *p = &list->p[i];
    if (!tpb_plan_interleavable(&list->m, p))
        return 0;
    for (int j = 0; j < list->n; j++)
        if (j != i && list->p[j].block == p->block &&
            tpb_plan_interleavable(&list->m, &list->p[j]) &&
            tpb_config_key_side_by_side(&list->p[j].key, &p->key))
            return 1;
    return 0;
}

tpb_status_t tpb_plans_check_budget(const tpb_plan_list_t *list)
{
    const tpb_measure_t *m = &list->m;
    if (!(m->budget_s > 0.0))
        return TPB_OK;
    const char *why = NULL;
    if (!m->interleave)
        why = "--interleave off measures every config alone, and the budget measures again "
              "only configs measured side by side";
    else if (!m->timeline)
        why = "--timeline off keeps no steps for it to judge";
    else if (tpb_interleave_rounds(m->iters) < 3)
        why = "it needs at least 3 rounds of interleaving: --iters 6 or more";
    for (int i = 0; !why && i < list->n; i++)
        if (in_a_set(list, i) ||
            (m->block && !list->p[i].skip[0] && list->p[i].tp > 1 && !list->p[i].shape->comm_only))
            return TPB_OK;
    if (!why) /* no set anywhere */
        why = "no config is measured beside another (a set is the policies of one shape and TP "
              "degree above 1: --policy even,weighted; not --comm-only, --overlap chunked, "
              "--policy adaptive or --emulate-schedule)";
    return tpb_err_set(TPB_ERR_INVALID, "--budget has no effect here: %s; drop --budget", why);
}
