/* sweep.c - the loop over configs and the measurement of one config. */
#include "run/sweep.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/metrics.h"
#include "base/partition.h"
#include "base/placement.h"
#include "run/agree.h"
#include "run/clocksync.h"
#include "run/layer.h"
#include "run/signals.h"
#include "run/split.h"

static int world_rank(const tpb_sweep_t *s)
{
    return s->topo->rank;
}

unsigned tpb_sweep_shape_splits(const tpb_sweep_t *s, const tpb_shape_t *sh)
{
    return sh->splits ? sh->splits : s->o->splits;
}

int tpb_sweep_tp_valid(const tpb_sweep_t *s, int tp)
{
    return tp <= s->topo->size && s->topo->size % tp == 0;
}

/* Whether policy p runs for split sp at TP degree tp. */
static int policy_runs(const tpb_sweep_t *s, int tp, tpb_policy_t p, tpb_split_t sp)
{
    unsigned policies = s->o->policies;
    /* with one rank per group every policy gives the same single shard: run the first */
    unsigned first = policies & (unsigned)-(int)policies;
    /* without a GEMM an all-reduce moves the same bytes whatever the blocks: even only */
    int reduce = sp == TPB_SPLIT_ROW || s->o->col_collective == TPB_COLCOLL_ALLREDUCE;
    if (s->o->comm_only && reduce && p != TPB_POLICY_EVEN)
        return 0;
    return (policies & p) && (tp > 1 || p == first);
}

static int count_configs(const tpb_sweep_t *s)
{
    int n = 0;
    for (int t = 0; t < s->o->ntp; t++) {
        if (!tpb_sweep_tp_valid(s, s->o->tp[t]) || (s->o->comm_only && s->o->tp[t] == 1))
            continue;
        for (int i = 0; i < s->o->nshapes; i++)
            for (unsigned sp = TPB_SPLIT_ROW; sp <= TPB_SPLIT_COL; sp <<= 1)
                for (unsigned p = TPB_POLICY_EVEN; p <= TPB_POLICY_ADAPTIVE; p <<= 1)
                    n += (tpb_sweep_shape_splits(s, &s->o->shapes[i]) & sp) &&
                         policy_runs(s, s->o->tp[t], (tpb_policy_t)p, (tpb_split_t)sp);
    }
    int places = !!(s->o->placements & TPB_PLACE_PACKED) + !!(s->o->placements & TPB_PLACE_SPREAD);
    return n * places;
}

/* ---- one config ---- */

/* Shards of the group, and this rank's facts for rank 0. */
static tpb_status_t plan_shards(tpb_sweep_t *s, const tpb_point_t *c, long *shards,
                                tpb_rank_info_t *info)
{
    long total = tpb_split_total(c->shape, c->split);
    int gr = world_rank(s) % c->tp;
    double frac[c->tp];
    int weighted = c->policy == TPB_POLICY_WEIGHTED || c->policy == TPB_POLICY_ADAPTIVE;
    tpb_status_t st =
        weighted ? tpb_partition_weighted(total, c->tp, s->o->granularity, c->speeds, shards, frac)
                 : tpb_partition_even(total, c->tp, s->o->granularity, shards);
    if (st != TPB_OK)
        return st;
    info->shard = (double)shards[gr];
    info->speed = c->speeds ? c->speeds[gr] : NAN;
    info->speed_spread = c->cal ? c->cal[gr].spread : NAN;
    info->speed_samples = c->cal ? c->cal[gr].samples : 0;
    info->fraction = weighted ? frac[gr] : (double)shards[gr] / total;
    return TPB_OK;
}

/* Gather marks and rank facts to rank 0 (collective). */
static tpb_status_t gather(tpb_sweep_t *s, const tpb_mark_t *raw, const tpb_rank_info_t *info,
                           tpb_mark_t *all, tpb_rank_info_t *infos)
{
    int size = s->topo->size, per = 3 * s->o->iters, root = world_rank(s) == 0;
    int counts[root ? size : 1], displs[root ? size : 1];
    for (int r = 0; root && r < size; r++) {
        counts[r] = per;
        displs[r] = r * per;
    }
    int rc = MPI_Gatherv(raw, per, MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, 0, s->world);
    rc |= MPI_Gather(info, (int)(sizeof(*info) / sizeof(double)), MPI_DOUBLE, infos,
                     (int)(sizeof(*info) / sizeof(double)), MPI_DOUBLE, 0, s->world);
    if (rc != MPI_SUCCESS)
        return tpb_err_call(TPB_ERR_MPI, "MPI_Gatherv", "timelines", __FILE__, __LINE__);
    return TPB_OK;
}

