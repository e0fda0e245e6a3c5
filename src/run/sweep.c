/* sweep.c - set-up, the loop over the planned configs, and the end of a run. */
#include "run/sweep_state.h"

#include <stdlib.h>
#include <string.h>

#include "record/outfile.h"
#include "run/agree.h"
#include "run/calibrate.h"
#include "run/clocksync.h"
#include "run/signals.h"
#include "run/orient.h"
#include "run/sweep_impl.h"

static int is_root(const tpb_sweep_t *s)
{
    return s->ctx.topo->rank == 0;
}

/* The world in placement p's order: a communicator, and a topology of positions. */
static tpb_status_t place(tpb_sweep_t *s, tpb_placement_t p)
{
    const tpb_topo_t *t = s->ctx.topo;
    const int *rank_of = tpb_plans_rank_of(&s->plans, p);
    int me = 0;
    while (rank_of[me] != t->rank)
        me++;
    tpb_topo_t *pt = &s->pos.placed_topo;
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
    TPB_MPI_RET(MPI_Comm_split(s->ctx.world, 0, me, &s->pos.world), "placement");
    s->pos.topo = pt;
    s->pos.placement = p;
    s->pos.rank_of = rank_of;
    return TPB_OK;
}

static void close_group(tpb_sweep_t *s)
{
    if (s->pos.comm)
        tpb_comm_close(s->pos.comm);
    if (s->pos.group != MPI_COMM_NULL)
        MPI_Comm_free(&s->pos.group);
    s->pos.comm = NULL;
    s->pos.group = MPI_COMM_NULL;
}

static void unplace(tpb_sweep_t *s)
{
    close_group(s);
    if (s->pos.world != s->ctx.world)
        MPI_Comm_free(&s->pos.world);
    s->pos.world = s->ctx.world;
    s->pos.topo = s->ctx.topo;
    tpb_topo_free(&s->pos.placed_topo);
}

/* This rank's TP group of degree tp in the current placement, and its backend communicator. */
static tpb_status_t open_group(tpb_sweep_t *s, int tp)
{
    TPB_MPI_RET(
        MPI_Comm_split(s->pos.world, s->pos.topo->rank / tp, s->pos.topo->rank, &s->pos.group),
        "TP groups");
    s->pos.group_tp = tp;
    return tpb_agree(s->pos.world, tpb_dev_comm_open(s->ctx.dev, s->pos.group, &s->pos.comm));
}

/* Enter plan i's placement and TP group (leaving the previous ones). The group open is
 * judged by its own TP degree, never by the previous plan's: a skipped entry (a shape that
 * cannot be split at this degree) comes before the degree's first measured config without
 * opening its group, and that config ran on the last degree's groups (TP 2 configs on TP 1
 * communicators, each rank alone, a rank's all-gather reading past its shard). */
static tpb_status_t enter(tpb_sweep_t *s, int i)
{
    const tpb_config_plan_t *p = &s->plans.p[i], *prev = i ? &s->plans.p[i - 1] : NULL;
    if (!prev || prev->placement != p->placement) {
        if (prev)
            unplace(s);
        TPB_CHECK_RET(place(s, p->placement));
    }
    if (p->skip[0] || (s->pos.group != MPI_COMM_NULL && s->pos.group_tp == p->tp))
        return TPB_OK;
    close_group(s);
    return open_group(s, p->tp);
}

