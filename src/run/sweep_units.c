/* sweep_units.c - what is measured together: a config alone, the policies of one block side
 * by side (--interleave), or a --block's GEMMs as units of one step; each config's skip line
 * where it cannot be measured (run/sweep_impl.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/stamp.h"
#include "run/agree.h"
#include "run/signals.h"
#include "run/sweep_impl.h"

/* Plan i's block speeds, when they are first needed (collective). */
static tpb_status_t speeds_for(tpb_sweep_t *s, int i)
{
    tpb_config_plan_t *p = &s->plans.p[i];
    if (!tpb_plan_needs_speeds(p))
        return TPB_OK;
    TPB_CHECK_RET(tpb_signal_agree(s->pos.world)); /* no calibration after a stop request */
    tpb_status_t st = tpb_sweep_speeds(s, i);
    if (st != TPB_ERR_INVALID)
        return st;
    /* a calibration GEMM the backend refuses (every rank agreed, as at a layer's untimed
     * GEMM): this policy's config is skipped with the reason, the others go on */
    snprintf(p->skip, sizeof(p->skip), "%s: its calibration failed: %s", tpb_policy_name(p->policy),
             tpb_err_msg());
    return TPB_OK;
}

/* 1 if one of plans idx[k] is (now) skipped. */
static int any_skipped(const tpb_sweep_t *s, const int *idx, int k)
{
    for (int j = 0; j < k; j++)
        if (s->plans.p[idx[j]].skip[0])
            return 1;
    return 0;
}

/* A config not measured (TPB_ERR_INVALID, the ranks agreeing): one line, and on. */
static tpb_status_t skipped(tpb_sweep_t *s, tpb_status_t st)
{
    if (st != TPB_ERR_INVALID || !tpb_err_agreed(st))
        return st;
    if (s->rec) {
        pthread_mutex_lock(&s->rec->lock);
        tpb_record_skip(&s->rec->rec, tpb_err_msg());
        pthread_mutex_unlock(&s->rec->lock);
    }
    return TPB_OK;
}

/* Plan i: its block's speeds when they are first needed, then the config or its skip line. */
tpb_status_t tpb_sweep_run_plan(tpb_sweep_t *s, int i)
{
    tpb_config_plan_t *p = &s->plans.p[i];
    TPB_CHECK_RET(speeds_for(s, i));
    tpb_status_t st =
        tpb_agree(s->pos.world, p->skip[0] ? tpb_err_set(TPB_ERR_INVALID, "%s", p->skip) : TPB_OK);
    if (st == TPB_OK) {
        tpb_sweep_progress(s, p, tpb_sweep_plan_work(s, p), 1);
        st = tpb_sweep_config(s, p);
    }
    s->acct.nconfigs += st == TPB_OK;
    return skipped(s, st);
}

/* The set's layers fit beside each other on every rank (collective). */
static tpb_status_t set_fits(tpb_sweep_t *s, const int *idx, int k, int *fits)
{
    double avail = 0.0, need = 0.0;
    tpb_status_t st = tpb_agree(s->pos.world, tpb_dev_mem_free(s->ctx.dev, &avail));
    for (int j = 0; j < k; j++)
        need += s->plans.p[idx[j]].mem_bytes;
    *fits = need <= 0.9 * avail;
    TPB_MPI_RET(MPI_Allreduce(MPI_IN_PLACE, fits, 1, MPI_INT, MPI_MIN, s->pos.world), "memory");
    return st;
}

/* Plans idx[k * nl] measured as k units of nl layers (a unit: one config, or a --block's
 * GEMMs in order), side by side (tpb_sweep_measure_set), then closed and recorded one by
 * one; a --block's units recorded as blocks too (collective). */
static tpb_status_t measure_units(tpb_sweep_t *s, const int *idx, int k, int nl)
{
    int n = k * nl, open = 0;
    tpb_config_run_t *c = calloc((size_t)n, sizeof(*c));
    tpb_status_t st =
        tpb_agree(s->pos.world, c ? TPB_OK : tpb_err_set(TPB_ERR_NOMEM, "out of memory"));
    TPB_CHECK_RET(st);
    const tpb_config_plan_t *ps[n > 0 ? n : 1];
    for (int j = 0; j < n; j++)
        ps[j] = &s->plans.p[idx[j]];
    int cap = tpb_sweep_budget_cap(s, ps, k, nl);
    for (; open < n && st == TPB_OK; open++) {
        c[open].cap = cap;
        st = tpb_config_open(s, ps[open], &c[open]);
    }
    if (st == TPB_OK)
        st = tpb_sweep_measure_set(s, c, k, nl);
    for (int j = 0; j < n; j++) /* the set's marks, read together */
        c[j].info.marks_within_us = tpb_dev_marks_within(s->ctx.dev);
    for (int j = 0; j < n && st == TPB_OK; j++) {
        c[j].set = c[j].rounds ? s->acct.nsets : -1;
        c[j].block = nl > 1 || s->plans.m.block ? s->acct.nblocks + j / nl : -1;
        c[j].block_pos = j % nl;
        st = tpb_config_close(s, &c[j]);
        s->acct.nconfigs += st == TPB_OK;
    }
    for (int u = 0; s->plans.m.block && u < k && st == TPB_OK; u++)
        st = tpb_sweep_block(s, &c[u * nl], nl);
    tpb_sweep_hold(s, 0); /* a --budget set's looks are in the record */
    s->acct.nblocks += s->plans.m.block && st == TPB_OK ? k : 0;
    s->acct.nsets += st == TPB_OK && c[0].rounds;
    if (st != TPB_OK)
        tpb_stamp_failed(tpb_err_msg()); /* a free behind a wedged device: said with this */
    for (int j = 0; j < open; j++)
        tpb_config_free(&c[j]);
    free(c);
    return skipped(s, st);
}

