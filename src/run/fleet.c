/*
 * fleet.c - --fleet: a short qualification of every rank, node and link (collective):
 *   1. every rank's GEMM rate at one shape in 5 rounds of a short calibration (its
 *      lock-step loop, every rank at once; the ranks of a node take turns where they share
 *      cores or a GPU); under --budget, 5 more rounds a look while a node's slowest rank is
 *      suspect and the budget allows (fleet_budget.c);
 *   2. every node's all-reduce over its own ranks (all nodes at once, or in turns where
 *      ranks share cores), bus bandwidth, in 5 rounds;
 *   3. every pair of neighbouring nodes (first-seen host order) over one rank each, a
 *      2-rank all-reduce of the message and of 8 bytes (even pairs, then odd ones), in the
 *      same 5 rounds,
 * gathered to rank 0 (record/fleet_out.c scores and writes them). A rank with nothing to
 * do in a phase sleeps at its end instead of spinning in MPI.
 */
#include "run/fleet.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/interval.h"
#include "base/partition.h"
#include "base/sequential.h"
#include "base/stats.h"
#include "base/stamp.h"
#include "run/agree.h"
#include "run/calibrate.h"
#include "run/coll.h"
#include "run/layer.h"
#include "run/orient.h"
#include "run/signals.h"

#define FLEET_REPS 10  /* timed collectives of each message a round (after 2 untimed) */
#define FLEET_ROUNDS 5 /* rounds of every rank's GEMMs */

/* The end of a phase: every rank of world, the ones that had nothing to do sleeping in 1 ms
 * steps rather than spinning in MPI (where ranks share cores, a spinning rank would take
 * the measured ones' time). The ranks agree on a stop here: TPB_ERR_INTERRUPTED on every
 * rank where one received a stop signal. */