tpb_status_t tpb_sweep_run(tpb_sweep_t *s)
{
    tpb_status_t st = TPB_OK;
    tpb_sweep_announce(s);
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
        if (s->plans.m.block && s->plans.p[i].skip[0] && tpb_plans_block_reports(&s->plans, i))
            continue; /* its block says why it is not measured */
        st = enter(s, i);
        if (st == TPB_OK && s->plans.m.block && !s->plans.p[i].skip[0]) {
            st = tpb_sweep_run_block(s, i, done, idx);
            continue;
        }
        if (st != TPB_OK)
            break; /* idx holds no set: enter() failed before one was chosen */
        k = tpb_plans_set_of(&s->plans, i, done, idx);
        for (int j = 0; j < k; j++)
            done[idx[j]] = 1;
        st = k > 1 ? tpb_sweep_run_set(s, idx, k) : tpb_sweep_run_plan(s, i);
    }
    free(done);
    free(idx);
    if (s->pos.world != s->ctx.world || s->pos.group != MPI_COMM_NULL)
        unplace(s);
    TPB_CHECK_RET(st);
    if (s->acct.nconfigs == 0 && s->rec) { /* nothing measured: nothing left in --out either */
        pthread_mutex_lock(&s->rec->lock);
        (void)tpb_record_discard(&s->rec->rec); /* one that stays is the run's own, empty */
        pthread_mutex_unlock(&s->rec->lock);
    }
    if (s->acct.nconfigs == 0) { /* every rank counted the same configs: an agreed end */
        tpb_err_set(TPB_ERR_INVALID,
                    "no config was measured on the %d ranks: every one was skipped, each for "
                    "the reason its '# skipped' line gives",
                    s->pos.topo->size);
        tpb_err_mark_agreed();
        return TPB_ERR_INVALID;
    }
    return TPB_OK;
}

/* What the record writes about the run, as plain data (rank 0): the plans' part (the
 * options', built once in plan.c) and this run's. */
static tpb_run_info_t run_info(const tpb_sweep_t *s)
{
    tpb_run_info_t r = s->plans.run;
    r.command_line = s->ctx.command_line;
    r.backend = s->ctx.backend->name;
    r.mpi_version = s->rec->mpi_version;
    r.topo = s->ctx.topo;
    r.devices = s->rec->devices;
    r.clock_exchanges = TPB_CLOCK_EXCHANGES;
    r.cal_target_spread = TPB_CAL_POLICY_DEFAULT.target_spread;
    r.slurm = s->ctx.slurm;
    r.table = s->ctx.out;
    return r;
}

/* What can be checked of the plans before measuring (every rank, agreed): that every config
 * fits in this rank's memory and that the calibration file can be written. */
static tpb_status_t check_plans(tpb_sweep_t *s)
{
    double avail = 0.0;
    tpb_status_t st = tpb_dev_mem_free(s->ctx.dev, &avail);
    if (st == TPB_OK)
        st = tpb_plans_check_memory(&s->plans, avail, s->ctx.topo->rank);
    if (st == TPB_OK && is_root(s) && s->plans.m.calibration_file[0])
        st = tpb_outfile_check_writable(s->plans.m.calibration_file, "--calibration-file");
    return tpb_agree(s->pos.world, st);
}

/* Rank 0's recorder: device facts, clock samples and the calibration file. */
static tpb_status_t recorder_new(tpb_sweep_t *s)
{
    int size = s->ctx.topo->size;
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
    const char *cal = s->plans.m.calibration_file;
    return cal[0] ? tpb_calfile_load(cal, &r->cal) : TPB_OK;
}

tpb_status_t tpb_sweep_init(tpb_sweep_t *s)
{
    tpb_status_t st = TPB_OK;
    s->pos.group = MPI_COMM_NULL;
    s->acct.budget = (tpb_record_budget_t){.budget_s = s->plans.m.budget_s};
    TPB_CHECK_RET(check_plans(s));
    s->pos.placement = TPB_PLACE_PACKED;
    s->pos.rank_of = tpb_plans_rank_of(&s->plans, TPB_PLACE_PACKED);
    tpb_device_info_t mine;
    tpb_dev_info(s->ctx.dev, &mine);
    s->facts.peak_gflops = mine.peak_gflops;
    s->facts.ranks_on_device = mine.ranks_on_device;
    s->facts.host_waits = mine.host_waits;
    TPB_CHECK_RET(tpb_agree(s->pos.world, is_root(s) ? recorder_new(s) : TPB_OK));
    /* device facts are a fixed-size record of one architecture's chars and numbers */
    TPB_MPI_RET(MPI_Gather(&mine, sizeof(mine), MPI_BYTE, s->rec ? s->rec->devices : NULL,
                           sizeof(mine), MPI_BYTE, 0, s->pos.world),
                "device facts");
    TPB_CHECK_RET(
        tpb_agree(s->pos.world, tpb_clock_sync(s->pos.world, s->ctx.clock, TPB_CLOCK_EXCHANGES,
                                               s->rec ? s->rec->sync0 : NULL)));
    if (s->rec) {
        int len;
        TPB_MPI_RET(MPI_Get_library_version(s->rec->mpi_version, &len), "MPI version");
        memcpy(s->rec->sync1, s->rec->sync0, (size_t)s->ctx.topo->size * sizeof(*s->rec->sync0));
        tpb_run_info_t info = run_info(s);
        pthread_mutex_lock(&s->rec->lock);
        tpb_record_init(&s->rec->rec, &info, s->rec->sync0, s->rec->sync1);
        tpb_record_header(&s->rec->rec);
        st = tpb_record_begin(&s->rec->rec); /* a stop from here on leaves a record */
        pthread_mutex_unlock(&s->rec->lock);
    }
    TPB_CHECK_RET(tpb_agree(s->pos.world, st));
    return tpb_sweep_load_mark(s);
}

