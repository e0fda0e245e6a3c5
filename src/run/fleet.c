/*
 * fleet.c - --fleet: a short qualification of every rank, node and link (collective):
 *   1. every rank's GEMM rate at one shape in 5 rounds of a short calibration (its
 *      lock-step loop, every rank at once; the ranks of a node take turns where they share
 *      cores or a GPU), the median of the rounds with its interval from them;
 *   2. every node's all-reduce over its own ranks (all nodes at once, or in turns where
 *      ranks share cores), bus bandwidth;
 *   3. every pair of neighbouring nodes (first-seen host order) over one rank each, a
 *      2-rank all-reduce of the message and of 8 bytes (even pairs, then odd ones),
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
#include "base/stats.h"
#include "run/agree.h"
#include "run/calibrate.h"
#include "run/coll.h"
#include "run/layer.h"
#include "run/orient.h"

#define FLEET_REPS 20  /* timed collectives of each message (after 2 untimed) */
#define FLEET_ROUNDS 5 /* rounds of every rank's GEMMs */

/* The end of a phase: every rank of world, the ones that had nothing to do sleeping in 1 ms
 * steps rather than spinning in MPI (where ranks share cores, a spinning rank would take
 * the measured ones' time). */
static tpb_status_t phase_end(MPI_Comm world)
{
    MPI_Request req;
    int done = 0;
    TPB_MPI_RET(MPI_Ibarrier(world, &req), "--fleet");
    while (!done) {
        TPB_MPI_RET(MPI_Test(&req, &done, MPI_STATUS_IGNORE), "--fleet");
        if (!done)
            nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    return TPB_OK;
}

/* The collective of `bytes` over comm (every rank of it), timed FLEET_REPS times: the median
 * bus bandwidth (GB/s) and the half-width of its interval. */
static tpb_status_t time_allreduce(tpb_device_t *dev, MPI_Comm comm, const tpb_options_t *o,
                                   double bytes, tpb_fleet_fig_t *bw, double *med_us)
{
    int t, r;
    MPI_Comm_size(comm, &t);
    MPI_Comm_rank(comm, &r);
    size_t es = tpb_dtype_out_size(o->dtype);
    tpb_shape_t sh = {.m = 1, .n = (long)(bytes / (double)es) > t ? (long)(bytes / (double)es) : t,
                      .k = 1, .comm_only = 1};
    long shards[t];
    int warm = 2, n = warm + FLEET_REPS;
    TPB_CHECK_RET(tpb_partition_even(tpb_split_total(&sh, TPB_SPLIT_ROW), t, 1, shards));
    tpb_layer_desc_t d = {.orient = tpb_orient_of(TPB_SPLIT_ROW),
                          .coll = tpb_coll_of(TPB_SPLIT_ROW, o->col_collective, TPB_SEQPAR_OFF),
                          .m = 1, .n = sh.n, .k = 1, .dtype = o->dtype, .tp = t,
                          .group_rank = r, .shards = shards, .seed = o->seed, .comm_only = 1,
                          .granularity = 1, .marks = {.iters = (size_t)n, .chunks = 0}};
    tpb_comm_t *c = NULL;
    tpb_layer_t *l = NULL;
    double m[3 * n], us[FLEET_REPS];
    tpb_status_t st = tpb_agree(comm, tpb_dev_comm_open(dev, comm, &c));
    if (st == TPB_OK)
        st = tpb_agree(comm, tpb_layer_create(dev, c, &d, &l));
    if (st == TPB_OK)
        st = tpb_dev_marks_prepare(dev, tpb_marks_count(&d.marks));
    for (int i = 0; i < n && st == TPB_OK; i++)
        st = tpb_layer_iter(l, (size_t)i, 0.0, 1);
    if (st == TPB_OK)
        st = tpb_dev_marks_read(dev, (size_t)(3 * n), m);
    st = tpb_agree(comm, st);
    if (st == TPB_OK) {
        for (int i = 0; i < FLEET_REPS; i++) /* x1 - c0: the collective (no GEMM) */
            us[i] = m[tpb_marks_iter((size_t)(warm + i), 2)] -
                    m[tpb_marks_iter((size_t)(warm + i), 0)];
        *med_us = tpb_stats_median(us, FLEET_REPS);
        double factor = d.coll->busbw_factor(t);
        bw->value = factor * (double)sh.n * (double)es / (*med_us * 1e3);
        bw->half = tpb_interval_median_half(us, FLEET_REPS);
    }
    tpb_layer_destroy(l);
    if (c)
        tpb_comm_close(c);
    return st;
}

/* 1. Every rank's GEMM in FLEET_ROUNDS rounds, each a short calibration in `phases` turns
 * by node-local rank (1: all at once): the median of the rounds' rates, and the interval of
 * that median from the rounds (a vCPU or a GPU slowed for a second moves one round, not the
 * rate; a rank slow in every round is slow). */
static tpb_status_t gemm_rates(tpb_device_t *dev, MPI_Comm world, const tpb_topo_t *topo,
                               const tpb_options_t *o, int phases, double *mine)
{
    tpb_gemm_shape_t g = {o->shapes[0].m, o->shapes[0].n, o->shapes[0].k, o->dtype};
    tpb_cal_policy_t pol = {.target_spread = 0.05, .min_samples = 8, .max_samples = 40,
                            .budget_us = 0.25e6};
    double t[FLEET_ROUNDS];
    tpb_status_t st = TPB_OK;
    for (int i = 0; i < FLEET_ROUNDS; i++)
        for (int j = 0; j < phases && st == TPB_OK; j++) {
            MPI_Comm cj;
            int in = phases == 1 || topo->local_rank == j;
            TPB_MPI_RET(MPI_Comm_split(world, in ? 0 : MPI_UNDEFINED, topo->rank, &cj),
                        "--fleet");
            if (in) {
                tpb_cal_speed_t sp = {0};
                st = tpb_calibrate_gemm(dev, cj, &g, &pol, &sp);
                t[i] = 1.0 / sp.speed; /* a time: the intervals are of times */
                MPI_Comm_free(&cj);
            }
            TPB_CHECK_RET(phase_end(world));
            st = tpb_agree(world, st);
        }
    if (st == TPB_OK) {
        mine[0] = 1.0 / tpb_stats_median(t, FLEET_ROUNDS);
        mine[1] = tpb_interval_median_half(t, FLEET_ROUNDS);
    }
    return st;
}

/* 3. Link i (node i's first rank with node i + 1's), even links then odd ones. */
static tpb_status_t links(tpb_device_t *dev, MPI_Comm world, const tpb_topo_t *topo,
                          const tpb_options_t *o, double bytes, double *mine)
{
    int node = topo->host_index[topo->rank];
    for (int parity = 0; parity < 2; parity++) {
        /* the link this rank serves in this phase: node's own (to node + 1) or node - 1's */
        int link = node % 2 == parity ? node : node - 1;
        int in = topo->local_rank == 0 && link >= 0 && link + 1 < topo->nhosts;
        MPI_Comm c;
        TPB_MPI_RET(MPI_Comm_split(world, in ? link : MPI_UNDEFINED, topo->rank, &c), "--fleet");
        tpb_status_t st = TPB_OK;
        if (in) {
            tpb_fleet_fig_t bw = {NAN, NAN}, small = {NAN, NAN};
            double us = NAN, alpha = NAN;
            st = time_allreduce(dev, c, o, bytes, &bw, &us);
            if (st == TPB_OK)
                st = time_allreduce(dev, c, o, 8.0, &small, &alpha);
            if (link == node) { /* the lower node's rank reports it */
                mine[2] = bw.value;
                mine[3] = bw.half;
                mine[4] = alpha;
            }
            MPI_Comm_free(&c);
        }
        TPB_CHECK_RET(phase_end(world));
        TPB_CHECK_RET(tpb_agree(world, st));
    }
    return TPB_OK;
}

/* 2. Every node's ranks' all-reduce: all nodes at once, or one node after another where
 * ranks share cores (the nodes' ranks would take each other's time). */
static tpb_status_t node_colls(tpb_device_t *dev, MPI_Comm world, const tpb_topo_t *topo,
                               const tpb_options_t *o, double bytes, int turns, double *mine)
{
    int node = topo->host_index[topo->rank];
    for (int j = 0; j < (turns ? topo->nhosts : 1); j++) {
        int in = topo->local_size > 1 && (!turns || node == j);
        MPI_Comm c;
        TPB_MPI_RET(MPI_Comm_split(world, in ? node : MPI_UNDEFINED, topo->rank, &c), "--fleet");
        tpb_status_t st = TPB_OK;
        if (in) {
            tpb_fleet_fig_t bw = {NAN, NAN};
            double us;
            st = time_allreduce(dev, c, o, bytes, &bw, &us);
            mine[5] = bw.value;
            mine[6] = bw.half;
            MPI_Comm_free(&c);
        }
        TPB_CHECK_RET(phase_end(world));
        TPB_CHECK_RET(tpb_agree(world, st));
    }
    return TPB_OK;
}

tpb_status_t tpb_fleet_measure(tpb_device_t *dev, MPI_Comm world, const tpb_topo_t *topo,
                               const tpb_options_t *o, double bytes, tpb_fleet_data_t *d)
{
    enum { F = 8 }; /* per rank: rate, half, link bw, half, alpha, coll bw, half, peak */
    tpb_device_info_t info;
    tpb_dev_info(dev, &info);
    int share = info.sharing > 1 || info.ranks_on_device > 1, phases = 1;
    TPB_MPI_RET(MPI_Allreduce(MPI_IN_PLACE, &share, 1, MPI_INT, MPI_MAX, world), "--fleet");
    if (share)
        TPB_MPI_RET(MPI_Allreduce(&topo->local_size, &phases, 1, MPI_INT, MPI_MAX, world),
                    "--fleet");
    double mine[F] = {NAN, NAN, NAN, NAN, NAN, NAN, NAN, info.peak_gflops};
    TPB_CHECK_RET(gemm_rates(dev, world, topo, o, phases, mine));
    TPB_CHECK_RET(node_colls(dev, world, topo, o, bytes, share, mine));
    TPB_CHECK_RET(links(dev, world, topo, o, bytes, mine));
    tpb_status_t st;
    double *all = topo->rank == 0 ? malloc((size_t)topo->size * F * sizeof(double)) : NULL;
    st = topo->rank == 0 && !all ? tpb_err_set(TPB_ERR_NOMEM, "--fleet: out of memory") : TPB_OK;
    TPB_CHECK_RET(tpb_agree(world, st));
    TPB_MPI_RET(MPI_Gather(mine, F, MPI_DOUBLE, all, F, MPI_DOUBLE, 0, world), "--fleet");
    if (topo->rank == 0)
        st = tpb_fleet_fill(topo, all, F, d);
    free(all);
    d->turns = share;
    return tpb_agree(world, st);
}

tpb_status_t tpb_fleet_fill(const tpb_topo_t *topo, const double *all, int f, tpb_fleet_data_t *d)
{
    int w = topo->size, h = topo->nhosts;
    d->world = w;
    d->nnodes = h;
    d->hosts = (const char(*)[72])topo->hosts;
    d->node_of = topo->host_index;
    d->gemm = calloc((size_t)w, sizeof(*d->gemm));
    d->peak = calloc((size_t)w, sizeof(double));
    d->coll = calloc((size_t)h, sizeof(*d->coll));
    d->link = calloc((size_t)(h > 1 ? h - 1 : 1), sizeof(*d->link));
    d->link_alpha_us = calloc((size_t)(h > 1 ? h - 1 : 1), sizeof(double));
    if (!d->gemm || !d->peak || !d->coll || !d->link || !d->link_alpha_us)
        return tpb_err_set(TPB_ERR_NOMEM, "--fleet: out of memory for %d ranks", w);
    for (int j = 0; j < h; j++)
        d->coll[j] = (tpb_fleet_fig_t){NAN, NAN};
    for (int j = 0; j + 1 < h; j++) {
        d->link[j] = (tpb_fleet_fig_t){NAN, NAN};
        d->link_alpha_us[j] = NAN;
    }
    for (int r = 0; r < w; r++) {
        const double *v = all + (size_t)r * (size_t)f;
        int node = topo->host_index[r];
        d->gemm[r] = (tpb_fleet_fig_t){v[0], v[1]};
        d->peak[r] = v[7];
        if (isfinite(v[2]) && node + 1 < h) {
            d->link[node] = (tpb_fleet_fig_t){v[2], v[3]};
            d->link_alpha_us[node] = v[4];
        }
        if (isfinite(v[5]))
            d->coll[node] = (tpb_fleet_fig_t){v[5], v[6]};
    }
    return TPB_OK;
}

void tpb_fleet_free(tpb_fleet_data_t *d)
{
    free(d->gemm);
    free(d->peak);
    free(d->coll);
    free(d->link);
    free(d->link_alpha_us);
    memset(d, 0, sizeof(*d));
}
