/* sweep.c - set-up, the loop over the planned configs, and the end of a run. */
#include "run/sweep.h"

#include <stdlib.h>
#include <string.h>

#include "record/outfile.h"
#include "run/agree.h"
#include "run/calibrate.h"
#include "run/clocksync.h"
#include "run/signals.h"
#include "run/orient.h"

static int is_root(const tpb_sweep_t *s)
{
    return s->real_topo->rank == 0;
}

/* The world in placement p's order: a communicator, and a topology of positions. */
static tpb_status_t place(tpb_sweep_t *s, tpb_placement_t p)
{
    const tpb_topo_t *t = s->real_topo;
    const int *rank_of = tpb_plans_rank_of(&s->plans, p);
    int me = 0;
    while (rank_of[me] != t->rank)
        me++;
    tpb_topo_t *pt = &s->placed_topo;
    *pt = *t;
    pt->rank = me;
    pt->hosts = calloc((size_t)t->size, sizeof(*pt->hosts));
    pt->host_index = calloc((size_t)t->size, sizeof(int));
    if (!pt->hosts || !pt->host_index)
        return tpb_err_set(TPB_ERR_NOMEM, "out of memory for the placement of %d ranks", t->size);
    for (int q = 0; q < t->size; q++) {
        memcpy(pt->hosts[q], t->hosts[rank_of[q]], TPB_HOST_LEN);
        pt->host_index[q] = t->host_index[rank_of[q]];
    }
    TPB_MPI_RET(MPI_Comm_split(s->real_world, 0, me, &s->world), "placement");
    s->topo = pt;
    s->placement = p;
    s->rank_of = rank_of;
    return TPB_OK;
}

static void close_group(tpb_sweep_t *s)
{
    if (s->comm)
        tpb_comm_close(s->comm);
    if (s->group != MPI_COMM_NULL)
        MPI_Comm_free(&s->group);
    s->comm = NULL;
    s->group = MPI_COMM_NULL;
}

static void unplace(tpb_sweep_t *s)
{
    close_group(s);
    if (s->world != s->real_world)
        MPI_Comm_free(&s->world);
    s->world = s->real_world;
    s->topo = s->real_topo;
    tpb_topo_free(&s->placed_topo);
}

/* This rank's TP group of degree tp in the current placement, and its backend communicator. */
static tpb_status_t open_group(tpb_sweep_t *s, int tp)
{
    TPB_MPI_RET(MPI_Comm_split(s->world, s->topo->rank / tp, s->topo->rank, &s->group),
                "TP groups");
    return tpb_agree(s->world, tpb_dev_comm_open(s->dev, s->group, &s->comm));
}

/* Enter plan i's placement and TP group (leaving the previous ones). */
static tpb_status_t enter(tpb_sweep_t *s, int i)
{
    const tpb_config_plan_t *p = &s->plans.p[i], *prev = i ? &s->plans.p[i - 1] : NULL;
    if (!prev || prev->placement != p->placement) {
        if (prev)
            unplace(s);
        TPB_CHECK_RET(place(s, p->placement));
    }
    if (p->skip[0] ||
        (s->group != MPI_COMM_NULL && prev && prev->tp == p->tp && prev->placement == p->placement))
        return TPB_OK;
    close_group(s);
    return open_group(s, p->tp);
}

/* Plan i's block speeds, when they are first needed (collective). */
static tpb_status_t speeds_for(tpb_sweep_t *s, int i)
{
    if (!tpb_plan_needs_speeds(&s->plans.p[i]))
        return TPB_OK;
    TPB_CHECK_RET(tpb_signal_agree(s->world)); /* no calibration after a stop request */
    return tpb_sweep_speeds(s, i);
}

/* A config not measured (TPB_ERR_INVALID, the ranks agreeing): one line, and on. */
static tpb_status_t skipped(tpb_sweep_t *s, tpb_status_t st)
{
    if (st != TPB_ERR_INVALID || s->fatal)
        return st;
    if (s->rec) {
        pthread_mutex_lock(&s->rec->lock);
        tpb_record_skip(&s->rec->rec, tpb_err_msg());
        pthread_mutex_unlock(&s->rec->lock);
    }
    return TPB_OK;
}

