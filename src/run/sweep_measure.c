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
#include "base/interval.h"
#include "base/metrics.h"
#include "base/partition.h"
#include "base/clock.h"
#include "base/stamp.h"
#include "run/agree.h"
#include "run/orient.h"
#include "run/signals.h"
#include "run/sweep_state.h"
#include "run/wire.h"

/* --inject-delay RANK:US:EVERY (every EVERY-th iteration of the run). */
static double inject_delay(const tpb_measure_t *m, int rank, long it)
{
    const tpb_inject_t *d = &m->inject;
    if (d->rank != rank || (it + 1) % d->every != 0)
        return 0.0;
    return d->us;
}

/* Iterations [from, to) of the layers ls[nl] as the next iterations of the run (s->pos.iter_base
 * counts them): one layer, or a --block's GEMMs back to back in every iteration, layer j's
 * marks `stride` slots after layer j - 1's. A delay is injected into the first layer. Every
 * `every` iterations of the run (0: never) the device's work is waited for (watched) and the
 * ranks agree whether a stop was asked for (collective over the world, outside the marks;
 * every rank counts the same iterations):
 * TPB_ERR_INTERRUPTED on every rank at the same iteration, nothing left in flight between
 * the groups' collectives. */
static tpb_status_t iterate(tpb_sweep_t *s, tpb_layer_t *const *ls, int nl, size_t stride,
                            size_t from, size_t to, int rec, int every)
{
    const tpb_measure_t *m = &s->plans.m;
    int rank = s->ctx.topo->rank; /* faults are injected into world ranks */
    tpb_status_t st = TPB_OK;
    for (size_t i = from; i < to && st == TPB_OK; i++) {
        long it = s->pos.iter_base++;
        tpb_stamp_iter(it);
        if (m->sched && it == m->sched_iter)
            st = tpb_dev_set_emulation(s->ctx.dev, m->sched[rank]);
        for (int j = 0; j < nl && st == TPB_OK; j++) /* --comm-gap: a comm-only rank's
                                                         "compute" is the gap */
            st = tpb_layer_iter(ls[j], i + (size_t)j * stride,
                                (j ? 0.0 : inject_delay(m, rank, it)) + m->comm_gap_us, rec);
        tpb_sweep_beat(s);
        if (st == TPB_OK && every > 0 && (it + 1) % every == 0) {
            /* the device's work done first, under the backend's watch (--timeout): a rank
             * whose stream waits for a stalled peer must find it there, not block in the
             * world's all-reduce behind it (a CUDA rank hung so) */
            st = tpb_dev_sync(s->ctx.dev);
            if (st == TPB_OK)
                st = tpb_signal_agree(s->pos.world);
        }
    }
    return st;
}

/* The measured iterations between two stop checks (collective): about TPB_STOP_CHECK_S
 * at the slowest rank's pace over the warm-up (n iterations since t0_us), at least 1;
 * TPB_STOP_CHECK_NOWARM without a warm-up. A stop is then honoured within about that
 * time, and the check costs one small all-reduce in that time. */
static tpb_status_t agree_stop_every(tpb_sweep_t *s, double t0_us, size_t n)
{
    double per = n ? (tpb_clock_now_us(NULL) - t0_us) * 1e-6 / (double)n : 0.0;
    TPB_MPI_RET(MPI_Allreduce(MPI_IN_PLACE, &per, 1, MPI_DOUBLE, MPI_MAX, s->pos.world),
                "stop checks");
    double every = per > 0.0 ? TPB_STOP_CHECK_S / per : TPB_STOP_CHECK_NOWARM;
    s->acct.stop_every = every < 1.0 ? 1 : every > 1e6 ? 1000000 : (int)every;
    return TPB_OK;
}

