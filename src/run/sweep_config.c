/* sweep_config.c - one config: its layer, measurement, gather and record. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/partition.h"
#include "base/stamp.h"
#include "run/agree.h"
#include "run/clocksync.h"
#include "run/signals.h"
#include "run/coll.h"
#include "run/inputs.h"
#include "run/orient.h"
#include "run/sweep_state.h"
#include "run/wire.h"

/* Gather marks (raw NULL: not these) and rank facts to rank 0 (collective), each by its
 * datatype. */
static tpb_status_t gather(tpb_sweep_t *s, int iters, const tpb_mark_t *raw,
                           const tpb_rank_info_t *info, tpb_mark_t *all, tpb_rank_info_t *infos)
{
    MPI_Datatype mark, rank_info;
    TPB_CHECK_RET(tpb_wire_type(TPB_WIRE_MARK, &mark));
    tpb_status_t st = tpb_wire_type(TPB_WIRE_RANK_INFO, &rank_info);
    if (st != TPB_OK) {
        MPI_Type_free(&mark);
        return st;
    }
    tpb_stamp_peers(1);
    int rc = raw ? MPI_Gather(raw, iters, mark, all, iters, mark, 0, s->pos.world) : MPI_SUCCESS;
    if (rc == MPI_SUCCESS)
        rc = MPI_Gather(info, 1, rank_info, infos, 1, rank_info, 0, s->pos.world);
    tpb_stamp_peers(0);
    MPI_Type_free(&mark);
    MPI_Type_free(&rank_info);
    if (rc != MPI_SUCCESS)
        return tpb_err_call(TPB_ERR_MPI, "MPI_Gather", "timelines of the ranks", __FILE__,
                            __LINE__);
    return TPB_OK;
}

tpb_status_t tpb_sweep_resync(tpb_sweep_t *s)
{
    int size = s->ctx.topo->size;
    tpb_clock_sample_t *fresh = s->rec ? calloc((size_t)size, sizeof(*fresh)) : NULL;
    tpb_status_t st = s->rec && !fresh ? tpb_err_set(TPB_ERR_NOMEM, "out of memory") : TPB_OK;
    TPB_CHECK_RET(tpb_agree(s->ctx.world, st));
    st = tpb_agree(s->ctx.world,
                   tpb_clock_sync(s->ctx.world, s->ctx.clock, TPB_CLOCK_EXCHANGES, fresh));
    /* a sample taken in a noisy moment (RTT far above the start's) would bend the drift
     * correction by its own error: the previous one stays */
    for (int r = 0; s->rec && st == TPB_OK && r < size; r++)
        if (fresh[r].rtt_us <= TPB_CLOCK_RTT_SLACK * s->rec->sync0[r].rtt_us + 20.0)
            s->rec->sync1[r] = fresh[r];
    free(fresh);
    return st;
}

/* Move every rank's marks onto rank 0's clock (rank 0; marks by position, clock samples by
 * world rank). */
static void correct_marks(const tpb_sweep_t *s, tpb_mark_t *all, int iters)
{
    for (int r = 0; r < s->pos.topo->size; r++) {
        int w = s->pos.rank_of[r];
        const tpb_clock_sample_t *a = &s->rec->sync0[w], *b = &s->rec->sync1[w];
        for (int i = 0; i < iters; i++) {
            tpb_mark_t *m = &all[(size_t)r * iters + i];
            m->c0 = tpb_clock_correct(a, b, m->c0);
            m->c1 = tpb_clock_correct(a, b, m->c1);
            m->x1 = tpb_clock_correct(a, b, m->x1);
        }
    }
}

/* The result of plan p as the record takes it: its identity, and the gathered facts. */
static void describe(const tpb_sweep_t *s, const tpb_config_plan_t *p, const tpb_rank_info_t *infos,
                     tpb_result_t *res)
{
    const tpb_coll_ops_t *coll = p->desc.coll;
    const tpb_measure_t *m = &s->plans.m;
    memset(res, 0, sizeof(*res));
    res->key = p->key;
    res->id = s->acct.nconfigs;
    res->backend = s->ctx.backend->name;
    res->world = s->pos.topo->size;
    res->iters = m->iters;
    res->warmup = m->warmup;
    res->col_collective = m->col_collective;
    res->coll = coll->kind;
    res->busbw_factor = coll->busbw_factor(p->tp);
    res->coll_bytes = coll->bytes(&p->desc);
    res->layer_flop = tpb_layer_flop(&p->desc);
    res->dtype = p->desc.dtype;
    res->speed_source = p->speeds ? p->speed_source : TPB_SPEEDS_NONE;
    res->info = infos;
    res->emulate_mode = m->emulate_mode;
    res->rounds = s->rec->rounds.r;
    res->nrounds = p->policy == TPB_POLICY_ADAPTIVE ? s->rec->rounds.n : 0;
    res->round_shards = s->rec->rounds.shards;
    res->rank_of = s->pos.rank_of;
}

/* The --emulate-speed / --emulate-schedule factors of the config whose measured iterations
 * start at iteration `first` of the run (world entries into asked), and the measured
 * iteration at which the schedule switches inside it (-1: none). */