/* Move every rank's marks onto rank 0's clock (rank 0; marks by position, clock samples by
 * world rank). */
static void correct_marks(const tpb_sweep_t *s, tpb_mark_t *all)
{
    int iters = s->o->iters;
    for (int r = 0; r < s->topo->size; r++) {
        int w = s->rank_of[r];
        const tpb_clock_sample_t *a = &s->sync0[w], *b = &s->sync1[w];
        for (int i = 0; i < iters; i++) {
            tpb_mark_t *m = &all[(size_t)r * iters + i];
            m->c0 = tpb_clock_correct(a, b, m->c0);
            m->c1 = tpb_clock_correct(a, b, m->c1);
            m->x1 = tpb_clock_correct(a, b, m->x1);
        }
    }
}

/* A new clock sample per rank, kept only where it is about as certain as the start's: a
 * sample taken in a noisy moment (RTT far above the start's) would bend the drift
 * correction by its own error, so the previous one stays (collective; rank 0 keeps). */
static tpb_status_t resync(tpb_sweep_t *s)
{
    int size = s->real_topo->size, root = s->real_topo->rank == 0;
    tpb_clock_sample_t *fresh = root ? calloc((size_t)size, sizeof(*fresh)) : NULL;
    tpb_status_t st = root && !fresh ? tpb_err_set(TPB_ERR_NOMEM, "out of memory") : TPB_OK;
    TPB_CHECK_RET(tpb_agree(s->real_world, st));
    st = tpb_clock_sync(s->real_world, s->clock, TPB_CLOCK_EXCHANGES, fresh);
    for (int r = 0; root && st == TPB_OK && r < size; r++)
        if (fresh[r].rtt_us <= TPB_CLOCK_RTT_SLACK * s->sync0[r].rtt_us + 20.0)
            s->sync1[r] = fresh[r];
    free(fresh);
    return st;
}

/* The identity of config c's result; rank 0 derives the rest. */
static void describe(const tpb_sweep_t *s, const tpb_point_t *c, const tpb_rank_info_t *infos,
                     tpb_result_t *res)
{
    memset(res, 0, sizeof(*res));
    res->id = s->nconfigs;
    res->backend = s->ops->name;
    res->world = s->topo->size;
    res->tp = c->tp;
    res->iters = s->o->iters;
    res->warmup = s->o->warmup;
    res->split = c->split;
    res->policy = c->policy;
    res->colcoll = s->o->col_collective;
    const tpb_split_ops_t *so = tpb_split_ops(c->split, s->o->col_collective);
    tpb_layer_desc_t d = {.split = c->split,
                          .colcoll = s->o->col_collective,
                          .m = c->shape->m,
                          .n = c->shape->n,
                          .k = c->shape->k,
                          .dtype = s->o->dtype,
                          .comm_only = c->shape->comm_only};
    res->coll = so->coll;
    res->comm_only = c->shape->comm_only;
    res->coll_bytes = so->coll_bytes(&d);
    res->m = c->shape->m;
    res->n = c->shape->n;
    res->k = c->shape->k;
    res->dtype = s->o->dtype;
    snprintf(res->shape_name, sizeof(res->shape_name), "%s", c->shape->name);
    res->speed_source = c->speeds ? c->speed_source : TPB_SPEEDS_NONE;
    res->info = infos;
    res->emulate_mode = s->o->emulate_mode;
    res->rounds = s->rounds;
    res->nrounds = c->policy == TPB_POLICY_ADAPTIVE ? s->nrounds : 0;
    res->round_shards = s->round_shards;
    res->placement = s->placement;
    res->rank_of = s->rank_of;
}

