/* sweep_block.c - a --block's own figures once its GEMMs' configs are recorded: its step
 * per iteration from their gathered marks (base/block.h), handed to rank 0's record; and
 * under --budget, after each look of a block's set, whether the block's TP ranking is still
 * open (record/answer.h: tpb_answer_block_open). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/block.h"
#include "base/stats.h"
#include "record/answer.h"
#include "run/agree.h"
#include "run/sweep_state.h"

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

/* The block of the unit c[nl] (its GEMMs' configs) with its steps[iters] (borrowed), as its
 * closed configs say: its first GEMM's key, id, set, rounds and looks. */
static tpb_block_result_t unit_block(const tpb_sweep_t *s, const tpb_config_run_t *c, int nl,
                                     const char *name, const double *steps, int iters)
{
    const tpb_config_plan_t *p = c[0].plan;
    return (tpb_block_result_t){.key = p->key,
                                .id = c[0].block,
                                .name = name,
                                .world = s->pos.topo->size,
                                .iters = iters,
                                .tokens = p->shape->m,
                                .ngemm = nl,
                                .steps = steps,
                                .set = c[0].set,
                                .rounds = c[0].rounds,
                                .looks = c[0].looks};
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
            tpb_block_steps(marks, nl, s->pos.topo->size, p->tp, iters, steps);
            tpb_block_result_t b = unit_block(s, c, nl, name, steps, iters);
            b.configs = ids;
            pthread_mutex_lock(&s->rec->lock);
            st = tpb_record_block(&s->rec->rec, &b);
            pthread_mutex_unlock(&s->rec->lock);
        }
        free(steps);
    }
    return tpb_agree(s->pos.world, st);
}

/* The TP degrees of plan p's block in the run, counted to two: 1, or 2 where a plan of its
 * placement and sequence parallelism at another degree is planned. */
static int block_degrees(const tpb_sweep_t *s, const tpb_config_plan_t *p)
{
    for (int i = 0; i < s->plans.n; i++) {
        const tpb_config_plan_t *q = &s->plans.p[i];
        if (!q->skip[0] && q->tp != p->tp &&
            tpb_config_key_same(&q->key, &p->key, TPB_KEY_PLACEMENT | TPB_KEY_VARIANT))
            return 2;
    }
    return 1;
}

int tpb_sweep_block_open(const tpb_sweep_t *s, const tpb_config_run_t *c, int k, int nl,
                         const double *steps, int n, int rounds, int look, tpb_block_open_t *out)
{
    tpb_history_t cur[k > 0 ? k : 1];
    char name[64];
    *out = (tpb_block_open_t){.thr = -1};
    if (!s->rec || !s->plans.m.block || k < 1)
        return 0;
    block_name(s->plans.m.preset, name, sizeof(name));
    for (int u = 0; u < k; u++) {
        const double *mine = steps + (size_t)u * (size_t)n;
        tpb_block_result_t b = unit_block(s, &c[u * nl], nl, name, mine, n);
        b.id = s->acct.nblocks + u; /* after every one recorded; its set not closed yet */
        b.set = s->acct.nsets;
        b.rounds = rounds;
        b.looks = look;
        tpb_block_history(&b, tpb_stats_median(mine, (size_t)n), &cur[u]);
    }
    pthread_mutex_lock(&s->rec->lock);
    int open = tpb_answer_block_open(s->rec->rec.bhist, s->rec->rec.nbhist, cur, k,
                                     block_degrees(s, c[0].plan), out);
    pthread_mutex_unlock(&s->rec->lock);
    return open;
}
