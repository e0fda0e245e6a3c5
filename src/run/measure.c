/*
 * measure.c - the timed loop of one config: warm-up, then the measured
 * iterations in rounds. For the adaptive policy each round of
 * --rebalance-every iterations ends with every rank's compute times shared
 * over the world and the layer rebuilt with new shards where a group gains
 * more than its noise (base/adaptive.h); for the other policies the whole
 * measurement is one round. Also applies --inject-delay and --emulate-schedule,
 * counted in iterations of the whole run.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/adaptive.h"
#include "base/metrics.h"
#include "base/partition.h"
#include "run/agree.h"
#include "run/sweep.h"

/* --inject-delay RANK:US:EVERY (every EVERY-th iteration of the run). */
static double inject_delay(const tpb_options_t *o, int rank, long it)
{
    const tpb_inject_t *d = &o->inject_delay;
    if (d->rank != rank || (it + 1) % d->every != 0)
        return 0.0;
    return d->us;
}

/* Iterations [from, to) of the config (slots), as iterations base+from.. of the run. */
static tpb_status_t iterate(tpb_sweep_t *s, tpb_layer_t *l, int from, int to, int rec)
{
    const tpb_options_t *o = s->o;
    int rank = s->real_topo->rank; /* faults are injected into world ranks */
    tpb_status_t st = TPB_OK;
    for (int i = from; i < to && st == TPB_OK; i++) {
        long it = s->iter_base + i;
        if (o->nsched && it == o->sched_iter)
            st = s->ops->set_emulation(s->be, o->sched[rank]);
        if (st == TPB_OK)
            st = tpb_layer_iter(l, (size_t)i, inject_delay(o, rank, it), rec);
    }
    return st;
}

/* This rank's view of iterations [from, to): median compute, its spread, median span. */
static tpb_round_rank_t round_stats(const double *m, int from, int to, double shard)
{
    int n = to - from;
    double comp[n], span[n];
    for (int i = 0; i < n; i++) {
        const double *p = m + 3 * (size_t)(from + i);
        comp[i] = p[1] - p[0];
        span[i] = p[2] - p[0];
    }
    double med = tpb_median(comp, (size_t)n);
    double iqr = tpb_quantile(comp, (size_t)n, 0.75) - tpb_quantile(comp, (size_t)n, 0.25);
    return (tpb_round_rank_t){.compute_us = med,
                              .spread = med > 0 ? iqr / med : NAN,
                              .span_us = tpb_median(span, (size_t)n),
                              .shard = shard};
}

/* Rank 0 keeps the round: its iterations, worst LB, slowest span, shards, decision. */
static tpb_status_t keep_round(tpb_sweep_t *s, const tpb_round_rank_t *w, int tp, int iters,
                               int rebalanced, double gain)
{
    int size = s->topo->size;
    if (s->nrounds == s->cap_rounds) {
        int cap = s->cap_rounds ? 2 * s->cap_rounds : 16;
        tpb_round_t *r = realloc(s->rounds, (size_t)cap * sizeof(*r));
        long *sh = r ? realloc(s->round_shards, (size_t)cap * size * sizeof(long)) : NULL;
        if (r)
            s->rounds = r;
        if (!sh)
            return tpb_err_set(TPB_ERR_NOMEM, "adaptive policy: out of memory for rounds");
        s->round_shards = sh;
        s->cap_rounds = cap;
    }
    tpb_round_t *r = &s->rounds[s->nrounds];
    *r = (tpb_round_t){.iters = iters, .lb = INFINITY, .rebalanced = rebalanced, .gain = gain};
    for (int g = 0; g < size / tp; g++)
        r->lb = fmin(r->lb, tpb_adaptive_round_lb(w, g * tp, tp));
    for (int q = 0; q < size; q++) {
        r->step_us = fmax(r->step_us, w[q].span_us);
        s->round_shards[(size_t)s->nrounds * size + q] = (long)w[q].shard;
    }
    s->nrounds++;
    return TPB_OK;
}