/* Plan i: its block's speeds when they are first needed, then the config or its skip line. */
static tpb_status_t run_plan(tpb_sweep_t *s, int i)
{
    tpb_config_plan_t *p = &s->plans.p[i];
    TPB_CHECK_RET(speeds_for(s, i));
    tpb_status_t st =
        tpb_agree(s->world, p->skip[0] ? tpb_err_set(TPB_ERR_INVALID, "%s", p->skip) : TPB_OK);
    if (st == TPB_OK) {
        tpb_sweep_progress(s, p, tpb_sweep_plan_work(s, p), 1);
        st = tpb_sweep_config(s, p);
    }
    s->nconfigs += st == TPB_OK;
    return skipped(s, st);
}

/* Plan q may be measured side by side with others of its block: --interleave on, a
 * timeline, no schedule that changes speeds at an iteration of the run, a TP group, a
 * serial layer, a policy with fixed shards. */
static int interleavable(const tpb_sweep_t *s, const tpb_config_plan_t *q)
{
    const tpb_measure_t *m = &s->plans.m;
    return m->interleave && m->timeline && !m->sched && tpb_interleave_rounds(m->iters) > 1 &&
           !q->skip[0] && q->tp > 1 && q->desc.chunks == 0 && !q->shape->comm_only &&
           q->policy != TPB_POLICY_ADAPTIVE;
}

/* The plans measured with plan i (i first; at most TPB_SET_MAX): the other policies of its
 * block and sequence parallelism. Returns how many (1: alone). */
static int set_of(const tpb_sweep_t *s, int i, const unsigned char *done, int *idx)
{
    const tpb_config_plan_t *p = &s->plans.p[i];
    int k = 0;
    idx[k++] = i;
    if (!interleavable(s, p))
        return 1;
    for (int j = i + 1; j < s->plans.n && s->plans.p[j].block == p->block && k < TPB_SET_MAX; j++)
        if (!done[j] && interleavable(s, &s->plans.p[j]) && s->plans.p[j].seqpar == p->seqpar)
            idx[k++] = j;
    return k;
}

/* The set's layers fit beside each other on every rank (collective). */
static tpb_status_t set_fits(tpb_sweep_t *s, const int *idx, int k, int *fits)
{
    double avail = 0.0, need = 0.0;
    tpb_status_t st = tpb_agree(s->world, tpb_dev_mem_free(s->dev, &avail));
    for (int j = 0; j < k; j++)
        need += s->plans.p[idx[j]].mem_bytes;
    *fits = need <= 0.9 * avail;
    TPB_MPI_RET(MPI_Allreduce(MPI_IN_PLACE, fits, 1, MPI_INT, MPI_MIN, s->world), "memory");
    return st;
}

/* Plans idx[k * nl] measured as k units of nl layers (a unit: one config, or a --block's
 * GEMMs in order), side by side (tpb_sweep_measure_set), then closed and recorded one by
 * one; a --block's units recorded as blocks too (collective). */
static tpb_status_t measure_units(tpb_sweep_t *s, const int *idx, int k, int nl)
{
    int n = k * nl, open = 0;
    tpb_config_run_t *c = calloc((size_t)n, sizeof(*c));
    tpb_status_t st = tpb_agree(s->world, c ? TPB_OK : tpb_err_set(TPB_ERR_NOMEM, "out of memory"));
    TPB_CHECK_RET(st);
    for (; open < n && st == TPB_OK; open++)
        st = tpb_config_open(s, &s->plans.p[idx[open]], &c[open]);
    if (st == TPB_OK)
        st = tpb_sweep_measure_set(s, c, k, nl);
    for (int j = 0; j < n && st == TPB_OK; j++) {
        c[j].set = c[j].rounds ? s->nsets : -1;
        c[j].block = nl > 1 || s->o->block ? s->nblocks + j / nl : -1;
        c[j].block_pos = j % nl;
        st = tpb_config_close(s, &c[j]);
        s->nconfigs += st == TPB_OK;
    }
    for (int u = 0; s->o->block && u < k && st == TPB_OK; u++)
        st = tpb_sweep_block(s, &c[u * nl], nl);
    s->nblocks += s->o->block && st == TPB_OK ? k : 0;
    s->nsets += st == TPB_OK && c[0].rounds;
    for (int j = 0; j < open; j++)
        tpb_config_free(&c[j]);
    free(c);
    return skipped(s, st);
}