static int emulate_asked(const tpb_measure_t *m, int size, long first, double *asked)
{
    int on = m->sched && m->sched_iter <= first;
    for (int w = 0; w < size; w++)
        asked[w] = on ? m->sched[w] : m->emulate ? m->emulate[w] : 1.0;
    long at = m->sched_iter - first;
    return m->sched && at > 0 && at < m->iters ? (int)at : -1;
}

/* This rank's facts about plan p once it is measured. */
static void rank_facts(const tpb_sweep_t *s, const tpb_config_plan_t *p, tpb_rank_info_t *info)
{
    int gr = p->desc.group_rank;
    info->shard = p->shards[gr]; /* the plan an adaptive round handed on */
    info->fraction = p->fractions[gr];
    info->speed = p->speeds ? p->speeds[gr].speed : NAN;
    info->speed_spread = p->speeds ? p->speeds[gr].spread : NAN;
    info->speed_samples = p->speeds ? p->speeds[gr].samples : 0;
    info->flop = tpb_layer_rank_flop(&p->desc);
    info->mem = p->mem_bytes;
    info->peak_gflops = s->facts.peak_gflops;
    info->device_shared = s->facts.ranks_on_device;
}

/* The layer of plan p, once it is known to fit (collective). */
static tpb_status_t build_layer(tpb_sweep_t *s, const tpb_config_plan_t *p, tpb_layer_t **l)
{
    double avail = 0.0;
    tpb_status_t st = tpb_dev_mem_free(s->ctx.dev, &avail);
    if (st == TPB_OK)
        st = tpb_plan_check_memory(p, avail, s->ctx.topo->rank);
    TPB_CHECK_RET(tpb_agree(s->pos.world, st));
    tpb_inputs_block_t mats[2]; /* drawn by all ranks together, each a share of the rows */
    int n = tpb_layer_inputs(&p->desc, mats);
    tpb_stamp(TPB_PHASE_INPUTS);
    TPB_CHECK_RET(tpb_agree(s->pos.world, tpb_inputs_prepare(s->pos.world, mats, n)));
    tpb_stamp(TPB_PHASE_SETUP);
    return tpb_agree(s->pos.world, tpb_layer_create(s->ctx.dev, s->pos.comm, &p->desc, l));
}

tpb_status_t tpb_config_open(tpb_sweep_t *s, const tpb_config_plan_t *plan, tpb_config_run_t *c)
{
    const tpb_measure_t *m = &s->plans.m;
    int size = s->pos.topo->size, root = s->rec != NULL;
    int cap = c->cap > m->iters ? c->cap : m->iters; /* --budget's room: set by the caller */
    double t0 = tpb_clock_now_us(NULL);
    *c = (tpb_config_run_t){.plan = plan,
                            .cap = cap,
                            .iters = m->iters,
                            .info = {.max_err = NAN, .speed_spread = NAN, .emulate_achieved = NAN},
                            .first = s->pos.iter_base + m->warmup,
                            .set = -1,
                            .block = -1};
    c->raw = calloc((size_t)cap, sizeof(*c->raw));
    int whole = root && !tpb_sweep_in_parts(s, plan); /* rank 0 holds every mark */
    c->all = whole ? calloc((size_t)size * (size_t)cap, sizeof(*c->all)) : NULL;
    c->infos = root ? calloc((size_t)size, sizeof(*c->infos)) : NULL;
    tpb_status_t st = (!c->raw || (whole && !c->all) || (root && !c->infos))
                          ? tpb_err_set(TPB_ERR_NOMEM, "no memory for the timelines")
                          : TPB_OK;
    TPB_CHECK_RET(tpb_agree(s->pos.world, st));
    /* a stop request is honoured between configs, on every rank alike */
    TPB_CHECK_RET(tpb_signal_agree(s->pos.world));
    tpb_stamp_config(s->acct.nconfigs);
    tpb_stamp(TPB_PHASE_SETUP);
    TPB_CHECK_RET(build_layer(s, plan, &c->l));
    if (!plan->desc.comm_only) {
        tpb_stamp(TPB_PHASE_PROBE);
        st = tpb_dev_emulation_probe(s->ctx.dev, tpb_layer_gemm(c->l), &c->info.emulate_achieved);
        if (st == TPB_OK && c->info.emulate_achieved != 1.0) /* the padding's plans: here */
            st = tpb_layer_warm(c->l);
        TPB_CHECK_RET(tpb_agree(s->pos.world, st));
    }
    c->host_us = tpb_clock_now_us(NULL) - t0 + s->acct.cal_us;
    c->drawn_s = tpb_inputs_drawn_s();
    s->acct.cal_us = 0.0;
    return TPB_OK;
}

/* --check right after the measured loop (what the iterations, chunked or not, left in Y):
 * where the collective scatters, every rank checks the samples of its part; where it leaves
 * the group one Y, the ranks share the sampled rows, and a rank whose Y's bytes differ from
 * group rank 0's (a collective that delivered a wrong copy to one rank) checks every one. */
