/*
 * sweep_measure.c - the timed loop of one config: warm-up, then the measured
 * iterations in rounds. For the adaptive policy each round of
 * --rebalance-every iterations ends with every rank's compute times shared
 * over the world; where a group gains more than its noise (base/adaptive.h)
 * the round gives the plan new shards and the layer is rebuilt from the plan.
 * For the other policies the whole measurement is one round. Also applies
 * --inject-delay and --emulate-schedule, counted in iterations of the run.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/adaptive.h"
#include "base/metrics.h"
#include "base/partition.h"
#include "run/agree.h"
#include "run/split.h"
#include "run/sweep.h"
#include "run/wire.h"

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
        if (st == TPB_OK) /* --comm-gap: a comm-only rank's "compute" is the gap */
            st = tpb_layer_iter(l, (size_t)i, inject_delay(o, rank, it) + o->comm_gap_us, rec);
    }
    return st;
}

/* This rank's view of iterations [from, to): median compute, its spread, median span. */
static tpb_round_rank_t round_stats(const double *m, int from, int to, long shard)
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
static tpb_status_t keep_round(tpb_rounds_t *rs, const tpb_round_rank_t *w, int size, int tp,
                               int iters, int rebalanced, double gain)
{
    if (rs->n == rs->cap) {
        int cap = rs->cap ? 2 * rs->cap : 16;
        tpb_round_t *r = realloc(rs->r, (size_t)cap * sizeof(*r));
        long *sh = r ? realloc(rs->shards, (size_t)cap * size * sizeof(long)) : NULL;
        if (r)
            rs->r = r;
        if (!sh)
            return tpb_err_set(TPB_ERR_NOMEM, "adaptive policy: out of memory for rounds");
        rs->shards = sh;
        rs->cap = cap;
    }
    tpb_round_t *r = &rs->r[rs->n];
    *r = (tpb_round_t){.iters = iters, .lb = INFINITY, .rebalanced = rebalanced, .gain = gain};
    for (int g = 0; g < size / tp; g++)
        r->lb = fmin(r->lb, tpb_adaptive_round_lb(w, g * tp, tp));
    for (int q = 0; q < size; q++) {
        r->step_us = fmax(r->step_us, w[q].span_us);
        rs->shards[(size_t)rs->n * size + q] = w[q].shard;
    }
    rs->n++;
    return TPB_OK;
}

/* Every rank's round, all-gathered by type (collective). */
static tpb_status_t share_round(tpb_sweep_t *s, const tpb_round_rank_t *mine, tpb_round_rank_t *w)
{
    MPI_Datatype t;
    TPB_CHECK_RET(tpb_wire_type(TPB_WIRE_ROUND_RANK, &t));
    int rc = MPI_Allgather(mine, 1, t, w, 1, t, s->world);
    MPI_Type_free(&t);
    if (rc != MPI_SUCCESS)
        return tpb_err_call(TPB_ERR_MPI, "MPI_Allgather", "adaptive round", __FILE__, __LINE__);
    return TPB_OK;
}

/* New shards for plan p from this round, and a layer built for them. */
static tpb_status_t reshard(tpb_sweep_t *s, tpb_config_plan_t *p, tpb_layer_t **l,
                            const long *shards)
{
    double avail = 0.0;
    tpb_plan_set_shards(p, shards);
    tpb_layer_destroy(*l);
    *l = NULL;
    tpb_status_t st = s->ops->mem_free(s->be, &avail);
    if (st == TPB_OK)
        st = tpb_plan_check_memory(p, avail, s->real_topo->rank);
    if (st == TPB_OK)
        st = tpb_layer_create(s->ops, s->be, s->comm, &p->desc, l);
    return st;
}

/* End of a round: share the stats, decide per group, reshard where it gains (collective). */
static tpb_status_t rebalance(tpb_sweep_t *s, tpb_config_plan_t *p, tpb_layer_t **l, int from,
                              int to, int last)
{
    int size = s->topo->size, t = p->tp, g0 = s->topo->rank / t * t;
    double *m = malloc(3 * (size_t)to * sizeof(double));
    tpb_round_rank_t mine, w[size];
    tpb_status_t st = m ? s->ops->marks_read(s->be, 3 * (size_t)to, m)
                        : tpb_err_set(TPB_ERR_NOMEM, "adaptive policy: out of memory");
    if (st == TPB_OK)
        mine = round_stats(m, from, to, p->shards[p->desc.group_rank]);
    free(m);
    TPB_CHECK_RET(tpb_agree(s->world, st));
    TPB_CHECK_RET(share_round(s, &mine, w));
    long shards[t];
    double gain = 0.0;
    long total = tpb_split_total(p->shape, p->desc.split->split);
    int mine_moves = !last && tpb_adaptive_decide(w, g0, t, total, p->granularity, shards, &gain);
    int any = mine_moves;
    TPB_MPI_RET(MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, s->world), "adaptive round");
    if (s->rec)
        st = keep_round(&s->rec->rounds, w, size, t, to - from, any, gain);
    if (st == TPB_OK && mine_moves) /* the plan's new shards and their layer, outside timing */
        st = reshard(s, p, l, shards);
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

tpb_status_t tpb_sweep_measure(tpb_sweep_t *s, tpb_config_plan_t *p, tpb_layer_t **l,
                               tpb_mark_t *raw)
{
    const tpb_options_t *o = s->o;
    int n = o->warmup + o->iters, rec = o->timeline;
    int adaptive = p->policy == TPB_POLICY_ADAPTIVE;
    int round = adaptive ? o->rebalance_every : o->iters;
    if (s->rec)
        s->rec->rounds.n = 0;
    /* 3 marks an iteration, and 3 a chunk after them (--overlap chunked) */
    tpb_status_t st = s->ops->marks_prepare(s->be, (size_t)n * 3 * (1 + (size_t)p->desc.chunks));
    TPB_CHECK_RET(tpb_agree(s->world, st));
    st = iterate(s, *l, 0, o->warmup, 1);
    if (st == TPB_OK)
        st = s->ops->sync(s->be);
    s->fatal = st != TPB_OK;
    TPB_CHECK_RET(st);
    TPB_MPI_RET(MPI_Barrier(s->world), "start of the measured iterations");
    if (!rec) { /* --timeline off: one span around the whole loop */
        TPB_CHECK_RET(s->ops->mark(s->be, 3 * (size_t)o->warmup, TPB_MARK_COMPUTE_BEGIN));
        TPB_CHECK_RET(s->ops->mark(s->be, 3 * (size_t)o->warmup + 1, TPB_MARK_COMPUTE_END));
    }
    for (int from = o->warmup; from < n && st == TPB_OK; from += round) {
        int to = from + round < n ? from + round : n;
        st = iterate(s, *l, from, to, rec);
        s->fatal = st != TPB_OK;
        if (st == TPB_OK && adaptive) {
            st = rebalance(s, p, l, from, to, to == n);
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
