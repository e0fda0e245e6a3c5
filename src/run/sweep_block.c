/* sweep_block.c - a --block's own figures once its GEMMs' configs are recorded: its step
 * per iteration from their gathered marks (base/block.h), handed to rank 0's record. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/block.h"
#include "run/agree.h"
#include "run/sweep.h"

/* The block's name: the preset's file name without its folder and ".shapes". */
static void block_name(const char *preset, char *out, size_t cap)
{
    const char *base = strrchr(preset, '/');
    base = base ? base + 1 : preset[0] ? preset : "block";
    size_t len = strnlen(base, cap - 1);
    memcpy(out, base, len);
    out[len] = '\0';
    if (len > 7 && strcmp(out + len - 7, ".shapes") == 0)
        out[len - 7] = '\0';
}

tpb_status_t tpb_sweep_block(tpb_sweep_t *s, const tpb_config_run_t *c, int nl)
{
    tpb_status_t st = TPB_OK;
    if (s->rec) {
        const tpb_config_plan_t *p = c[0].plan;
        int iters = c[0].iters, ids[nl];
        const tpb_mark_t *marks[nl];
        double *steps = malloc((size_t)iters * sizeof(double));
        char name[64];
        for (int j = 0; j < nl; j++) {
            marks[j] = c[j].all;
            ids[j] = c[j].id;
        }
        block_name(s->plans.m.preset, name, sizeof(name));
        if (!steps) {
            st = tpb_err_set(TPB_ERR_NOMEM, "out of memory for the block's steps");
        } else {
            tpb_block_steps(marks, nl, s->topo->size, p->tp, iters, steps);
            tpb_block_result_t b = {.key = p->key,
                                    .id = c[0].block,
                                    .name = name,
                                    .world = s->topo->size,
                                    .iters = iters,
                                    .tokens = p->shape->m,
                                    .ngemm = nl,
                                    .configs = ids,
                                    .steps = steps,
                                    .set = c[0].set,
                                    .rounds = c[0].rounds};
            pthread_mutex_lock(&s->rec->lock);
            st = tpb_record_block(&s->rec->rec, &b);
            pthread_mutex_unlock(&s->rec->lock);
        }
        free(steps);
    }
    return tpb_agree(s->world, st);
}