static tpb_status_t check_y(tpb_sweep_t *s, const tpb_config_plan_t *p, tpb_config_run_t *c)
{
    int all = 1;
    tpb_status_t st = TPB_OK;
    if (!p->desc.coll->scatters && p->tp > 1) {
        uint64_t h = 0, h0;
        st = tpb_layer_result_hash(c->l, &h);
        h0 = h;
        TPB_MPI_RET(MPI_Bcast(&h0, 1, MPI_UINT64_T, 0, s->pos.group), "--check: Y's hash");
        all = st == TPB_OK && h != h0;
    }
    if (st == TPB_OK)
        st = tpb_layer_check(c->l, all, &c->info.max_err);
    return st;
}

tpb_status_t tpb_config_close(tpb_sweep_t *s, tpb_config_run_t *c)
{
    const tpb_measure_t *m = &s->plans.m;
    int size = s->pos.topo->size;
    const tpb_config_plan_t *p = c->moved.shards ? &c->moved : c->plan;
    double *chunk = NULL, *alone = NULL, t0 = tpb_clock_now_us(NULL);
    tpb_status_t st = TPB_OK;
    tpb_stamp(TPB_PHASE_CHECK);
    if (m->check)
        st = check_y(s, p, c);
    TPB_CHECK_GOTO(tpb_agree(s->pos.world, st), st, out);
    if (p->desc.chunks > 0) { /* then its parts alone, outside the measured loop */
        tpb_stamp(TPB_PHASE_MEASURE);
        TPB_CHECK_GOTO(tpb_sweep_overlap(s, p, c->l, &chunk, &alone), st, out);
    }
    rank_facts(s, p, &c->info);
    c->id = s->acct.nconfigs;
    int parts = tpb_sweep_in_parts(s, p);
    tpb_stamp(TPB_PHASE_GATHER);
    tpb_gathered_t g = {.ranks = NULL};
    TPB_CHECK_GOTO(gather(s, c->iters, parts ? NULL : c->raw, &c->info, c->all, c->infos), st, out);
    TPB_CHECK_GOTO(tpb_sweep_resync(s), st, out);
    if (parts)
        TPB_CHECK_GOTO(tpb_sweep_gather_parts(s, p, c, &g), st, out);
    if (s->rec) {
        tpb_result_t res;
        double asked[size];
        describe(s, p, c->infos, &res);
        res.iters = c->iters; /* --budget: more than --iters where its set took more looks */
        res.budget_looks = c->looks;
        res.emulate_switch_iter = emulate_asked(m, size, c->first, asked);
        res.emulate_asked = asked;
        res.interleave_set = c->set;
        res.interleave_rounds = c->rounds;
        res.block = c->block;
        res.block_pos = c->block_pos;
        res.host_s = (c->host_us + tpb_clock_now_us(NULL) - t0) * 1e-6; /* up to its record */
        res.inputs_s = c->drawn_s;
        if (parts)
            tpb_gathered_into(&g, &res);
        else
            correct_marks(s, c->all, c->iters);
        if (p->desc.chunks > 0) {
            tpb_sweep_overlap_clock(s, p, chunk);
            res.polls = p->desc.polls;
            res.chunk_marks = chunk;
            tpb_overlap_figures(size, p->tp, c->iters, res.chunks, c->all, chunk, alone,
                                &res.overlap);
            res.overlap.host_waits = s->facts.host_waits;
        }
        tpb_stamp(TPB_PHASE_RECORD);
        pthread_mutex_lock(&s->rec->lock);
        st = tpb_record_config(&s->rec->rec, &res, parts ? g.marks : c->all);
        s->acct.check_failed = s->rec->rec.check_failed;
        pthread_mutex_unlock(&s->rec->lock);
        if (ferror(s->ctx.out)) { /* the table's reader is gone (EPIPE): a stop, as SIGPIPE */
            clearerr(s->ctx.out);
            tpb_signal_broken_pipe();
        }
    }
    st = tpb_agree(s->pos.world, st);
out:
    if (s->rec)
        tpb_gathered_free(&g);
    free(chunk);
    free(alone);
    return st;
}

void tpb_config_free(tpb_config_run_t *c)
{
    tpb_plan_release(&c->moved);
    tpb_layer_destroy(c->l);
    free(c->raw);
    free(c->all);
    free(c->infos);
    memset(c, 0, sizeof(*c));
}

tpb_status_t tpb_sweep_config(tpb_sweep_t *s, const tpb_config_plan_t *plan)
{
    tpb_config_run_t c = {.cap = 0};
    tpb_status_t st = tpb_config_open(s, plan, &c);
    if (st == TPB_OK)
        st = tpb_sweep_measure(s, plan, &c.moved, &c.l, c.raw);
    c.info.marks_within_us = tpb_dev_marks_within(s->ctx.dev); /* the loop's, not the parts' */
    if (st == TPB_OK)
        st = tpb_config_close(s, &c);
    if (st != TPB_OK)
        tpb_stamp_failed(tpb_err_msg()); /* a free behind a wedged device: said with this */
    tpb_config_free(&c);
    return st;
}