/* This rank's view of iterations [from, to): median compute, its spread, median span. */
static tpb_round_rank_t round_stats(const double *m, int from, int to, long shard)
{
    int n = to - from;
    double comp[n], span[n];
    for (int i = 0; i < n; i++) {
        size_t it = (size_t)(from + i);
        comp[i] = m[tpb_marks_iter(it, 1)] - m[tpb_marks_iter(it, 0)];
        span[i] = m[tpb_marks_iter(it, 2)] - m[tpb_marks_iter(it, 0)];
    }
    double med = tpb_stats_median(comp, (size_t)n);
    double iqr =
        tpb_stats_quantile(comp, (size_t)n, 0.75) - tpb_stats_quantile(comp, (size_t)n, 0.25);
    return (tpb_round_rank_t){.compute_us = med,
                              .spread = med > 0 ? iqr / med : NAN,
                              .span_us = tpb_stats_median(span, (size_t)n),
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
    int rc = MPI_Allgather(mine, 1, t, w, 1, t, s->pos.world);
    MPI_Type_free(&t);
    if (rc != MPI_SUCCESS)
        return tpb_err_call(TPB_ERR_MPI, "MPI_Allgather", "adaptive round", __FILE__, __LINE__);
    return TPB_OK;
}

/* The plan this round hands on (*cur replaced by p with new shards), and a layer built
 * for it. */
static tpb_status_t reshard(tpb_sweep_t *s, const tpb_config_plan_t *p, tpb_config_plan_t *cur,
                            tpb_layer_t **l, const long *shards)
{
    double avail = 0.0;
    tpb_config_plan_t next;
    TPB_CHECK_RET(tpb_plan_reshard(p, shards, &next));
    tpb_plan_release(cur);
    *cur = next;
    tpb_layer_destroy(*l);
    *l = NULL;
    tpb_status_t st = tpb_dev_mem_free(s->ctx.dev, &avail);
    if (st == TPB_OK)
        st = tpb_plan_check_memory(cur, avail, s->ctx.topo->rank);
    if (st == TPB_OK)
        st = tpb_layer_create(s->ctx.dev, s->pos.comm, &cur->desc, l);
    return st;
}

/* End of a round: share the stats, decide per group, reshard where it gains (collective).
 * *cur is the plan in force (cur->shards NULL: p's). */
static tpb_status_t rebalance(tpb_sweep_t *s, const tpb_config_plan_t *p, tpb_config_plan_t *cur,
                              tpb_layer_t **l, int from, int to, int last)
{
    int size = s->pos.topo->size, t = p->tp, g0 = s->pos.topo->rank / t * t;
    const tpb_config_plan_t *now = cur->shards ? cur : p;
    size_t nread = tpb_marks_iter((size_t)to, 0);
    double *m = malloc(nread * sizeof(double));
    tpb_round_rank_t mine, w[size];
    tpb_status_t st = m ? tpb_dev_marks_read(s->ctx.dev, nread, m)
                        : tpb_err_set(TPB_ERR_NOMEM, "adaptive policy: out of memory");
    if (st == TPB_OK)
        mine = round_stats(m, from, to, now->shards[p->desc.group_rank]);
    free(m);
    TPB_CHECK_RET(tpb_agree(s->pos.world, st));
    TPB_CHECK_RET(share_round(s, &mine, w));
    long shards[t];
    double gain = 0.0;
    long total = tpb_split_total(p->shape, p->desc.orient->split);
    int mine_moves = !last && tpb_adaptive_decide(w, g0, t, total, p->granularity, shards, &gain);
    int any = mine_moves;
    TPB_MPI_RET(MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, s->pos.world),
                "adaptive round");
    if (s->rec)
        st = keep_round(&s->rec->rounds, w, size, t, to - from, any, gain);
    if (st == TPB_OK && mine_moves) /* the plan's new shards and their layer, outside timing */
        st = reshard(s, p, cur, l, shards);
    return tpb_agree(s->pos.world, st);
}

/* The slot of measured iteration i of config c of a set of nc configs, n iterations with the
 * warm-up each: the first --iters as c n + warm-up + i, a --budget's later looks after every
 * config's first, look by look, config by config (so that the slots read are all recorded). */
static size_t measured_slot(const tpb_measure_t *ms, int c, int nc, size_t n, size_t i)
{
    size_t it = (size_t)ms->iters, look = i / it;
    if (look == 0)
        return (size_t)c * n + (size_t)ms->warmup + i;
    return (size_t)nc * n + ((look - 1) * (size_t)nc + (size_t)c) * it + i % it;
}