/* End of a round: share the stats, decide per group, rebuild where it gains (collective). */
static tpb_status_t rebalance(tpb_sweep_t *s, const tpb_point_t *c, tpb_layer_t **l,
                              tpb_layer_desc_t *d, int from, int to, int last)
{
    int size = s->topo->size, t = c->tp, g0 = s->topo->rank / t * t;
    double *m = malloc(3 * (size_t)to * sizeof(double));
    tpb_round_rank_t mine, w[size];
    tpb_status_t st = m ? s->ops->marks_read(s->be, 3 * (size_t)to, m)
                        : tpb_err_set(TPB_ERR_NOMEM, "adaptive policy: out of memory");
    if (st == TPB_OK)
        mine = round_stats(m, from, to, (double)d->shards[d->group_rank]);
    free(m);
    TPB_CHECK_RET(tpb_agree(s->world, st));
    if (MPI_Allgather(&mine, 4, MPI_DOUBLE, w, 4, MPI_DOUBLE, s->world) != MPI_SUCCESS)
        return tpb_err_call(TPB_ERR_MPI, "MPI_Allgather", "adaptive round", __FILE__, __LINE__);
    long shards[t];
    double gain = 0.0;
    int mine_moves = !last && tpb_adaptive_decide(w, g0, t, tpb_split_total(c->shape, c->split),
                                                  s->o->granularity, shards, &gain);
    int any = mine_moves;
    MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, s->world);
    if (s->topo->rank == 0)
        st = keep_round(s, w, t, to - from, any, gain);
    if (st == TPB_OK && mine_moves) { /* a new layer for the new shards, outside timing */
        memcpy((long *)d->shards, shards, (size_t)t * sizeof(long));
        tpb_layer_destroy(*l);
        *l = NULL;
        st = tpb_layer_create(s->ops, s->be, c->comm, d, l);
    }
    return tpb_agree(s->world, st);
}

/* Copy the measured iterations' marks out of the backend into raw[iters]. */
static tpb_status_t read_marks(tpb_sweep_t *s, int rec, tpb_mark_t *raw)
{
    const tpb_options_t *o = s->o;
    int n = o->warmup + o->iters;
    size_t nread = 3 * (size_t)(rec ? n : o->warmup + 1);
    double *m = malloc(nread * sizeof(double));
    tpb_status_t st = m ? s->ops->marks_read(s->be, nread, m)
                        : tpb_err_set(TPB_ERR_NOMEM, "no memory for %zu marks", nread);
    for (int i = 0; st == TPB_OK && i < o->iters; i++) {
        const double *p = m + 3 * (size_t)(o->warmup + (rec ? i : 0));
        raw[i] = (tpb_mark_t){.c0 = p[0], .c1 = p[1], .x1 = p[2]};
    }
    free(m);
    return st;
}

tpb_status_t tpb_measure(tpb_sweep_t *s, const tpb_point_t *c, tpb_layer_t **l, tpb_layer_desc_t *d,
                         tpb_mark_t *raw)
{
    const tpb_options_t *o = s->o;
    int n = o->warmup + o->iters, rec = o->timeline;
    int adaptive = c->policy == TPB_POLICY_ADAPTIVE;
    int round = adaptive ? o->rebalance_every : o->iters;
    s->nrounds = 0;
    tpb_status_t st = s->ops->marks_prepare(s->be, (size_t)n * 3);
    TPB_CHECK_RET(tpb_agree(s->world, st));
    st = iterate(s, *l, 0, o->warmup, 1);
    if (st == TPB_OK)
        st = s->ops->sync(s->be);
    s->fatal = st != TPB_OK;
    TPB_CHECK_RET(st);
    MPI_Barrier(s->world);
    if (!rec) { /* --timeline off: one span around the whole loop */
        TPB_CHECK_RET(s->ops->mark(s->be, 3 * (size_t)o->warmup, TPB_MARK_COMPUTE_BEGIN));
        TPB_CHECK_RET(s->ops->mark(s->be, 3 * (size_t)o->warmup + 1, TPB_MARK_COMPUTE_END));
    }
    for (int from = o->warmup; from < n && st == TPB_OK; from += round) {
        int to = from + round < n ? from + round : n;
        st = iterate(s, *l, from, to, rec);
        s->fatal = st != TPB_OK;
        if (st == TPB_OK && adaptive) {
            st = rebalance(s, c, l, d, from, to, to == n);
            s->fatal = 0; /* rebalance agrees on its status */
        }
    }
    s->iter_base += n;
    if (st != TPB_OK)
        return st; /* s->fatal says whether the ranks agree */
    if (!rec)
        st = s->ops->mark(s->be, 3 * (size_t)o->warmup + 2, TPB_MARK_COMM);
    if (st == TPB_OK)
        st = read_marks(s, rec, raw);
    s->fatal = st != TPB_OK;
    return st;
}
