/* sweep_speeds.c - the speeds of the weighted policy: --speeds, the calibration
 * file, or a calibration GEMM on every rank. */
#include <math.h>
#include <string.h>

#include "run/agree.h"
#include "base/partition.h"
#include "run/sweep.h"

/* Calibrate every rank at once at its even shard; all-gather the world's speeds. */
static tpb_status_t calibrate(tpb_sweep_t *s, const tpb_point_t *c, tpb_cal_speed_t *world)
{
    int t = c->tp, gr = s->topo->rank % t;
    long shards[t], total = tpb_split_total(c->shape, c->split);
    tpb_status_t st = tpb_partition_even(total, t, s->o->granularity, shards);
    TPB_CHECK_RET(tpb_agree(s->world, st));
    const tpb_shape_t *sh = c->shape;
    tpb_gemm_shape_t g = {.m = sh->m,
                          .n = c->split == TPB_SPLIT_COL ? shards[gr] : sh->n,
                          .k = c->split == TPB_SPLIT_ROW ? shards[gr] : sh->k,
                          .dtype = s->o->dtype};
    tpb_cal_policy_t pol = TPB_CAL_POLICY_DEFAULT;
    tpb_cal_speed_t mine;
    TPB_CHECK_RET(tpb_calibrate_gemm(s->ops, s->be, s->world, &g, &pol, &mine));
    double v[3] = {mine.gflops, mine.spread, mine.samples}, all[3 * s->topo->size];
    if (MPI_Allgather(v, 3, MPI_DOUBLE, all, 3, MPI_DOUBLE, s->world) != MPI_SUCCESS)
        return tpb_err_call(TPB_ERR_MPI, "MPI_Allgather", "speeds", __FILE__, __LINE__);
    for (int r = 0; r < s->topo->size; r++)
        world[r] = (tpb_cal_speed_t){all[3 * r], all[3 * r + 1], (int)all[3 * r + 2]};
    if (s->topo->rank == 0)
        for (int r = 0; r < s->topo->size; r++)
            if (!(world[r].spread <= pol.target_spread))
                fprintf(s->out,
                        "# warning: calibration of rank %d (%s) did not settle: spread %.1f %% "
                        "after %d GEMMs (target %.0f %%); its weighted shard may be off\n",
                        s->rank_of[r], s->topo->hosts[r], 100.0 * world[r].spread, world[r].samples,
                        100.0 * pol.target_spread);
    return TPB_OK;
}

/* Rank 0 looks the key up in the calibration file; the verdict is broadcast. */
static tpb_status_t lookup_file(tpb_sweep_t *s, const tpb_point_t *c, tpb_cal_speed_t *world,
                                int *found)
{
    int size = s->topo->size;
    *found = 0;
    /* the file is keyed by world rank; world[] is in placement order */
    *found = s->topo->rank == 0;
    for (int q = 0; q < size && *found && s->topo->rank == 0; q++)
        *found = tpb_caltable_lookup(&s->cal, c->split, c->shape->m, c->shape->n, c->shape->k,
                                     c->tp, s->o->dtype, s->rank_of[q], 1, &world[q]);
    if (MPI_Bcast(found, 1, MPI_INT, 0, s->world) != MPI_SUCCESS ||
        MPI_Bcast(world, (int)(size * sizeof(*world)), MPI_BYTE, 0, s->world) != MPI_SUCCESS)
        return tpb_err_call(TPB_ERR_MPI, "MPI_Bcast", "calibration file", __FILE__, __LINE__);
    return TPB_OK;
}

/* Rank 0 adds freshly calibrated speeds to the calibration file. */
static tpb_status_t save_file(tpb_sweep_t *s, const tpb_point_t *c, const tpb_cal_speed_t *world)
{
    tpb_status_t st = TPB_OK;
    if (s->topo->rank == 0) {
        for (int r = 0; r < s->topo->size && st == TPB_OK; r++) {
            tpb_cal_entry_t e = {.split = c->split,
                                 .m = c->shape->m,
                                 .n = c->shape->n,
                                 .k = c->shape->k,
                                 .tp = c->tp,
                                 .dtype = s->o->dtype,
                                 .rank = s->rank_of[r],
                                 .gflops = world[r].gflops,
                                 .spread = world[r].spread,
                                 .samples = world[r].samples};
            snprintf(e.host, sizeof(e.host), "%s", s->topo->hosts[r]);
            st = tpb_caltable_put(&s->cal, &e);
        }
        if (st == TPB_OK)
            st = tpb_caltable_save(s->o->calibration_file, &s->cal);
    }
    return tpb_agree(s->world, st);
}

/* Speeds of this rank's group for config c (group entries), and their source. */
tpb_status_t tpb_sweep_speeds(tpb_sweep_t *s, tpb_point_t *c, tpb_cal_speed_t *speeds)
{
    int size = s->topo->size, g0 = s->topo->rank / c->tp * c->tp;
    tpb_cal_speed_t world[size];
    if (s->o->nspeeds) {
        for (int i = 0; i < c->tp; i++)
            speeds[i] =
                (tpb_cal_speed_t){.gflops = s->o->speeds[s->rank_of[g0 + i]], .spread = NAN};
        c->speed_source = TPB_SPEEDS_GIVEN;
        return TPB_OK;
    }
    int found = 0;
    if (s->o->calibration_file[0])
        TPB_CHECK_RET(lookup_file(s, c, world, &found));
    c->speed_source = found ? TPB_SPEEDS_FILE : TPB_SPEEDS_CALIBRATION;
    if (!found) {
        TPB_CHECK_RET(calibrate(s, c, world));
        if (s->o->calibration_file[0])
            TPB_CHECK_RET(save_file(s, c, world));
    }
    memcpy(speeds, world + g0, (size_t)c->tp * sizeof(*speeds));
    return TPB_OK;
}