/* --block: the plans measured with plan i as blocks (i first): every policy of its
 * placement, TP degree and sequence parallelism, each a unit of the shapes' plans in
 * order. idx receives k units of *nl plans; returns k, or 0 (every plan in *skip, marked in done)
 * where a shape cannot be planned at this TP degree. */
static int block_of(const tpb_sweep_t *s, int i, unsigned char *done, int *idx, int *nl,
                    const char **skip)
{
    const tpb_config_plan_t *p = &s->plans.p[i];
    unsigned pols[8];
    int npol = 0, k = 0, end = i;
    *skip = NULL;
    while (end < s->plans.n && s->plans.p[end].placement == p->placement &&
           s->plans.p[end].tp == p->tp)
        end++;
    for (int j = i; j < end; j++) {
        const tpb_config_plan_t *q = &s->plans.p[j];
        if (q->skip[0] && !*skip)
            *skip = q->skip;
        if (q->skip[0] || q->seqpar != p->seqpar || done[j])
            continue;
        int seen = 0;
        for (int u = 0; u < npol; u++)
            seen |= pols[u] == (unsigned)q->policy;
        if (!seen && npol < 8)
            pols[npol++] = (unsigned)q->policy;
    }
    *nl = 0;
    for (int u = 0; u < npol; u++) {
        int got = 0;
        for (int j = i; j < end; j++) {
            const tpb_config_plan_t *q = &s->plans.p[j];
            if (!q->skip[0] && q->seqpar == p->seqpar && !done[j] &&
                q->policy == (tpb_policy_t)pols[u])
                idx[k * *nl + got++] = j;
        }
        if (u == 0)
            *nl = got;
        k += got == *nl;
    }
    for (int j = i; j < end; j++)
        if (*skip || s->plans.p[j].seqpar == p->seqpar || s->plans.p[j].skip[0])
            done[j] = 1;
    return *skip ? 0 : k;
}