/* Copy the measured iterations' marks out of the backend into raw[c][iters] for the k
 * configs whose slots start at c n (n: iterations with the warm-up; measured_slot) (--timeline
 * off: the one span around the loop, in the first measured iteration's slots, for each). */
static tpb_status_t read_marks(tpb_sweep_t *s, int rec, tpb_mark_t *const *raw, int k, int iters)
{
    const tpb_measure_t *ms = &s->plans.m;
    size_t n = (size_t)(ms->warmup + ms->iters);
    size_t last =
        rec ? measured_slot(ms, k - 1, k, n, (size_t)iters - 1) + 1 : (size_t)ms->warmup + 1;
    size_t nread = tpb_marks_iter(last, 0);
    double *m = malloc(nread * sizeof(double));
    tpb_status_t st = m ? tpb_dev_marks_read(s->ctx.dev, nread, m)
                        : tpb_err_set(TPB_ERR_NOMEM, "no memory for %zu marks", nread);
    for (int c = 0; st == TPB_OK && c < k; c++)
        for (int i = 0; i < iters; i++) {
            size_t it = rec ? measured_slot(ms, c, k, n, (size_t)i) : (size_t)ms->warmup;
            double c1 = m[tpb_marks_iter(it, 1)];
            /* the iteration ends after its compute: the device orders x1 after c1, but a GPU
             * places each stream's marks by that stream's anchor, and two anchors can disagree
             * by more than the gap between them (a negative idle time under load) */
            raw[c][i] = (tpb_mark_t){
                .c0 = m[tpb_marks_iter(it, 0)], .c1 = c1, .x1 = fmax(m[tpb_marks_iter(it, 2)], c1)};
        }
    free(m);
    return st;
}

tpb_status_t tpb_sweep_measure(tpb_sweep_t *s, const tpb_config_plan_t *p, tpb_config_plan_t *moved,
                               tpb_layer_t **l, tpb_mark_t *raw)
{
    const tpb_measure_t *m = &s->plans.m;
    int n = m->warmup + m->iters, rec = m->timeline;
    int adaptive = p->policy == TPB_POLICY_ADAPTIVE;
    int round = adaptive ? m->rebalance_every : m->iters;
    size_t span = (size_t)m->warmup; /* --timeline off: one span in this slot */
    *moved = (tpb_config_plan_t){0};
    if (s->rec)
        s->rec->rounds.n = 0;
    tpb_status_t st = tpb_dev_marks_prepare(s->ctx.dev, tpb_marks_count(&p->desc.marks));
    TPB_CHECK_RET(tpb_agree(s->pos.world, st));
    double t0 = tpb_clock_now_us(NULL);
    tpb_stamp(TPB_PHASE_WARMUP);
    st = iterate(s, l, 1, 0, 0, (size_t)m->warmup, 1, 1); /* untimed: a check every one */
    if (st == TPB_OK || st == TPB_ERR_INTERRUPTED) {
        tpb_status_t done = tpb_dev_sync(s->ctx.dev); /* nothing in flight when the layer goes */
        st = st == TPB_OK ? done : st;
    }
    TPB_CHECK_RET(st); /* a failure of this rank alone: tpb_err_agreed says so */
    TPB_CHECK_RET(agree_stop_every(s, t0, (size_t)m->warmup));
    TPB_MPI_RET(MPI_Barrier(s->pos.world), "start of the measured iterations");
    tpb_stamp(TPB_PHASE_MEASURE);
    if (!rec) { /* the span's start holds no start gate (marked as a compute end): it opens a
                 * loop of many iterations, and a gate armed with no GEMM to close it would hold
                 * the stream under the whole loop */
        TPB_CHECK_RET(tpb_dev_mark(s->ctx.dev, tpb_marks_iter(span, 0), TPB_MARK_COMPUTE_END));
        TPB_CHECK_RET(tpb_dev_mark(s->ctx.dev, tpb_marks_iter(span, 1), TPB_MARK_COMPUTE_END));
    }
    for (int from = m->warmup; from < n && st == TPB_OK; from += round) {
        int to = from + round < n ? from + round : n;
        st = iterate(s, l, 1, 0, (size_t)from, (size_t)to, rec, s->acct.stop_every);
        if (st == TPB_ERR_INTERRUPTED)
            tpb_dev_sync(s->ctx.dev); /* every rank stopped at the same iteration */
        if (st == TPB_OK && adaptive)
            st = rebalance(s, p, moved, l, from, to, to == n); /* agreed on by the ranks */
    }
    if (st != TPB_OK)
        return st; /* tpb_err_agreed says whether the ranks share it */
    if (!rec)
        st = tpb_dev_mark(s->ctx.dev, tpb_marks_iter(span, 2), TPB_MARK_COMM);
    if (st == TPB_OK)
        st = read_marks(s, rec, &raw, 1, m->iters);
    return st;
}