/* Measure config c on every rank; rank 0 reports it. */
static tpb_status_t run_config(tpb_sweep_t *s, const tpb_point_t *c)
{
    const tpb_options_t *o = s->o;
    int size = s->topo->size, root = world_rank(s) == 0;
    long shards[c->tp];
    tpb_rank_info_t info = {.max_err = NAN, .speed_spread = NAN, .emulate_achieved = NAN};
    tpb_layer_t *l = NULL;
    tpb_mark_t *raw = calloc((size_t)o->iters, sizeof(*raw));
    tpb_mark_t *all = root ? calloc((size_t)size * o->iters, sizeof(*all)) : NULL;
    tpb_rank_info_t *infos = root ? calloc((size_t)size, sizeof(*infos)) : NULL;
    tpb_status_t st = (!raw || (root && (!all || !infos)))
                          ? tpb_err_set(TPB_ERR_NOMEM, "no memory for the timelines")
                          : TPB_OK;
    if (st == TPB_OK) /* a stop request is honoured between configs, on every rank alike */
        st = tpb_signal_agree(s->world);
    if (st == TPB_OK)
        st = plan_shards(s, c, shards, &info);
    TPB_CHECK_GOTO(tpb_agree(s->world, st), st, out);
    tpb_layer_desc_t d = {.split = c->split,
                          .colcoll = o->col_collective,
                          .m = c->shape->m,
                          .n = c->shape->n,
                          .k = c->shape->k,
                          .dtype = o->dtype,
                          .tp = c->tp,
                          .group_rank = world_rank(s) % c->tp,
                          .shards = shards,
                          .seed = o->seed,
                          .comm_only = c->shape->comm_only};
    info.flop = tpb_layer_rank_flop(&d);
    info.mem = tpb_layer_bytes(&d);
    TPB_CHECK_GOTO(tpb_agree(s->world, tpb_layer_create(s->ops, s->be, c->comm, &d, &l)), st, out);
    info.peak_gflops = s->peak_gflops;
    if (!d.comm_only) {
        st = s->ops->emulation_probe(s->be, tpb_layer_gemm(l), &info.emulate_achieved);
        TPB_CHECK_GOTO(tpb_agree(s->world, st), st, out);
    }
    TPB_CHECK_GOTO(tpb_measure(s, c, &l, &d, raw), st, out);
    info.shard = (double)shards[d.group_rank]; /* the adaptive policy may have moved it */
    if (c->policy == TPB_POLICY_ADAPTIVE)
        info.fraction = info.shard / (double)tpb_split_total(c->shape, c->split);
    if (o->check && d.group_rank == 0)
        st = tpb_layer_check(l, &info.max_err);
    TPB_CHECK_GOTO(tpb_agree(s->world, st), st, out);
    TPB_CHECK_GOTO(gather(s, raw, &info, all, infos), st, out);
    TPB_CHECK_GOTO(resync(s), st, out);
    if (root) {
        tpb_result_t res;
        describe(s, c, infos, &res);
        correct_marks(s, all);
        st = tpb_record_config(&s->rec, &res, all);
        s->check_failed = s->rec.check_failed;
    }
    TPB_CHECK_GOTO(tpb_agree(s->world, st), st, out);
out:
    tpb_layer_destroy(l);
    free(raw);
    free(all);
    free(infos);
    return st;
}

/* ---- the loop ---- */

static void progress(tpb_sweep_t *s, const tpb_point_t *c)
{
    if (world_rank(s) != 0 || s->o->quiet)
        return;
    double now = tpb_clock_now_us(NULL);
    if (s->progress_at && now - s->progress_at < 5e6)
        return;
    if (!s->progress_at) { /* first call: start the clock, print from 5 s on */
        s->progress_at = now;
        return;
    }
    s->progress_at = now;
    fprintf(stderr, "tpbal: config %d of %d (tp %d, %s, %s, %ldx%ldx%ld)\n", s->nconfigs + 1,
            s->total_configs, c->tp, tpb_split_name(c->split), tpb_policy_name(c->policy),
            c->shape->m, c->shape->n, c->shape->k);
}

static void skip(tpb_sweep_t *s, const char *why)
{
    if (world_rank(s) == 0)
        tpb_record_skip(&s->rec, why);
}

/* Both policies of one (tp, shape, split). */
static tpb_status_t run_split(tpb_sweep_t *s, tpb_point_t *c)
{
    double speeds[c->tp];
    tpb_cal_speed_t cal[c->tp];
    unsigned pol = s->o->policies;
    c->speeds = NULL;
    c->cal = NULL;
    c->speed_source = TPB_SPEEDS_NONE;
    if (c->tp > 1 && (pol & (TPB_POLICY_WEIGHTED | TPB_POLICY_ADAPTIVE))) {
        long shards[c->tp];
        if (tpb_partition_even(tpb_split_total(c->shape, c->split), c->tp, s->o->granularity,
                               shards) != TPB_OK) {
            skip(s, tpb_err_msg());
            return TPB_OK;
        }
        TPB_CHECK_RET(tpb_signal_agree(s->world)); /* no calibration after a stop request */
        TPB_CHECK_RET(tpb_sweep_speeds(s, c, cal));
        for (int i = 0; i < c->tp; i++)
            speeds[i] = cal[i].gflops;
        c->speeds = speeds;
        c->cal = cal;
    }
    for (unsigned p = TPB_POLICY_EVEN; p <= TPB_POLICY_ADAPTIVE; p <<= 1) {
        if (!policy_runs(s, c->tp, (tpb_policy_t)p, c->split))
            continue;
        c->policy = (tpb_policy_t)p;
        progress(s, c);
        tpb_status_t st = run_config(s, c);
        if (st == TPB_ERR_INVALID && !s->fatal) { /* shape cannot be split this way */
            skip(s, tpb_err_msg());
            continue;
        }
        TPB_CHECK_RET(st);
        s->nconfigs++;
    }
    return TPB_OK;
}