/* --block: plan i's blocks, or the skip line of the first shape that cannot run. */
static tpb_status_t run_block(tpb_sweep_t *s, int i, unsigned char *done, int *idx)
{
    int nl = 0, fits = 0;
    const char *skip = NULL;
    int k = block_of(s, i, done, idx, &nl, &skip);
    if (!k)
        return skipped(
            s, tpb_agree(s->world, tpb_err_set(TPB_ERR_INVALID, "block tp %d: %s", s->plans.p[i].tp,
                                               skip ? skip : "no config")));
    for (int j = 0; j < k * nl; j++)
        TPB_CHECK_RET(speeds_for(s, idx[j]));
    TPB_CHECK_RET(set_fits(s, idx, k * nl, &fits));
    if (!fits)
        return skipped(s, tpb_agree(s->world, tpb_err_set(TPB_ERR_INVALID,
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
static tpb_status_t run_set(tpb_sweep_t *s, const int *idx, int k)
{
    int fits = 0;
    for (int j = 0; j < k; j++)
        TPB_CHECK_RET(speeds_for(s, idx[j]));
    TPB_CHECK_RET(set_fits(s, idx, k, &fits));
    for (int j = 0; !fits && j < k; j++)
        TPB_CHECK_RET(run_plan(s, idx[j]));
    if (!fits)
        return TPB_OK;
    double work = 0.0;
    for (int j = 0; j < k; j++)
        work += tpb_sweep_plan_work(s, &s->plans.p[idx[j]]);
    tpb_sweep_progress(s, &s->plans.p[idx[0]], work, k);
    return measure_units(s, idx, k, 1);
}

tpb_status_t tpb_sweep_run(tpb_sweep_t *s)
{
    tpb_status_t st = TPB_OK;
    s->fatal = 0;
    unsigned char *done = calloc((size_t)s->plans.n + 1, 1);
    int *idx = malloc(((size_t)s->plans.n + 1) * sizeof(int));
    if (!done || !idx) {
        free(done);
        free(idx);
        return tpb_err_set(TPB_ERR_NOMEM, "out of memory for %d plans", s->plans.n);
    }
    for (int i = 0; i < s->plans.n && st == TPB_OK; i++) {
        int k = 1;
        if (done[i])
            continue; /* measured in an earlier plan's set */
        st = enter(s, i);
        if (st == TPB_OK && s->o->block && !s->plans.p[i].skip[0]) {
            st = run_block(s, i, done, idx);
            continue;
        }
        if (st == TPB_OK)
            k = set_of(s, i, done, idx);
        for (int j = 0; j < k; j++)
            done[idx[j]] = 1;
        if (st == TPB_OK)
            st = k > 1 ? run_set(s, idx, k) : run_plan(s, i);
    }
    free(done);
    free(idx);
    if (s->world != s->real_world || s->group != MPI_COMM_NULL)
        unplace(s);
    TPB_CHECK_RET(st);
    if (s->nconfigs == 0)
        return tpb_err_set(TPB_ERR_INVALID,
                           "no config was measured: every one was skipped (see the '# skipped' "
                           "lines): choose TP degrees that divide the %d ranks and shapes that "
                           "can be split",
                           s->topo->size);
    return TPB_OK;
}

/* What the record writes about the run, as plain data (rank 0). */
static tpb_run_info_t run_info(const tpb_sweep_t *s)
{
    const tpb_options_t *o = s->o;
    return (tpb_run_info_t){.command_line = s->command_line,
                            .backend = s->backend->name,
                            .mpi_version = s->rec->mpi_version,
                            .topo = s->real_topo,
                            .devices = s->rec->devices,
                            .emulate = o->nemulate ? o->emulate : NULL,
                            .sched = o->nsched ? o->sched : NULL,
                            .sched_iter = o->sched_iter,
                            .dtype = o->dtype,
                            .iters = o->iters,
                            .warmup = o->warmup,
                            .granularity = o->granularity,
                            .cost_profile = o->cost_profile.nblocks ? &o->cost_profile : NULL,
                            .seed = o->seed,
                            .timeline = o->timeline,
                            .trace_iters = o->trace_iters,
                            .trace_per_run = o->trace_per_run,
                            .check = o->check,
                            .inject_delay_rank = o->inject_delay.rank,
                            .inject_clock_rank = o->inject_clock.rank,
                            .clock_exchanges = TPB_CLOCK_EXCHANGES,
                            .out_dir = o->out_dir,
                            .force = o->force,
                            .comm_only = o->comm_only,
                            .comm_gap_us = o->comm_gap_us,
                            .collectives = o->collectives,
                            .cal_target_spread = TPB_CAL_POLICY_DEFAULT.target_spread,
                            .slurm = s->slurm,
                            .table = s->out,
                            .width = o->wide ? TPB_TABLE_WIDE : TPB_TABLE_COMPACT};
}

/* Plans, and what can be checked before measuring (every rank, agreed): that every config
 * fits in this rank's memory and that the calibration file can be written. */
static tpb_status_t plan_and_check(tpb_sweep_t *s)
{
    double avail = 0.0;
    tpb_status_t st = tpb_plans_build(s->o, s->real_topo, &s->plans);
    if (st == TPB_OK)
        st = tpb_dev_mem_free(s->dev, &avail);
    if (st == TPB_OK)
        st = tpb_plans_check_memory(&s->plans, avail, s->real_topo->rank);
    if (st == TPB_OK && is_root(s) && s->o->calibration_file[0])
        st = tpb_outfile_check_writable(s->o->calibration_file, "--calibration-file");
    return tpb_agree(s->world, st);
}

/* Rank 0's recorder: device facts, clock samples and the calibration file. */
static tpb_status_t recorder_new(tpb_sweep_t *s)
{
    int size = s->real_topo->size;
    tpb_recorder_t *r = calloc(1, sizeof(*r));
    if (!r)
        return tpb_err_set(TPB_ERR_NOMEM, "out of memory for %d ranks", size);
    s->rec = r;
    pthread_mutex_init(&r->lock, NULL);
    r->devices = calloc((size_t)size, sizeof(*r->devices));
    r->sync0 = calloc((size_t)size, sizeof(*r->sync0));
    r->sync1 = calloc((size_t)size, sizeof(*r->sync1));
    r->cal_warned = calloc((size_t)size, 1);
    if (!r->devices || !r->sync0 || !r->sync1 || !r->cal_warned)
        return tpb_err_set(TPB_ERR_NOMEM, "out of memory for %d ranks", size);
    return s->o->calibration_file[0] ? tpb_calfile_load(s->o->calibration_file, &r->cal) : TPB_OK;
}

tpb_status_t tpb_sweep_init(tpb_sweep_t *s)
{
    s->real_world = s->world;
    s->real_topo = s->topo;
    s->group = MPI_COMM_NULL;
    TPB_CHECK_RET(plan_and_check(s));
    s->placement = TPB_PLACE_PACKED;
    s->rank_of = tpb_plans_rank_of(&s->plans, TPB_PLACE_PACKED);
    tpb_device_info_t mine;
    tpb_dev_info(s->dev, &mine);
    s->peak_gflops = mine.peak_gflops;
    s->ranks_on_device = mine.ranks_on_device;
    TPB_CHECK_RET(tpb_agree(s->world, is_root(s) ? recorder_new(s) : TPB_OK));
    /* device facts are a fixed-size record of one architecture's chars and numbers */
    TPB_MPI_RET(MPI_Gather(&mine, sizeof(mine), MPI_BYTE, s->rec ? s->rec->devices : NULL,
                           sizeof(mine), MPI_BYTE, 0, s->world),
                "device facts");
    TPB_CHECK_RET(
        tpb_clock_sync(s->world, s->clock, TPB_CLOCK_EXCHANGES, s->rec ? s->rec->sync0 : NULL));
    if (s->rec) {
        int len;
        TPB_MPI_RET(MPI_Get_library_version(s->rec->mpi_version, &len), "MPI version");
        memcpy(s->rec->sync1, s->rec->sync0, (size_t)s->real_topo->size * sizeof(*s->rec->sync0));
        tpb_run_info_t info = run_info(s);
        pthread_mutex_lock(&s->rec->lock);
        tpb_record_init(&s->rec->rec, &info, s->rec->sync0, s->rec->sync1);
        tpb_record_header(&s->rec->rec);
        pthread_mutex_unlock(&s->rec->lock);
    }
    return TPB_OK;
}

tpb_status_t tpb_sweep_finish(tpb_sweep_t *s)
{
    tpb_status_t st = TPB_OK;
    TPB_CHECK_RET(tpb_sweep_resync(s));
    if (s->rec) {
        pthread_mutex_lock(&s->rec->lock);
        tpb_record_summary(&s->rec->rec);
        st = tpb_record_write(&s->rec->rec, TPB_RUN_FINISHED);
        pthread_mutex_unlock(&s->rec->lock);
    }
    return tpb_agree(s->world, st);
}

void tpb_sweep_close(tpb_sweep_t *s, tpb_status_t why)
{
    if (!s->rec || !s->rec->rec.run.topo)
        return;
    tpb_run_status_t rs = why == TPB_ERR_TIMEOUT       ? TPB_RUN_TIMEOUT
                          : why == TPB_ERR_INTERRUPTED ? TPB_RUN_INTERRUPTED
                                                       : TPB_RUN_FAILED;
    char msg[1024];
    snprintf(msg, sizeof(msg), "%s", tpb_err_msg()); /* writing must not lose the message */
    pthread_mutex_lock(&s->rec->lock);
    tpb_record_write(&s->rec->rec, rs);
    pthread_mutex_unlock(&s->rec->lock);
    tpb_err_set(why, "%s", msg);
}

void tpb_sweep_stop(tpb_sweep_t *s)
{
    if (!s->rec)
        return;
    pthread_mutex_lock(&s->rec->lock);
    if (s->rec->rec.run.topo)
        tpb_record_stop(&s->rec->rec);
    pthread_mutex_unlock(&s->rec->lock);
}

void tpb_sweep_free(tpb_sweep_t *s)
{
    tpb_recorder_t *r = s->rec;
    if (r) {
        if (r->rec.run.topo)
            tpb_record_free(&r->rec);
        free(r->rounds.r);
        free(r->rounds.shards);
        free(r->devices);
        free(r->sync0);
        free(r->sync1);
        free(r->cal_warned);
        tpb_calfile_free(&r->cal);
        pthread_mutex_destroy(&r->lock);
        free(r);
        s->rec = NULL;
    }
    tpb_plans_free(&s->plans);
}