/* The end of a block: its work done, then every rank (collective). */
static tpb_status_t block_end(tpb_sweep_t *s, tpb_status_t st)
{
    if (st == TPB_OK || st == TPB_ERR_INTERRUPTED) {
        tpb_status_t done = tpb_dev_sync(s->ctx.dev);
        st = st == TPB_OK ? done : st;
    }
    TPB_CHECK_RET(st);
    TPB_MPI_RET(MPI_Barrier(s->pos.world), "between interleaved blocks");
    return TPB_OK;
}

/* One look of a set: rounds [r0, r0 + rounds) of the interleaved order, each unit's block of
 * a round its iterations [lo, hi) of the look, at slot `at` onwards (layer j `stride` after
 * layer j - 1), each block waited for. */
static tpb_status_t run_look(tpb_sweep_t *s, tpb_layer_t *const *ls, int k, int nl,
                             const int *order, int r0, int rounds, const size_t *at, size_t stride)
{
    const tpb_measure_t *m = &s->plans.m;
    tpb_status_t st = TPB_OK;
    for (int b = 0; b < rounds * k && st == TPB_OK; b++) {
        int j = b / k, u = order[(size_t)(r0 + j) * (size_t)k + (size_t)(b % k)];
        size_t lo = (size_t)j * (size_t)m->iters / (size_t)rounds;
        size_t hi = (size_t)(j + 1) * (size_t)m->iters / (size_t)rounds;
        st = iterate(s, &ls[u * nl], nl, stride, at[u] + lo, at[u] + hi, 1, s->acct.stop_every);
        st = block_end(s, st);
    }
    return st;
}

/* --budget: every unit's steps of its n measured iterations so far into steps[k n] on rank
 * 0, as the record defines a step (base/timeline.h: the largest over the TP groups of the
 * group's last x1 less its first c0; a unit's first layer's c0 to its last layer's x1), on
 * the ranks' own clocks (one clock on a node; across nodes the offset, nearly constant over a
 * set, falls alike on its configs), from this rank's marks mk (look_marks). Collective. */
static tpb_status_t unit_steps(tpb_sweep_t *s, const double *mk, int k, int nl, int n,
                               double *steps)
{
    const tpb_measure_t *m = &s->plans.m;
    int nc = k * nl;
    size_t w = (size_t)(m->warmup + m->iters), kn = (size_t)k * (size_t)n;
    double *mine = malloc(2 * kn * sizeof(double));
    tpb_status_t st = mine ? TPB_OK : tpb_err_set(TPB_ERR_NOMEM, "no memory for --budget's steps");
    for (int u = 0; st == TPB_OK && u < k; u++)
        for (int i = 0; i < n; i++) {
            size_t a = measured_slot(m, u * nl, nc, w, (size_t)i);
            size_t b = measured_slot(m, u * nl + nl - 1, nc, w, (size_t)i);
            mine[(size_t)u * (size_t)n + (size_t)i] = -mk[tpb_marks_iter(a, 0)]; /* max: min c0 */
            mine[kn + (size_t)u * (size_t)n + (size_t)i] = mk[tpb_marks_iter(b, 2)];
        }
    st = tpb_agree(s->pos.world, st);
    if (st == TPB_OK && MPI_Allreduce(MPI_IN_PLACE, mine, 2 * (int)kn, MPI_DOUBLE, MPI_MAX,
                                      s->pos.group) != MPI_SUCCESS)
        st = tpb_err_call(TPB_ERR_MPI, "MPI_Allreduce", "--budget's steps", __FILE__, __LINE__);
    for (size_t i = 0; st == TPB_OK && i < kn; i++)
        mine[i] += mine[kn + i]; /* the group's step */
    if (st == TPB_OK &&
        MPI_Reduce(mine, steps, (int)kn, MPI_DOUBLE, MPI_MAX, 0, s->pos.world) != MPI_SUCCESS)
        st = tpb_err_call(TPB_ERR_MPI, "MPI_Reduce", "--budget's steps", __FILE__, __LINE__);
    free(mine);
    return st;
}