static tpb_status_t run_tp(tpb_sweep_t *s, int tp)
{
    tpb_point_t c;
    memset(&c, 0, sizeof(c));
    c.tp = tp;
    if (MPI_Comm_split(s->world, world_rank(s) / tp, world_rank(s), &c.group) != MPI_SUCCESS)
        return tpb_err_call(TPB_ERR_MPI, "MPI_Comm_split", "TP groups", __FILE__, __LINE__);
    tpb_status_t st = tpb_agree(s->world, s->ops->comm_open(s->be, c.group, &c.comm));
    for (int i = 0; st == TPB_OK && i < s->o->nshapes; i++) {
        c.shape = &s->o->shapes[i];
        for (unsigned sp = TPB_SPLIT_ROW; st == TPB_OK && sp <= TPB_SPLIT_COL; sp <<= 1) {
            if (!(tpb_sweep_shape_splits(s, c.shape) & sp))
                continue;
            c.split = (tpb_split_t)sp;
            st = run_split(s, &c);
        }
    }
    if (c.comm)
        s->ops->comm_close(c.comm);
    MPI_Comm_free(&c.group);
    return st;
}

/* The world in placement p's order: a communicator, and a topology of positions. */
static tpb_status_t place(tpb_sweep_t *s, tpb_placement_t p)
{
    const tpb_topo_t *t = s->real_topo;
    int me = 0;
    tpb_placement_order(p, t->host_index, t->size, s->rank_of);
    while (s->rank_of[me] != t->rank)
        me++;
    tpb_topo_t *pt = &s->placed_topo;
    *pt = *t;
    pt->rank = me;
    pt->hosts = calloc((size_t)t->size, sizeof(*pt->hosts));
    pt->host_index = calloc((size_t)t->size, sizeof(int));
    if (!pt->hosts || !pt->host_index)
        return tpb_err_set(TPB_ERR_NOMEM, "out of memory for the placement of %d ranks", t->size);
    for (int q = 0; q < t->size; q++) {
        memcpy(pt->hosts[q], t->hosts[s->rank_of[q]], TPB_HOST_LEN);
        pt->host_index[q] = t->host_index[s->rank_of[q]];
    }
    if (MPI_Comm_split(s->real_world, 0, me, &s->world) != MPI_SUCCESS)
        return tpb_err_call(TPB_ERR_MPI, "MPI_Comm_split", "placement", __FILE__, __LINE__);
    s->topo = pt;
    s->placement = p;
    return TPB_OK;
}

static void unplace(tpb_sweep_t *s)
{
    if (s->world != s->real_world)
        MPI_Comm_free(&s->world);
    s->world = s->real_world;
    s->topo = s->real_topo;
    tpb_topo_free(&s->placed_topo);
}

/* Every TP degree in one placement. */
static tpb_status_t run_placement(tpb_sweep_t *s, tpb_placement_t p)
{
    tpb_status_t st = place(s, p);
    for (int t = 0; st == TPB_OK && t < s->o->ntp; t++) {
        int tp = s->o->tp[t];
        if (!tpb_sweep_tp_valid(s, tp)) {
            char why[128];
            snprintf(why, sizeof(why), "--tp %d does not divide the %d ranks", tp, s->topo->size);
            skip(s, why);
            continue;
        }
        if (tp == 1 && s->o->comm_only) {
            skip(s, "--comm-only --tp 1: a group of one rank has no collective");
            continue;
        }
        st = run_tp(s, tp);
    }
    unplace(s);
    return st;
}

