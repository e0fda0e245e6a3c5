/* preflight.c - what can be checked before the first config is measured. */
#include <math.h>
#include <string.h>

#include "base/partition.h"
#include "out/outfile.h"
#include "run/agree.h"
#include "run/layer.h"
#include "run/sweep.h"

/* This rank's bytes for (tp, shape, split) at the even split; 0 if it cannot be split. */
static double even_bytes(const tpb_sweep_t *s, int tp, const tpb_shape_t *sh, tpb_split_t split)
{
    long shards[tp];
    if (tpb_partition_even(tpb_split_total(sh, split), tp, s->o->granularity, shards) != TPB_OK)
        return 0.0; /* skipped with a message by the sweep */
    tpb_layer_desc_t d = {.split = split,
                          .colcoll = s->o->col_collective,
                          .m = sh->m,
                          .n = sh->n,
                          .k = sh->k,
                          .dtype = s->o->dtype,
                          .tp = tp,
                          .group_rank = s->topo->rank % tp,
                          .shards = shards,
                          .comm_only = sh->comm_only};
    return tpb_layer_bytes(&d);
}

/* The first (tp, shape, split) that does not fit in avail bytes on this rank. */
static tpb_status_t check_memory(const tpb_sweep_t *s, double avail)
{
    for (int t = 0; t < s->o->ntp; t++) {
        int tp = s->o->tp[t];
        if (!tpb_sweep_tp_valid(s, tp))
            continue;
        for (int i = 0; i < s->o->nshapes; i++) {
            const tpb_shape_t *sh = &s->o->shapes[i];
            for (unsigned sp = TPB_SPLIT_ROW; sp <= TPB_SPLIT_COL; sp <<= 1) {
                if (!(tpb_sweep_shape_splits(s, sh) & sp))
                    continue;
                double need = even_bytes(s, tp, sh, (tpb_split_t)sp);
                if (need > avail)
                    return tpb_err_set(TPB_ERR_NOMEM,
                                       "shape %ldx%ldx%ld (%s, tp %d, %s) needs %.0f bytes on "
                                       "rank %d but %.0f are free: use a smaller shape or a "
                                       "larger --tp (nothing was measured or written)",
                                       sh->m, sh->n, sh->k, tpb_dtype_name(s->o->dtype), tp,
                                       tpb_split_name((tpb_split_t)sp), need, s->topo->rank, avail);
            }
        }
    }
    return TPB_OK;
}

tpb_status_t tpb_sweep_preflight(tpb_sweep_t *s)
{
    double avail = 0.0;
    tpb_status_t st = s->ops->mem_free(s->be, &avail);
    if (st == TPB_OK)
        st = check_memory(s, avail);
    if (st == TPB_OK && s->topo->rank == 0 && s->o->calibration_file[0])
        st = tpb_outfile_check_writable(s->o->calibration_file, "--calibration-file");
    return tpb_agree(s->world, st);
}
