/* sweep_speeds.c - the speeds of the weighted policy: --speeds, the calibration
 * file, or a calibration GEMM on every rank. */
#include <math.h>
#include <string.h>

#include "agree.h"
#include "partition.h"
#include "sweep.h"

#define CAL_REPS 5

/* Calibrate this rank at its even shard; all-gather the world's speeds. */
static tpb_status_t calibrate(tpb_sweep_t *s, const tpb_point_t *c, double *world_speeds)
{
    int t = c->tp, gr = s->topo->rank % t;
    long shards[t], total = tpb_split_total(c->shape, c->split);
    tpb_status_t st = tpb_partition_even(total, t, s->o->granularity, shards);
    double mine = NAN;
    if (st == TPB_OK) {
        const tpb_shape_t *sh = c->shape;
        long n = c->split == TPB_SPLIT_COL ? shards[gr] : sh->n;
        long k = c->split == TPB_SPLIT_ROW ? shards[gr] : sh->k;
        st = tpb_calibrate_gemm(s->ops, s->be, sh->m, n, k, s->o->dtype, CAL_REPS, &mine);
    }
    TPB_CHECK_RET(tpb_agree(s->world, st));
    if (MPI_Allgather(&mine, 1, MPI_DOUBLE, world_speeds, 1, MPI_DOUBLE, s->world) != MPI_SUCCESS)
        return tpb_err_call(TPB_ERR_MPI, "MPI_Allgather", "speeds", __FILE__, __LINE__);
    return TPB_OK;
}

/* Rank 0 looks the key up in the calibration file; the verdict is broadcast. */
static tpb_status_t lookup_file(tpb_sweep_t *s, const tpb_point_t *c, double *world_speeds,
                                int *found)
{
    int size = s->topo->size;
    *found = 0;
    if (s->topo->rank == 0)
        *found = tpb_caltable_lookup(&s->cal, c->split, c->shape->m, c->shape->n, c->shape->k,
                                     c->tp, s->o->dtype, 0, size, world_speeds);
    if (MPI_Bcast(found, 1, MPI_INT, 0, s->world) != MPI_SUCCESS ||
        MPI_Bcast(world_speeds, size, MPI_DOUBLE, 0, s->world) != MPI_SUCCESS)
        return tpb_err_call(TPB_ERR_MPI, "MPI_Bcast", "calibration file", __FILE__, __LINE__);
    return TPB_OK;
}

/* Rank 0 adds freshly calibrated speeds to the calibration file. */
static tpb_status_t save_file(tpb_sweep_t *s, const tpb_point_t *c, const double *world_speeds)
{
    tpb_status_t st = TPB_OK;
    if (s->topo->rank == 0) {
        for (int r = 0; r < s->topo->size && st == TPB_OK; r++) {
            tpb_cal_entry_t e = {c->split,    c->shape->m, c->shape->n, c->shape->k,    c->tp,
                                 s->o->dtype, r,           "",          world_speeds[r]};
            snprintf(e.host, sizeof(e.host), "%s", s->topo->hosts[r]);
            st = tpb_caltable_put(&s->cal, &e);
        }
        if (st == TPB_OK)
            st = tpb_caltable_save(s->o->calibration_file, &s->cal);
    }
    return tpb_agree(s->world, st);
}

/* Speeds of this rank's group for config c (group entries), and their source. */
tpb_status_t tpb_sweep_speeds(tpb_sweep_t *s, tpb_point_t *c, double *speeds)
{
    int size = s->topo->size, g0 = s->topo->rank / c->tp * c->tp;
    double world_speeds[size];
    if (s->o->nspeeds) {
        memcpy(speeds, s->o->speeds + g0, (size_t)c->tp * sizeof(double));
        c->speed_source = "speeds";
        return TPB_OK;
    }
    int found = 0;
    if (s->o->calibration_file[0])
        TPB_CHECK_RET(lookup_file(s, c, world_speeds, &found));
    c->speed_source = found ? "file" : "calibration";
    if (!found) {
        TPB_CHECK_RET(calibrate(s, c, world_speeds));
        if (s->o->calibration_file[0])
            TPB_CHECK_RET(save_file(s, c, world_speeds));
    }
    memcpy(speeds, world_speeds + g0, (size_t)c->tp * sizeof(double));
    return TPB_OK;
}