tpb_status_t tpb_sweep_run(tpb_sweep_t *s)
{
    s->fatal = 0;
    s->total_configs = count_configs(s);
    for (unsigned p = TPB_PLACE_PACKED; p <= TPB_PLACE_SPREAD; p <<= 1)
        if (s->o->placements & p)
            TPB_CHECK_RET(run_placement(s, (tpb_placement_t)p));
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
                            .backend = s->ops->name,
                            .mpi_version = s->mpi_version,
                            .topo = s->topo,
                            .devices = s->devices,
                            .emulate = o->nemulate ? o->emulate : NULL,
                            .dtype = o->dtype,
                            .iters = o->iters,
                            .warmup = o->warmup,
                            .granularity = o->granularity,
                            .seed = o->seed,
                            .timeline = o->timeline,
                            .trace_iters = o->trace_iters,
                            .check = o->check,
                            .inject_delay_rank = o->inject_delay.rank,
                            .inject_clock_rank = o->inject_clock.rank,
                            .clock_exchanges = TPB_CLOCK_EXCHANGES,
                            .out_dir = o->out_dir,
                            .force = o->force,
                            .comm_only = o->comm_only,
                            .slurm = s->slurm,
                            .table = s->out};
}

tpb_status_t tpb_sweep_init(tpb_sweep_t *s)
{
    int size = s->topo->size, root = world_rank(s) == 0;
    s->real_world = s->world;
    s->real_topo = s->topo;
    s->placement = TPB_PLACE_PACKED;
    s->rank_of = malloc((size_t)size * sizeof(int));
    TPB_CHECK_RET(
        tpb_agree(s->world, s->rank_of ? TPB_OK : tpb_err_set(TPB_ERR_NOMEM, "out of memory")));
    for (int r = 0; r < size; r++)
        s->rank_of[r] = r;
    TPB_CHECK_RET(tpb_sweep_preflight(s));
    tpb_device_info_t mine;
    s->ops->info(s->be, &mine);
    s->peak_gflops = mine.peak_gflops;
    tpb_status_t st = TPB_OK;
    if (root) {
        s->devices = calloc((size_t)size, sizeof(*s->devices));
        s->sync0 = calloc((size_t)size, sizeof(*s->sync0));
        s->sync1 = calloc((size_t)size, sizeof(*s->sync1));
        if (!s->devices || !s->sync0 || !s->sync1)
            st = tpb_err_set(TPB_ERR_NOMEM, "out of memory for %d ranks", size);
        if (st == TPB_OK && s->o->calibration_file[0])
            st = tpb_caltable_load(s->o->calibration_file, &s->cal);
    }
    TPB_CHECK_RET(tpb_agree(s->world, st));
    if (MPI_Gather(&mine, sizeof(mine), MPI_BYTE, s->devices, sizeof(mine), MPI_BYTE, 0,
                   s->world) != MPI_SUCCESS)
        return tpb_err_call(TPB_ERR_MPI, "MPI_Gather", "device facts", __FILE__, __LINE__);
    TPB_CHECK_RET(tpb_clock_sync(s->world, s->clock, TPB_CLOCK_EXCHANGES, s->sync0));
    if (root) {
        int len;
        MPI_Get_library_version(s->mpi_version, &len);
        memcpy(s->sync1, s->sync0, (size_t)size * sizeof(*s->sync0));
        tpb_run_info_t info = run_info(s);
        tpb_record_init(&s->rec, &info, s->sync0, s->sync1);
        tpb_record_header(&s->rec);
    }
    return tpb_agree(s->world, st);
}

tpb_status_t tpb_sweep_finish(tpb_sweep_t *s)
{
    tpb_status_t st = TPB_OK;
    TPB_CHECK_RET(resync(s));
    if (world_rank(s) == 0) {
        tpb_record_summary(&s->rec);
        st = tpb_record_write(&s->rec, TPB_RUN_FINISHED);
    }
    return tpb_agree(s->world, st);
}

void tpb_sweep_close(tpb_sweep_t *s, tpb_status_t why)
{
    if (world_rank(s) != 0 || !s->rec.run.topo)
        return;
    tpb_run_status_t rs = why == TPB_ERR_TIMEOUT       ? TPB_RUN_TIMEOUT
                          : why == TPB_ERR_INTERRUPTED ? TPB_RUN_INTERRUPTED
                                                       : TPB_RUN_FAILED;
    char msg[1024];
    snprintf(msg, sizeof(msg), "%s", tpb_err_msg()); /* writing must not lose the message */
    tpb_record_write(&s->rec, rs);
    tpb_err_set(why, "%s", msg);
}

void tpb_sweep_free(tpb_sweep_t *s)
{
    if (world_rank(s) == 0)
        tpb_record_free(&s->rec);
    free(s->rounds);
    free(s->round_shards);
    free(s->rank_of);
    free(s->devices);
    free(s->sync0);
    free(s->sync1);
    tpb_caltable_free(&s->cal);
}