/* --budget: this rank's rate in every block of the set's nc configs so far (n measured
 * iterations each in `rounds` rounds: a block a round, as the record cuts them,
 * tpb_detect_nblocks) into rate[nc rounds], config by config: its FLOPs over the block's
 * median compute (c1 - c0) in its marks mk (look_marks), NaN where unknown. */
static tpb_status_t unit_rates(const tpb_sweep_t *s, const double *mk, const tpb_config_run_t *c,
                               int nc, int n, int rounds, double *rate)
{
    const tpb_measure_t *m = &s->plans.m;
    size_t w = (size_t)(m->warmup + m->iters);
    double *comp = malloc((size_t)n * sizeof(double));
    tpb_status_t st = comp ? TPB_OK : tpb_err_set(TPB_ERR_NOMEM, "no memory for --budget's blocks");
    for (int i = 0; st == TPB_OK && i < nc; i++) {
        double work = tpb_layer_rank_flop(&c[i].plan->desc);
        for (int b = 0; b < rounds; b++) {
            int lo = b * n / rounds, hi = (b + 1) * n / rounds;
            for (int it = lo; it < hi; it++) {
                size_t a = measured_slot(m, i, nc, w, (size_t)it);
                comp[it - lo] = mk[tpb_marks_iter(a, 1)] - mk[tpb_marks_iter(a, 0)];
            }
            rate[(size_t)i * rounds + b] = tpb_detect_block_rate(comp, hi - lo, work);
        }
    }
    free(comp);
    return tpb_agree(s->pos.world, st);
}

/* --budget: this rank's marks of the set's nc configs' first n measured iterations, read
 * once a look for unit_steps and unit_rates into *mk (the caller frees it). */
static tpb_status_t look_marks(tpb_sweep_t *s, int nc, int n, double **mk)
{
    const tpb_measure_t *m = &s->plans.m;
    size_t w = (size_t)(m->warmup + m->iters);
    size_t nread = tpb_marks_iter(measured_slot(m, nc - 1, nc, w, (size_t)n - 1) + 1, 0);
    *mk = malloc(nread * sizeof(double));
    tpb_status_t st = *mk ? tpb_dev_marks_read(s->ctx.dev, nread, *mk)
                          : tpb_err_set(TPB_ERR_NOMEM, "no memory for --budget's marks");
    return tpb_agree(s->pos.world, st);
}

void tpb_sweep_hold(tpb_sweep_t *s, int on)
{
    if (!s->rec)
        return;
    pthread_mutex_lock(&s->rec->lock);
    s->held = on;
    pthread_mutex_unlock(&s->rec->lock);
}

/* --budget: more looks of the set while rank 0 finds a speed-up or the persistent straggler
 * open and the budget allows (sweep_budget.c); *looks counts them, the first included. */