static tpb_status_t phase_end(MPI_Comm world)
{
    MPI_Request req;
    int done = 0, sig = tpb_signal_received(), any = 0;
    TPB_MPI_RET(MPI_Iallreduce(&sig, &any, 1, MPI_INT, MPI_MAX, world, &req), "--fleet");
    while (!done) {
        TPB_MPI_RET(MPI_Test(&req, &done, MPI_STATUS_IGNORE), "--fleet");
        if (!done)
            nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    return tpb_signal_stopped(any);
}

/* The collective of `bytes` over comm (every rank of it), timed FLEET_REPS times after 2
 * untimed: the bus bandwidth (GB/s) at the median time, and that time. */
static tpb_status_t time_allreduce(tpb_device_t *dev, MPI_Comm comm, tpb_comm_t *c,
                                   const tpb_fleet_plan_t *fp, double bytes, double *bw,
                                   double *med_us)
{
    int t, r;
    MPI_Comm_size(comm, &t);
    MPI_Comm_rank(comm, &r);
    size_t es = tpb_dtype_out_size(fp->dtype);
    long n = (long)(bytes / (double)es) > t ? (long)(bytes / (double)es) : t;
    tpb_shape_t sh = {.m = 1, .n = n, .k = 1, .comm_only = 1};
    long shards[t];
    int warm = 2, iters = warm + FLEET_REPS;
    TPB_CHECK_RET(tpb_partition_even(tpb_split_total(&sh, TPB_SPLIT_ROW), t, 1, shards));
    tpb_layer_desc_t d = {.orient = tpb_orient_of(TPB_SPLIT_ROW),
                          .coll = &tpb_coll_allreduce, /* the row layer's */
                          .m = 1,
                          .n = n,
                          .k = 1,
                          .dtype = fp->dtype,
                          .tp = t,
                          .group_rank = r,
                          .shards = shards,
                          .seed = fp->seed,
                          .comm_only = 1,
                          .granularity = 1,
                          .marks = {.iters = (size_t)iters, .chunks = 0}};
    tpb_layer_t *l = NULL;
    double m[3 * iters], us[FLEET_REPS];
    tpb_status_t st = tpb_agree(comm, tpb_layer_create(dev, c, &d, &l));
    if (st == TPB_OK)
        st = tpb_dev_marks_prepare(dev, tpb_marks_count(&d.marks));
    for (int i = 0; i < iters && st == TPB_OK; i++)
        st = tpb_layer_iter(l, (size_t)i, 0.0, 1);
    if (st == TPB_OK)
        st = tpb_dev_marks_read(dev, (size_t)(3 * iters), m);
    st = tpb_agree(comm, st);
    if (st == TPB_OK) {
        for (int i = 0; i < FLEET_REPS; i++) /* x1 - c0: the collective (no GEMM) */
            us[i] =
                m[tpb_marks_iter((size_t)(warm + i), 2)] - m[tpb_marks_iter((size_t)(warm + i), 0)];
        *med_us = tpb_stats_median(us, FLEET_REPS);
        *bw = d.coll->busbw_factor(t) * (double)n * (double)es / (*med_us * 1e3);
    }
    tpb_layer_destroy(l);
    return st;
}

/* A communicator of the fleet's (a node's ranks, or a link's two), opened once for all its
 * rounds: a backend's communicator (NCCL's) costs far more to make than a timed round. */
typedef struct {
    MPI_Comm mpi; /* MPI_COMM_NULL where this rank is not in one */
    tpb_comm_t *c;
} fleet_comm_t;

/* Split world by color (MPI_UNDEFINED: not in one) and open its communicator (collective
 * over world, agreed). */
static tpb_status_t fleet_comm_open(tpb_device_t *dev, MPI_Comm world, int rank, int color,
                                    fleet_comm_t *f)
{
    f->mpi = MPI_COMM_NULL;
    f->c = NULL;
    TPB_MPI_RET(MPI_Comm_split(world, color, rank, &f->mpi), "--fleet");
    tpb_status_t st = TPB_OK;
    if (f->mpi != MPI_COMM_NULL)
        st = tpb_dev_comm_open(dev, f->mpi, &f->c);
    return tpb_agree(world, st);
}

static void fleet_comm_close(fleet_comm_t *f)
{
    tpb_comm_close(f->c);
    if (f->mpi != MPI_COMM_NULL)
        MPI_Comm_free(&f->mpi);
    f->c = NULL;
}

/* 1. Round i of every rank's GEMM: a short calibration in `phases` turns by node-local rank
 * (1: all at once), its rate into mine[i]. */
static tpb_status_t gemm_round(tpb_device_t *dev, MPI_Comm world, const tpb_topo_t *topo,
                               const tpb_fleet_plan_t *fp, int phases, double *rate)
{
    tpb_gemm_shape_t g = {fp->shape.m, fp->shape.n, fp->shape.k, fp->dtype, NULL}; /* a fill */
    tpb_cal_policy_t pol = {
        .target_spread = 0.05, .min_samples = 8, .max_samples = 40, .budget_us = 0.25e6};
    for (int j = 0; j < phases; j++) {
        MPI_Comm cj;
        int in = phases == 1 || topo->local_rank == j;
        tpb_status_t st = TPB_OK;
        TPB_MPI_RET(MPI_Comm_split(world, in ? 0 : MPI_UNDEFINED, topo->rank, &cj), "--fleet");
        if (in) {
            tpb_cal_speed_t sp = {0};
            st = tpb_calibrate_gemm(dev, cj, &g, &pol, &sp);
            *rate = sp.speed;
            MPI_Comm_free(&cj);
        }
        TPB_CHECK_RET(phase_end(world));
        TPB_CHECK_RET(tpb_agree(world, st));
    }
    return TPB_OK;
}

/* This rank's link in phase parity (node i's first rank with node i + 1's, even links then
 * odd ones), or MPI_UNDEFINED. */
static int link_of(const tpb_topo_t *topo, int parity)
{
    int node = topo->host_index[topo->rank];
    int link = node % 2 == parity ? node : node - 1;
    return topo->local_rank == 0 && link >= 0 && link + 1 < topo->nhosts ? link : MPI_UNDEFINED;
}

/* 3. A round of every link, even links then odd ones: the lower node's rank keeps the
 * bandwidth and the 8-byte time. */
static tpb_status_t link_round(tpb_device_t *dev, MPI_Comm world, const tpb_topo_t *topo,
                               const tpb_fleet_plan_t *fp, fleet_comm_t *links, double bytes,
                               double *bw, double *alpha)
{
    for (int parity = 0; parity < 2; parity++) {
        fleet_comm_t *f = &links[parity];
        tpb_status_t st = TPB_OK;
        if (f->c) {
            double b = NAN, us = NAN, small = NAN, a = NAN;
            st = time_allreduce(dev, f->mpi, f->c, fp, bytes, &b, &us);
            if (st == TPB_OK)
                st = time_allreduce(dev, f->mpi, f->c, fp, 8.0, &small, &a);
            if (link_of(topo, parity) == topo->host_index[topo->rank]) { /* the lower node's */
                *bw = b;
                *alpha = a;
            }
        }
        TPB_CHECK_RET(phase_end(world));
        TPB_CHECK_RET(tpb_agree(world, st));
    }
    return TPB_OK;
}

/* 2. A round of every node's ranks' all-reduce: all nodes at once, or one node after another
 * where ranks share cores (the nodes' ranks would take each other's time). */
static tpb_status_t coll_round(tpb_device_t *dev, MPI_Comm world, const tpb_topo_t *topo,
                               const tpb_fleet_plan_t *fp, fleet_comm_t *f, double bytes, int turns,
                               double *bw)
{
    int node = topo->host_index[topo->rank];
    for (int j = 0; j < (turns ? topo->nhosts : 1); j++) {
        tpb_status_t st = TPB_OK;
        if (f->c && (!turns || node == j)) {
            double us;
            st = time_allreduce(dev, f->mpi, f->c, fp, bytes, bw, &us);
        }
        TPB_CHECK_RET(phase_end(world));
        TPB_CHECK_RET(tpb_agree(world, st));
    }
    return TPB_OK;
}

/* The collective rounds over communicators opened once: the node's and the two links':
 * mine[3 R] (the node's all-reduce, the link's bandwidth, its 8-byte time, R each). */
static tpb_status_t coll_rounds(tpb_device_t *dev, MPI_Comm world, const tpb_topo_t *topo,
                                const tpb_fleet_plan_t *fp, double bytes, int turns, double *mine)
{
    enum { R = FLEET_ROUNDS };
    fleet_comm_t node = {MPI_COMM_NULL, NULL},
                 links[2] = {{MPI_COMM_NULL, NULL}, {MPI_COMM_NULL, NULL}};
    int color = topo->local_size > 1 ? topo->host_index[topo->rank] : MPI_UNDEFINED;
    double coll = NAN;
    tpb_status_t st = fleet_comm_open(dev, world, topo->rank, color, &node);
    for (int parity = 0; parity < 2 && st == TPB_OK; parity++)
        st = fleet_comm_open(dev, world, topo->rank, link_of(topo, parity), &links[parity]);
    for (int i = 0; i < R && st == TPB_OK; i++) {
        st = coll_round(dev, world, topo, fp, &node, bytes, turns, &coll);
        if (st == TPB_OK && topo->local_rank == 0)
            mine[i] = coll;
        if (st == TPB_OK)
            st = link_round(dev, world, topo, fp, links, bytes, &mine[R + i], &mine[2 * R + i]);
    }
    fleet_comm_close(&links[1]);
    fleet_comm_close(&links[0]);
    fleet_comm_close(&node);
    return st;
}

/* Per rank: its g rounds' GEMM rates, then R rounds' node all-reduce (node-local rank 0
 * only), link bandwidths and 8-byte times (the lower node's first rank), then the device's
 * peak and the rank's cohort. */
#define FLEET_FIGS(g) ((g) + 3 * FLEET_ROUNDS + 2)

/* 1. Every rank's GEMM rounds: the planned R, then under --budget R more a look while rank 0
 * finds a node suspect for its GEMM and the budget allows (fleet_budget.c). rate[R x the
 * most looks]; *rounds: the rounds done. */
static tpb_status_t gemm_rounds(tpb_device_t *dev, MPI_Comm world, const tpb_topo_t *topo,
                                const tpb_fleet_plan_t *fp, int phases, int cohort, double *rate,
                                int *rounds, tpb_fleet_budget_t *b)
{
    enum { R = FLEET_ROUNDS };
    int more = 1;
    for (*rounds = 0, b->looks = 0; more; b->looks++) {
        double t0 = MPI_Wtime();
        for (int i = 0; i < R; i++)
            TPB_CHECK_RET(gemm_round(dev, world, topo, fp, phases, &rate[*rounds + i]));
        *rounds += R;
        double took = MPI_Wtime() - t0;
        if (b->looks > 0)
            b->spent_s += took;
        more = 0;
        if (b->budget_s > 0.0)
            TPB_CHECK_RET(tpb_fleet_budget_more(world, topo, fp, rate, *rounds, cohort,
                                                b->looks + 1, took, b, &more));
    }
    return TPB_OK;
}

/* The fleet's buffers fit on every rank (collective), before anything is measured: the GEMM's
 * operands, and the all-reduce's send and receive buffers with room for a staging copy. */
static tpb_status_t fits(tpb_device_t *dev, MPI_Comm world, const tpb_topo_t *topo,
                         const tpb_fleet_plan_t *fp, double bytes)
{
    const tpb_shape_t *sh = &fp->shape;
    double in = (double)tpb_dtype_in_size(fp->dtype), out = (double)tpb_dtype_out_size(fp->dtype);
    double gemm = in * ((double)sh->m * sh->k + (double)sh->k * sh->n) + out * sh->m * sh->n;
    double need = fmax(gemm, 3.0 * bytes), avail = 0.0;
    tpb_status_t st = tpb_dev_mem_free(dev, &avail);
    if (st == TPB_OK && need > 0.9 * avail)
        st = tpb_err_set(TPB_ERR_NOMEM,
                         "--fleet needs about %.3g GiB on rank %d (%s) but %.3g GiB are free: "
                         "use a smaller --fleet-bytes or --shape",
                         need / 1073741824.0, topo->rank, topo->host, avail / 1073741824.0);
    return tpb_agree(world, st);
}

tpb_status_t tpb_fleet_measure(tpb_device_t *dev, MPI_Comm world, const tpb_topo_t *topo,
                               const tpb_fleet_plan_t *fp, tpb_fleet_data_t *d)
{
    double bytes = fp->bytes;
    enum { R = FLEET_ROUNDS };
    tpb_stamp(TPB_PHASE_FLEET);
    TPB_CHECK_RET(fits(dev, world, topo, fp, bytes));
    tpb_device_info_t info;
    tpb_dev_info(dev, &info);
    int share = info.sharing > 1 || info.ranks_on_device > 1, phases = 1;
    TPB_MPI_RET(MPI_Allreduce(MPI_IN_PLACE, &share, 1, MPI_INT, MPI_MAX, world), "--fleet");
    if (share)
        TPB_MPI_RET(MPI_Allreduce(&topo->local_size, &phases, 1, MPI_INT, MPI_MAX, world),
                    "--fleet");
    int cohort = share ? topo->local_rank : 0, g = 0;
    double mine[FLEET_FIGS(R * TPB_SEQ_LOOKS)];
    for (size_t i = 0; i < sizeof(mine) / sizeof(mine[0]); i++)
        mine[i] = NAN;
    d->budget = (tpb_fleet_budget_t){.budget_s = fp->budget_s};
    TPB_CHECK_RET(gemm_rounds(dev, world, topo, fp, phases, cohort, mine, &g, &d->budget));
    TPB_CHECK_RET(coll_rounds(dev, world, topo, fp, bytes, share, mine + g));
    mine[g + 3 * R] = info.peak_gflops;
    mine[g + 3 * R + 1] = cohort;
    double *all =
        topo->rank == 0 ? malloc((size_t)topo->size * FLEET_FIGS(g) * sizeof(double)) : NULL;
    tpb_status_t st =
        topo->rank == 0 && !all ? tpb_err_set(TPB_ERR_NOMEM, "--fleet: out of memory") : TPB_OK;
    TPB_CHECK_RET(tpb_agree(world, st));
    TPB_MPI_RET(
        MPI_Gather(mine, FLEET_FIGS(g), MPI_DOUBLE, all, FLEET_FIGS(g), MPI_DOUBLE, 0, world),
        "--fleet");
    if (topo->rank == 0)
        st = tpb_fleet_fill(topo, all, g, d);
    free(all);
    d->turns = share;
    d->gemm_conf = fp->budget_s > 0.0 ? tpb_seq_conf(0.05, d->budget.looks) : 0.95;
    return tpb_agree(world, st);
}

tpb_status_t tpb_fleet_fill(const tpb_topo_t *topo, const double *all, int g, tpb_fleet_data_t *d)
{
    enum { R = FLEET_ROUNDS };
    int w = topo->size, h = topo->nhosts, nl = h > 1 ? h - 1 : 1;
    d->world = w;
    d->nnodes = h;
    d->rounds = R;
    d->gemm_rounds = g;
    d->hosts = (const char(*)[72])topo->hosts;
    d->node_of = topo->host_index;
    d->gemm = malloc((size_t)w * (size_t)g * sizeof(double));
    d->cohort = calloc((size_t)w, sizeof(int));
    d->peak = calloc((size_t)w, sizeof(double));
    d->coll = malloc((size_t)h * R * sizeof(double));
    d->link = malloc((size_t)nl * R * sizeof(double));
    d->link_alpha_us = malloc((size_t)nl * sizeof(double));
    if (!d->gemm || !d->cohort || !d->peak || !d->coll || !d->link || !d->link_alpha_us)
        return tpb_err_set(TPB_ERR_NOMEM, "--fleet: out of memory for %d ranks", w);
    for (size_t i = 0; i < (size_t)h * R; i++)
        d->coll[i] = NAN;
    for (size_t i = 0; i < (size_t)nl * R; i++)
        d->link[i] = NAN;
    for (int j = 0; j < nl; j++)
        d->link_alpha_us[j] = NAN;
    for (int r = 0; r < w; r++) {
        const double *v = all + (size_t)r * FLEET_FIGS(g), *c = v + g;
        int node = topo->host_index[r];
        memcpy(d->gemm + (size_t)r * g, v, (size_t)g * sizeof(double));
        if (isfinite(c[0]))
            memcpy(d->coll + (size_t)node * R, c, R * sizeof(double));
        if (isfinite(c[R]) && node + 1 < h) {
            memcpy(d->link + (size_t)node * R, c + R, R * sizeof(double));
            d->link_alpha_us[node] = tpb_fleet_median_of(c + 2 * R, R);
        }
        d->peak[r] = c[3 * R];
        d->cohort[r] = (int)c[3 * R + 1];
    }
    return TPB_OK;
}

void tpb_fleet_free(tpb_fleet_data_t *d)
{
    free(d->gemm);
    free(d->cohort);
    free(d->peak);
    free(d->coll);
    free(d->link);
    free(d->link_alpha_us);
    memset(d, 0, sizeof(*d));
}
