/* dryrun.c - the resolved config list of a command line, without a device. */
#include "run/dryrun.h"

#include "run/plan.h"
#include "run/coll.h"
#include "run/orient.h"

/* "64,64" for the group's shards, or what decides them. */
static void shards_text(const tpb_config_plan_t *p, char *out, size_t cap)
{
    if (p->uses_speeds && !p->speeds) {
        snprintf(out, cap, "%s", "from calibration");
        return;
    }
    size_t used = 0;
    out[0] = '\0';
    for (int r = 0; r < p->tp && used < cap; r++)
        used += (size_t)snprintf(out + used, cap - used, "%s%ld", r ? "," : "", p->shards[r]);
}

tpb_status_t tpb_dry_run(const tpb_options_t *o, const tpb_topo_t *topo, FILE *out)
{
    tpb_plan_list_t list;
    TPB_CHECK_RET(tpb_plans_build(o, topo, &list));
    for (int i = 0; out && i < list.n; i++) {
        const tpb_config_plan_t *p = &list.p[i];
        const tpb_shape_t *sh = p->shape;
        char shards[256];
        if (p->skip[0]) { /* a skipped entry has no shape or split of its own */
            fprintf(out, "config %3d: tp %d %s: skipped: %s\n", i, p->tp,
                    tpb_placement_name(p->placement), p->skip);
            continue;
        }
        shards_text(p, shards, sizeof(shards));
        if (sh->comm_only)
            fprintf(out, "config %3d: tp %d %s %s %s, %s", i, p->tp,
                    tpb_coll_name(p->desc.coll->kind), tpb_policy_name(p->policy),
                    tpb_placement_name(p->placement), sh->name);
        else
            fprintf(out, "config %3d: tp %d %s %s %s, %ldx%ldx%ld %s%s%s", i, p->tp,
                    tpb_split_name(p->desc.orient->split), tpb_policy_name(p->policy),
                    tpb_placement_name(p->placement), sh->m, sh->n, sh->k, tpb_dtype_name(o->dtype),
                    sh->name[0] ? " " : "", sh->name);
        if (p->seqpar == TPB_SEQPAR_ON)
            fprintf(out, ", sequence parallel (%s)", tpb_coll_label(p->desc.coll->kind));
        if (p->desc.chunks)
            fprintf(out, ", overlap %d chunks", p->desc.chunks);
        fprintf(out, ", shards %s\n", shards);
    }
    if (out)
        fprintf(out,
                "tpbal: dry run: %d configs would be measured and %d skipped on %d ranks, "
                "backend %s (no device opened, nothing written)\n",
                list.measured, list.n - list.measured, topo->size, o->backend->name);
    tpb_plans_free(&list);
    return TPB_OK;
}