static tpb_status_t more_looks(tpb_sweep_t *s, tpb_config_run_t *c, tpb_layer_t *const *ls, int k,
                               int nl, const int *order, int rounds, double look_us, int *looks)
{
    const tpb_measure_t *m = &s->plans.m;
    size_t n = (size_t)(m->warmup + m->iters), at[k];
    double *steps = malloc((size_t)(k * m->iters * TPB_BUDGET_LOOKS) * sizeof(double));
    double *rate = malloc((size_t)(k * nl * rounds * TPB_BUDGET_LOOKS) * sizeof(double));
    int more = 1;
    tpb_status_t st = tpb_agree(
        s->pos.world, steps && rate ? TPB_OK : tpb_err_set(TPB_ERR_NOMEM, "out of memory"));
    tpb_sweep_hold(s, 1); /* the first look is whole: a stop from now on keeps it */
    while (st == TPB_OK && more) {
        int done = m->iters * *looks;
        double *mk = NULL;
        st = look_marks(s, k * nl, done, &mk);
        if (st == TPB_OK)
            st = unit_steps(s, mk, k, nl, done, steps);
        if (st == TPB_OK)
            st = unit_rates(s, mk, c, k * nl, done, rounds * *looks, rate);
        free(mk);
        if (st == TPB_OK)
            st = tpb_sweep_budget_more(s, c, k, nl, steps, done, rounds * *looks, *looks, look_us,
                                       rate, &more);
        if (st != TPB_OK || !more)
            break;
        for (int u = 0; u < k; u++) /* measured_slot's layout: this look after the last */
            at[u] = (size_t)(k * nl) * n +
                    ((size_t)(*looks - 1) * (size_t)(k * nl) + (size_t)(u * nl)) * (size_t)m->iters;
        double t0 = tpb_clock_now_us(NULL);
        st = run_look(s, ls, k, nl, order, rounds * *looks, rounds, at, (size_t)m->iters);
        look_us = tpb_clock_now_us(NULL) - t0;
        s->acct.budget.spent_s += look_us * 1e-6;
        *looks += st == TPB_OK;
        if (st == TPB_ERR_INTERRUPTED) { /* agreed: the looks done are recorded, then the end */
            st = TPB_OK;
            break;
        }
    }
    free(steps);
    free(rate);
    return st;
}

tpb_status_t tpb_sweep_measure_set(tpb_sweep_t *s, tpb_config_run_t *c, int k, int nl)
{
    const tpb_measure_t *m = &s->plans.m;
    size_t n = (size_t)(m->warmup + m->iters), unit = (size_t)nl * n, at[k];
    int budget = c[0].cap > m->iters, looks = 1; /* one unit too: a block's, in rounds */
    int rounds = (k > 1 || budget) && m->interleave ? tpb_interleave_rounds(m->iters) : 1;
    int nr = rounds * (budget ? TPB_BUDGET_LOOKS : 1);
    int *order = malloc((size_t)nr * (size_t)k * sizeof(int));
    tpb_layer_t *ls[k * nl];
    for (int i = 0; i < k * nl; i++)
        ls[i] = c[i].l;
    size_t slots = (size_t)(k * nl) * tpb_marks_count(&c[0].plan->desc.marks);
    if (budget) /* the later looks' room (measured_slot) */
        slots += 3 * (size_t)(k * nl) * (size_t)(c[0].cap - m->iters);
    tpb_status_t st = !order ? tpb_err_set(TPB_ERR_NOMEM, "no memory for a set's order")
                             : tpb_dev_marks_prepare(s->ctx.dev, slots);
    st = tpb_agree(s->pos.world, st);
    double t0 = tpb_clock_now_us(NULL);
    tpb_stamp(TPB_PHASE_WARMUP);
    if (st == TPB_OK) {
        for (int u = 0; u < k && st == TPB_OK; u++) /* every one's warm-up, in the set's order */
            st = iterate(s, &ls[u * nl], nl, n, (size_t)u * unit,
                         (size_t)u * unit + (size_t)m->warmup, 1, 1);
        st = block_end(s, st);
    }
    if (st == TPB_OK)
        st = agree_stop_every(s, t0, (size_t)(k * m->warmup));
    if (st == TPB_OK) {
        tpb_interval_order(k, nr, order);
        tpb_stamp(TPB_PHASE_MEASURE);
        for (int u = 0; u < k; u++)
            at[u] = (size_t)u * unit + (size_t)m->warmup;
        t0 = tpb_clock_now_us(NULL);
        st = run_look(s, ls, k, nl, order, 0, rounds, at, n);
    }
    if (st == TPB_OK && budget)
        st = more_looks(s, c, ls, k, nl, order, rounds, tpb_clock_now_us(NULL) - t0, &looks);
    free(order);
    TPB_CHECK_RET(st);
    tpb_mark_t *raw[k * nl];
    for (int i = 0; i < k * nl; i++) {
        raw[i] = c[i].raw;
        c[i].rounds = rounds > 1 ? rounds * looks : 0;
        c[i].iters = m->iters * looks;
        c[i].looks = budget ? looks : 0;
    }
    return read_marks(s, 1, raw, k * nl, m->iters * looks);
}