tpb_status_t tpb_sweep_finish(tpb_sweep_t *s)
{
    tpb_status_t st = TPB_OK;
    TPB_CHECK_RET(tpb_signal_agree(s->pos.world)); /* a stop in the last config: no answer */
    TPB_CHECK_RET(tpb_sweep_resync(s));
    TPB_CHECK_RET(tpb_sweep_load_end(s));
    if (s->rec) {
        s->rec->rec.budget = s->acct.budget;
        pthread_mutex_lock(&s->rec->lock);
        tpb_record_summary(&s->rec->rec);
        st = tpb_record_write(&s->rec->rec, TPB_RUN_FINISHED);
        pthread_mutex_unlock(&s->rec->lock);
    }
    return tpb_agree(s->pos.world, st);
}

tpb_status_t tpb_sweep_new(const tpb_sweep_ctx_t *ctx, tpb_plan_list_t *plans, tpb_sweep_t **out)
{
    tpb_sweep_t *s = calloc(1, sizeof(*s));
    *out = s;
    if (!s) {
        tpb_plans_free(plans);
        return tpb_err_set(TPB_ERR_NOMEM, "out of memory for the sweep");
    }
    s->ctx = *ctx; /* ctx.world and ctx.topo: the world as found, for clock sync */
    s->pos.world = ctx->world;
    s->pos.topo = ctx->topo;
    s->plans = *plans;
    memset(plans, 0, sizeof(*plans));
    return TPB_OK;
}

const tpb_record_t *tpb_sweep_record(const tpb_sweep_t *s)
{
    return s && s->rec ? &s->rec->rec : NULL;
}

int tpb_sweep_check_failed(const tpb_sweep_t *s)
{
    return s && s->acct.check_failed;
}

void tpb_sweep_close(tpb_sweep_t *s, tpb_status_t why)
{
    if (!s || !s->rec || !s->rec->rec.run.topo)
        return;
    tpb_run_status_t rs = why == TPB_ERR_TIMEOUT       ? TPB_RUN_TIMEOUT
                          : why == TPB_ERR_INTERRUPTED ? TPB_RUN_INTERRUPTED
                                                       : TPB_RUN_FAILED;
    char msg[1024];
    snprintf(msg, sizeof(msg), "%s", tpb_err_msg()); /* writing must not lose the message */
    pthread_mutex_lock(&s->rec->lock);
    snprintf(s->rec->rec.stop_reason, sizeof(s->rec->rec.stop_reason), "%s", msg);
    tpb_record_write(&s->rec->rec, rs);
    pthread_mutex_unlock(&s->rec->lock);
    tpb_err_set(why, "%s", msg);
}

int tpb_sweep_stop(tpb_sweep_t *s)
{
    if (!s || !s->rec)
        return 0;
    pthread_mutex_lock(&s->rec->lock);
    int held = s->held && s->rec->rec.run.topo;
    if (s->rec->rec.run.topo)
        tpb_record_stop(&s->rec->rec, !held);
    pthread_mutex_unlock(&s->rec->lock);
    return held;
}

void tpb_sweep_free(tpb_sweep_t *s)
{
    if (!s)
        return;
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
    free(s);
}