/* --block: the units (of nl plans, idx[k * nl]) whose plans can all run, moved to the front;
 * a plan that cannot (its policy's shards cannot be made) says why in its line, and its
 * unit is left out. Returns the units kept. */
static tpb_status_t runnable_units(tpb_sweep_t *s, int *idx, int nl, int *k)
{
    int kept = 0;
    for (int u = 0; u < *k; u++) {
        int ok = 1;
        for (int j = 0; j < nl; j++) {
            const tpb_config_plan_t *q = &s->plans.p[idx[u * nl + j]];
            if (q->skip[0]) {
                ok = 0;
                TPB_CHECK_RET(skipped(s, tpb_agree(s->pos.world, tpb_err_set(TPB_ERR_INVALID,
                                                                             "block unit left out: "
                                                                             "%s",
                                                                             q->skip))));
            }
        }
        if (ok)
            memmove(&idx[kept++ * nl], &idx[u * nl], (size_t)nl * sizeof(int));
    }
    *k = kept;
    return TPB_OK;
}

/* --block: plan i's blocks, or the skip line of the first shape that cannot run. */
tpb_status_t tpb_sweep_run_block(tpb_sweep_t *s, int i, unsigned char *done, int *idx)
{
    int nl = 0, fits = 0;
    const char *skip = NULL;
    int k = tpb_plans_block_of(&s->plans, i, done, idx, &nl, &skip);
    if (!k)
        return skipped(
            s, tpb_agree(s->pos.world, tpb_err_set(TPB_ERR_INVALID, "block tp %d: %s",
                                                   s->plans.p[i].tp, skip ? skip : "no config")));
    for (int j = 0; j < k * nl; j++)
        if (!s->plans.p[idx[j]].skip[0])
            TPB_CHECK_RET(speeds_for(s, idx[j]));
    TPB_CHECK_RET(runnable_units(s, idx, nl, &k));
    if (!k)
        return TPB_OK;
    TPB_CHECK_RET(set_fits(s, idx, k * nl, &fits));
    if (!fits)
        return skipped(
            s, tpb_agree(s->pos.world, tpb_err_set(TPB_ERR_INVALID,
                                                   "block tp %d: its %d GEMMs do not fit "
                                                   "beside each other in this rank's memory",
                                                   s->plans.p[i].tp, k * nl)));
    double work = 0.0;
    for (int j = 0; j < k * nl; j++)
        work += tpb_sweep_plan_work(s, &s->plans.p[idx[j]]);
    tpb_sweep_progress(s, &s->plans.p[idx[0]], work, k * nl);
    return measure_units(s, idx, k, nl);
}

/* Plans idx[k] of one block measured side by side (--interleave), or one after the other
 * where their layers do not fit beside each other. */
tpb_status_t tpb_sweep_run_set(tpb_sweep_t *s, const int *idx, int k)
{
    int fits = 0;
    for (int j = 0; j < k; j++)
        TPB_CHECK_RET(speeds_for(s, idx[j]));
    if (any_skipped(s, idx, k)) { /* a calibration failed: the others one by one */
        for (int j = 0; j < k; j++)
            TPB_CHECK_RET(tpb_sweep_run_plan(s, idx[j]));
        return TPB_OK;
    }
    TPB_CHECK_RET(set_fits(s, idx, k, &fits));
    for (int j = 0; !fits && j < k; j++)
        TPB_CHECK_RET(tpb_sweep_run_plan(s, idx[j]));
    if (!fits)
        return TPB_OK;
    double work = 0.0;
    for (int j = 0; j < k; j++)
        work += tpb_sweep_plan_work(s, &s->plans.p[idx[j]]);
    tpb_sweep_progress(s, &s->plans.p[idx[0]], work, k);
    return measure_units(s, idx, k, 1);
}
