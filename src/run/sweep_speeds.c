/* sweep_speeds.c - the speeds a block of plans weighs by: the calibration file, or a
 * calibration GEMM on every rank at once (--speeds are planned, run/plan.c). */
#include <math.h>
#include <string.h>

#include "base/partition.h"
#include "base/stamp.h"
#include "run/agree.h"
#include "run/layer.h"
#include "run/orient.h"
#include "run/sweep_state.h"
#include "run/wire.h"

/* All-gather or broadcast (root >= 0) of the world's speeds by their datatype. */
static tpb_status_t share(tpb_sweep_t *s, tpb_cal_speed_t *mine, tpb_cal_speed_t *world, int root)
{
    MPI_Datatype t;
    TPB_CHECK_RET(tpb_wire_type(TPB_WIRE_CAL_SPEED, &t));
    int rc = root < 0 ? MPI_Allgather(mine, 1, t, world, 1, t, s->pos.world)
                      : MPI_Bcast(world, s->pos.topo->size, t, root, s->pos.world);
    MPI_Type_free(&t);
    if (rc != MPI_SUCCESS)
        return tpb_err_call(TPB_ERR_MPI, root < 0 ? "MPI_Allgather" : "MPI_Bcast", "speeds",
                            __FILE__, __LINE__);
    return TPB_OK;
}

/* Calibrate every rank at once at its shard of plan p (the block's even shards: no plan
 * of the block is weighted before its speeds are known); all-gather the world's speeds. */
static tpb_status_t calibrate(tpb_sweep_t *s, const tpb_config_plan_t *p, tpb_cal_speed_t *world)
{
    const tpb_layer_desc_t *d = &p->desc;
    long shard = p->shards[d->group_rank];
    tpb_inputs_block_t mats[2]; /* the config's X and W: drawn now, kept for the config */
    int has = tpb_layer_inputs(d, mats) == 2;
    tpb_gemm_shape_t g = {.m = d->m,
                          .n = d->orient->split == TPB_SPLIT_COL ? shard : d->n,
                          .k = d->orient->split == TPB_SPLIT_ROW ? shard : d->k,
                          .dtype = d->dtype,
                          .inputs = has ? mats : NULL};
    tpb_cal_policy_t pol = TPB_CAL_POLICY_DEFAULT;
    tpb_cal_speed_t mine;
    double t0 = tpb_clock_now_us(NULL);
    if (has) {
        tpb_stamp(TPB_PHASE_INPUTS);
        TPB_CHECK_RET(tpb_agree(s->pos.world, tpb_inputs_prepare(s->pos.world, mats, 2)));
    }
    TPB_CHECK_RET(tpb_calibrate_gemm(s->ctx.dev, s->pos.world, &g, &pol, &mine));
    s->acct.cal_us += tpb_clock_now_us(NULL) - t0; /* host time of the next config opened */
    TPB_CHECK_RET(share(s, &mine, world, -1));
    for (int r = 0; s->rec && r < s->pos.topo->size; r++) { /* once a rank; the summary: worst */
        if (world[r].spread <= pol.target_spread || s->rec->cal_warned[s->pos.rank_of[r]])
            continue;
        s->rec->cal_warned[s->pos.rank_of[r]] = 1;
        tpb_record_warn(
            &s->rec->rec,
            "# warning: calibration of rank %d (%s) did not settle: spread %.1f %% "
            "after %d GEMMs (target %.0f %%); its weighted shards may be off (the answer "
            "has the worst spread)",
            s->pos.rank_of[r], s->pos.topo->hosts[r], 100.0 * world[r].spread, world[r].samples,
            100.0 * pol.target_spread);
    }
    return TPB_OK;
}

/* Rank 0 looks the block up in the calibration file (keyed by world rank; world[] is in
 * placement order); the verdict and the speeds are broadcast. */
static tpb_status_t lookup_file(tpb_sweep_t *s, const tpb_config_plan_t *p, tpb_cal_speed_t *world,
                                int *found)
{
    const tpb_layer_desc_t *d = &p->desc;
    int stale = -1;
    *found = s->rec != NULL;
    for (int q = 0; q < s->pos.topo->size && *found && s->rec; q++) {
        const char *host = s->pos.topo->hosts[q];
        *found = tpb_calfile_lookup(&s->rec->cal, &p->key, d->dtype, s->pos.rank_of[q], 1, &host,
                                    &world[q], &stale);
        if (stale >= 0) /* a row measured on another host is not this rank's speed */
            tpb_record_warn(&s->rec->rec,
                            "# warning: --calibration-file %s: the row of rank %d was measured on "
                            "another host than %s; calibrated again",
                            s->plans.m.calibration_file, stale, host);
    }
    TPB_MPI_RET(MPI_Bcast(found, 1, MPI_INT, 0, s->pos.world), "calibration file");
    return share(s, NULL, world, 0);
}

/* Rank 0 adds freshly calibrated speeds to the calibration file. */
static tpb_status_t save_file(tpb_sweep_t *s, const tpb_config_plan_t *p,
                              const tpb_cal_speed_t *world)
{
    const tpb_layer_desc_t *d = &p->desc;
    tpb_status_t st = TPB_OK;
    for (int r = 0; s->rec && r < s->pos.topo->size && st == TPB_OK; r++) {
        tpb_cal_entry_t e = {.dtype = d->dtype,
                             .rank = s->pos.rank_of[r],
                             .gflops = world[r].speed,
                             .spread = world[r].spread,
                             .samples = world[r].samples};
        tpb_config_key_take(&e.key, &p->key, TPB_CAL_KEY);
        snprintf(e.host, sizeof(e.host), "%s", s->pos.topo->hosts[r]);
        st = tpb_calfile_put(&s->rec->cal, &e);
    }
    if (st == TPB_OK && s->rec)
        st = tpb_calfile_save(s->plans.m.calibration_file, &s->rec->cal);
    return tpb_agree(s->pos.world, st);
}

tpb_status_t tpb_sweep_speeds(tpb_sweep_t *s, int i)
{
    const tpb_config_plan_t *p = &s->plans.p[i];
    int found = 0, g0 = p->position / p->tp * p->tp;
    tpb_cal_speed_t world[s->pos.topo->size];
    memset(world, 0, sizeof(world));
    if (s->plans.m.calibration_file[0])
        TPB_CHECK_RET(lookup_file(s, p, world, &found));
    if (!found) {
        TPB_CHECK_RET(calibrate(s, p, world));
        if (s->plans.m.calibration_file[0])
            TPB_CHECK_RET(save_file(s, p, world));
    }
    double v[p->tp]; /* the speeds a partition gets are checked here, once */
    for (int r = 0; r < p->tp; r++)
        v[r] = world[g0 + r].speed;
    const char *from = found ? "--calibration-file" : "calibration";
    tpb_status_t st = tpb_speeds_check(v, p->tp, from);
    if (st == TPB_OK)
        st = tpb_plans_set_speeds(&s->plans, i, found ? TPB_SPEEDS_FILE : TPB_SPEEDS_CALIBRATION,
                                  world + g0);
    return tpb_agree(s->pos.world, st);
}
