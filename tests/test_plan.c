/* test_plan.c - one plan per config (run/plan.h) and the split table's collectives. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/options.h"
#include "run/plan.h"
#include "run/coll.h"
#include "run/estimate.h"
#include "run/layer.h"
#include "base/rng.h"
#include "run/orient.h"
#include "tpb_test.h"

#define TOL 1e-12

static tpb_options_t o;
static tpb_plan_list_t list;
static char host_names[8][TPB_HOST_LEN];
static int host_index[8];

/* Options of a command line for a world of `world` ranks on `nhosts` hosts, planned as
 * world rank `rank` sees them. */
static tpb_status_t plan(const char *line, int world, int nhosts, int rank)
{
    char buf[1024], *argv[64];
    int argc = 0;
    snprintf(buf, sizeof(buf), "tpbal %s", line);
    for (char *t = strtok(buf, " "); t && argc < 63; t = strtok(NULL, " "))
        argv[argc++] = t;
    argv[argc] = NULL;
    tpb_plans_free(&list);
    tpb_options_free(&o);
    tpb_options_init(&o);
    ck_assert_int_eq(tpb_options_parse(&o, argc, argv), TPB_OK);
    ck_assert_int_eq(tpb_options_resolve(&o, world, &tpb_backend_host), TPB_OK);
    for (int r = 0; r < world; r++) {
        snprintf(host_names[r], TPB_HOST_LEN, "node%d", r * nhosts / world);
        host_index[r] = r * nhosts / world;
    }
    tpb_topo_t topo = {.rank = rank,
                       .size = world,
                       .hosts = host_names,
                       .host_index = host_index,
                       .nhosts = nhosts};
    return tpb_plans_build(&o, &topo, &list);
}

START_TEST(busbw_factors_beside_their_collectives)
{
    /* nccl-tests: all-reduce 2(t-1)/t, all-gather and reduce-scatter (t-1)/t */
    ck_assert_double_eq_tol(tpb_coll_allreduce.busbw_factor(8), 1.75, TOL);
    ck_assert_double_eq_tol(tpb_coll_allgather.busbw_factor(4), 0.75, TOL);
    ck_assert_double_eq_tol(tpb_coll_allgather_x.busbw_factor(4), 0.75, TOL);
    ck_assert_double_eq_tol(tpb_coll_reduce_scatter.busbw_factor(8), 0.875, TOL);
    ck_assert_double_eq_tol(tpb_coll_allreduce.busbw_factor(1), 0.0, TOL);
    ck_assert_int_eq(tpb_coll_allreduce.kind, TPB_COLL_ALLREDUCE);
    ck_assert_int_eq(tpb_coll_allgather.kind, TPB_COLL_ALLGATHER);
    ck_assert_int_eq(tpb_coll_reduce_scatter.kind, TPB_COLL_REDUCE_SCATTER);
    /* which collective a layer runs: --col-collective, sequence parallelism */
    ck_assert_ptr_eq(tpb_coll_of(TPB_SPLIT_ROW, TPB_COLL_ALLGATHER, TPB_SEQPAR_OFF),
                     &tpb_coll_allreduce);
    ck_assert_ptr_eq(tpb_coll_of(TPB_SPLIT_COL, TPB_COLL_ALLREDUCE, TPB_SEQPAR_OFF),
                     &tpb_coll_allreduce);
    ck_assert_ptr_eq(tpb_coll_of(TPB_SPLIT_COL, TPB_COLL_ALLGATHER, TPB_SEQPAR_OFF),
                     &tpb_coll_allgather);
    ck_assert_ptr_eq(tpb_coll_of(TPB_SPLIT_ROW, TPB_COLL_ALLGATHER, TPB_SEQPAR_ON),
                     &tpb_coll_reduce_scatter);
    ck_assert_ptr_eq(tpb_coll_of(TPB_SPLIT_COL, TPB_COLL_ALLREDUCE, TPB_SEQPAR_ON),
                     &tpb_coll_allgather_x);
    ck_assert_ptr_eq(tpb_orient_of(TPB_SPLIT_ROW), &tpb_orient_row);
    ck_assert_ptr_eq(tpb_orient_of(TPB_SPLIT_COL), &tpb_orient_col);
}
END_TEST

/* Sequence parallelism: M's rows split evenly, chunk by chunk; S and the buffers. */
START_TEST(sequence_parallel_bytes_and_rows)
{
    long shards[4] = {32, 32, 32, 32};
    tpb_layer_desc_t d = {.orient = &tpb_orient_row,
                          .coll = &tpb_coll_reduce_scatter,
                          .m = 10,
                          .n = 128,
                          .k = 128,
                          .dtype = TPB_DTYPE_FP32,
                          .tp = 4,
                          .group_rank = 1,
                          .shards = shards};
    ck_assert_double_eq_tol(d.coll->bytes(&d), 10.0 * 128 * 4, TOL); /* the M x N input */
    ck_assert_double_eq_tol(d.coll->extra(&d, 32), 3.0 * 128, TOL);  /* rows 3..5 of 10 */
    d.chunks = 2; /* 5 + 5 rows: rank 0 holds 2 + 2, the others 1 + 1 */
    d.group_rank = 0;
    ck_assert_double_eq_tol(d.coll->extra(&d, 32), 4.0 * 128, TOL);
    d.group_rank = 3; /* 1 + 1 */
    ck_assert_double_eq_tol(d.coll->extra(&d, 32), 2.0 * 128, TOL);
    /* row + reduce-scatter: X[:, k_r], W shard, the M x N partial and its rows of Y */
    ck_assert_double_eq_tol(tpb_layer_bytes(&d), (10.0 * 32 + 32 * 128 + 10 * 128 + 2 * 128) * 4,
                            TOL);
    tpb_layer_desc_t c = d;
    c.orient = &tpb_orient_col;
    c.coll = &tpb_coll_allgather_x;
    c.chunks = 0;
    ck_assert_double_eq_tol(c.coll->bytes(&c), 10.0 * 128 * 4, TOL); /* the whole X */
    /* col + all-gather of X: X whole, W shard, Y_r, and its rows of X */
    ck_assert_double_eq_tol(tpb_layer_bytes(&c), (10.0 * 128 + 128 * 32 + 10 * 32 + 2 * 128) * 4,
                            TOL);
}
END_TEST

START_TEST(one_plan_per_config_in_sweep_order)
{
    ck_assert_int_eq(plan("--tp 1,2 --shape 64x128x96", 2, 1, 1), TPB_OK);
    /* tp 1: row even, col even (one policy at tp 1); tp 2: row even, row weighted, col ... */
    ck_assert_int_eq(list.n, 6);
    ck_assert_int_eq(list.measured, 6);
    const tpb_config_plan_t *p = &list.p[3];
    ck_assert_int_eq(p->tp, 2);
    ck_assert_int_eq(p->desc.orient->split, TPB_SPLIT_ROW);
    ck_assert_int_eq(p->policy, TPB_POLICY_WEIGHTED);
    ck_assert_int_eq(p->block, list.p[2].block);
    ck_assert_int_ne(p->block, list.p[4].block);
    ck_assert_int_eq(p->desc.group_rank, 1);
    ck_assert_ptr_eq(p->desc.shards, p->shards);
    /* no speeds yet: every plan holds its block's even shards (K = 96) */
    ck_assert_int_eq(p->shards[0] + p->shards[1], 96);
    ck_assert_int_eq(p->shards[0], 48);
    ck_assert(tpb_plan_needs_speeds(p));
    ck_assert(!tpb_plan_needs_speeds(&list.p[0])); /* tp 1 */
    /* this rank's memory: X 64x48 + W 48x128 + partial and Y 64x128, fp32 */
    ck_assert_double_eq_tol(p->mem_bytes, (64.0 * 48 + 48 * 128 + 2 * 64 * 128) * 4, TOL);
}
END_TEST

START_TEST(given_speeds_weigh_at_build)
{
    ck_assert_int_eq(plan("--tp 2 --split col --shape 8x300x16 --speeds 1,2", 2, 1, 0), TPB_OK);
    ck_assert_int_eq(list.n, 2);
    const tpb_config_plan_t *even = &list.p[0], *w = &list.p[1];
    ck_assert_int_eq(w->speed_source, TPB_SPEEDS_GIVEN);
    ck_assert_int_eq(w->shards[0], 100);
    ck_assert_int_eq(w->shards[1], 200);
    ck_assert_double_eq_tol(w->fractions[1], 2.0 / 3, TOL);
    ck_assert_int_eq(even->shards[0], 150); /* even keeps even shards, and records the speeds */
    ck_assert_double_eq_tol(even->speeds[1].speed, 2.0, TOL);
    ck_assert(!tpb_plan_needs_speeds(w));
}
END_TEST

START_TEST(spread_placement_positions)
{
    /* 4 ranks on 2 hosts (0,1 | 2,3): spread pairs one rank of each host */
    ck_assert_int_eq(plan("--tp 2 --policy even --split row --tp-placement packed,spread "
                          "--shape 8x8x8",
                          4, 2, 2),
                     TPB_OK);
    ck_assert_int_eq(list.n, 2);
    ck_assert_int_eq(list.p[0].placement, TPB_PLACE_PACKED);
    ck_assert_int_eq(list.p[0].position, 2);
    const int *spread = tpb_plans_rank_of(&list, TPB_PLACE_SPREAD);
    ck_assert_int_eq(spread[list.p[1].position], 2);
    ck_assert_int_ne(host_index[spread[0]], host_index[spread[1]]);
}
END_TEST

START_TEST(skips_are_planned)
{
    ck_assert_int_eq(plan("--tp 1,3,2 --split col --shape 4x1x4 --policy even", 2, 1, 0), TPB_OK);
    /* tp 1: col even; tp 3: does not divide; tp 2: N = 1 cannot be split in two */
    ck_assert_int_eq(list.n, 3);
    ck_assert_int_eq(list.measured, 1);
    ck_assert(strstr(list.p[1].skip, "--tp 3 does not divide the 2 ranks"));
    ck_assert(strstr(list.p[2].skip, "cannot be split into 2 shards"));
}
END_TEST

START_TEST(speeds_set_once_per_block)
{
    ck_assert_int_eq(
        plan("--tp 2 --split row --shape 8x8x90 --policy even,weighted,adaptive", 2, 1, 1), TPB_OK);
    ck_assert_int_eq(list.n, 3);
    tpb_cal_speed_t s[2] = {{.speed = 20, .spread = 0.01, .samples = 8},
                            {.speed = 10, .spread = 0.02, .samples = 8}};
    ck_assert_int_eq(tpb_plans_set_speeds(&list, 0, TPB_SPEEDS_CALIBRATION, s), TPB_OK);
    ck_assert_int_eq(list.p[0].shards[0], 45); /* even stays even */
    ck_assert_int_eq(list.p[1].shards[0], 60); /* weighted and adaptive: 2:1 */
    ck_assert_int_eq(list.p[2].shards[1], 30);
    ck_assert_int_eq(list.p[2].speed_source, TPB_SPEEDS_CALIBRATION);
    /* the adaptive plan's fractions are its shards' (its rounds move them) */
    ck_assert_double_eq_tol(list.p[2].fractions[0], 60.0 / 90.0, TOL);
    /* an adaptive round hands on a new plan: its shards, fractions and memory need; the
     * plan it came from stays as it was */
    double before = list.p[2].mem_bytes;
    long moved[2] = {50, 40};
    tpb_config_plan_t next;
    ck_assert_int_eq(tpb_plan_reshard(&list.p[2], moved, &next), TPB_OK);
    ck_assert_int_eq(next.desc.shards[1], 40);
    ck_assert_double_eq_tol(next.fractions[1], 40.0 / 90.0, TOL);
    ck_assert_double_eq_tol(next.speeds[0].speed, 20.0, TOL);
    ck_assert(next.mem_bytes > before); /* rank 1's shard grew from 30 to 40 */
    ck_assert_int_eq(list.p[2].shards[1], 30);
    ck_assert_double_eq_tol(list.p[2].mem_bytes, before, TOL);
    tpb_plan_release(&next);
    /* speeds that cannot weigh: the weighted plans are skipped with the reason */
    ck_assert_int_eq(plan("--tp 2 --split row --shape 8x8x90", 2, 1, 0), TPB_OK);
    tpb_cal_speed_t bad[2] = {{.speed = INFINITY}, {.speed = 1.0}};
    ck_assert_int_eq(tpb_plans_set_speeds(&list, 0, TPB_SPEEDS_FILE, bad), TPB_OK);
    ck_assert(!list.p[0].skip[0]);
    ck_assert(strstr(list.p[1].skip, "speed of rank 0"));
}
END_TEST

START_TEST(memory_checked_once)
{
    ck_assert_int_eq(plan("--tp 1 --split row --shape 300x300x300", 1, 1, 0), TPB_OK);
    ck_assert_int_eq(tpb_plans_check_memory(&list, 1e12, 0), TPB_OK);
    ck_assert_int_eq(tpb_plans_check_memory(&list, 1000.0, 0), TPB_ERR_NOMEM);
    ck_assert(strstr(tpb_err_msg(), "shape 300x300x300 (fp32, tp 1, row) needs 1440000 bytes on "
                                    "rank 0 but 1000 are free"));
    ck_assert(strstr(tpb_err_msg(), "(nothing was measured or written)"));
}
END_TEST

/* The whole run's estimate (run/estimate.h) in its parts, by hand: 64x128x96 at TP 1 and 2,
 * 10 + 2 iterations (+1 untimed), 1 GFLOP/s, 1 GB/s, 10 us. */
START_TEST(estimate_by_hand)
{
    ck_assert_int_eq(plan("--tp 1,2 --shape 64x128x96 --iters 10 --warmup 2", 2, 1, 0), TPB_OK);
    tpb_est_rates_t r = {
        .gflops = 1.0, .busbw_gbs = 1.0, .alpha_us = 10.0, .iters = 10, .warmup = 2, .world = 2};
    tpb_estimate_t e;
    tpb_plans_estimate(&list, &r, &e);
    double full = 2.0 * 64 * 128 * 96, n = 13.0;
    /* tp 1: two configs of the whole layer; tp 2: four of half of it */
    ck_assert_double_eq_tol(e.gemm_s, n * (2 * full + 4 * full / 2) * 1e-9, 1e-12);
    /* tp 2: row all-reduce (factor 1) and col all-gather (1/2) of the 64x128 fp32 output,
     * two policies each */
    double s_bytes = 64.0 * 128 * 4;
    ck_assert_double_eq_tol(e.comm_s, n * 2 * (2 * 10e-6 + (1.0 + 0.5) * s_bytes * 1e-9), 1e-12);
    /* one calibration a weighted block (row, col): a warm-up, then to the 2 s budget */
    ck_assert_int_eq(e.calibrations, 2);
    double t = full / 2 * 1e-9;
    ck_assert_double_eq_tol(e.calib_s, 2 * (t + fmin(200 * t, fmax(8 * t, 2.0))), 1e-12);
    ck_assert_double_eq_tol(e.calib_least_s, 2 * 9 * t, 1e-12);
    /* a config's share each, and the shape's inputs drawn once: its largest buffers (TP 1's
     * whole layer; the other configs copy their shards out) */
    double most = 0.0;
    for (int i = 0; i < list.n; i++)
        most = fmax(most, list.p[i].mem_bytes);
    ck_assert_double_eq_tol(most, list.p[0].mem_bytes, 1e-12);
    ck_assert_double_eq_tol(e.setup_s, list.n * TPB_EST_CONFIG_S + most * TPB_EST_FILL_S_PER_BYTE,
                            1e-12);
    /* the launch: every pass but the start, and each pass's budget spent as the bound */
    double about, at_most;
    tpb_estimate_whole(&e, 3, 10.0, &about, &at_most);
    ck_assert_double_eq_tol(about, 3 * (e.total_s - TPB_EST_START_S) + TPB_EST_START_S, 1e-12);
    ck_assert_double_eq_tol(at_most, about + 30.0, 1e-12);
    tpb_estimate_whole(&e, 1, 0.0, &about, &at_most);
    ck_assert_double_eq_tol(about, e.total_s, 1e-12);
    ck_assert_double_eq_tol(at_most, e.total_s, 1e-12);
    ck_assert_double_eq_tol(e.total_s,
                            TPB_EST_START_S + e.gemm_s + e.comm_s + e.calib_s + e.setup_s, 1e-12);
    ck_assert_double_eq_tol(e.total_least_s, e.total_s - e.calib_s + e.calib_least_s, 1e-12);
    /* the ranks draw the inputs together on 4 CPUs: a quarter of one core's time */
    tpb_est_rates_t r4 = r;
    r4.draw_cpus = 4.0;
    tpb_estimate_t q;
    tpb_plans_estimate(&list, &r4, &q);
    ck_assert_double_eq_tol(
        q.setup_s, list.n * TPB_EST_CONFIG_S + most * TPB_EST_FILL_S_PER_BYTE / 4.0, 1e-12);
    ck_assert_double_eq_tol(q.gemm_s + q.comm_s + q.calib_s, e.gemm_s + e.comm_s + e.calib_s,
                            1e-12);
    /* a rank at half speed: the even configs wait for it, the weighted ones spread by speed */
    double slow[2] = {1.0, 0.5};
    r.emulate = slow;
    tpb_estimate_t h;
    tpb_plans_estimate(&list, &r, &h);
    ck_assert_double_eq_tol(
        h.gemm_s, n * (2 * full / 0.5 + 2 * full / 2 / 0.5 + 2 * full / 2 / 0.75) * 1e-9, 1e-12);
    /* an unknown rate: no estimate */
    r.gflops = NAN;
    tpb_plans_estimate(&list, &r, &h);
    ck_assert(isnan(h.total_s));
}
END_TEST

static int has(const long *v, int n, long x)
{
    for (int i = 0; i < n; i++)
        if (v[i] == x)
            return 1;
    return 0;
}

/* --check's samples (run/layer_check.c) hold every boundary where a wrong offset shows: each
 * col shard's first and last column, each chunk's first and last row, and where a collective
 * cuts M by rank each rank's block's; sorted, once each; the same for the same seed; and the
 * reference at them is the generator's product. */
START_TEST(check_samples_hold_every_boundary)
{
    long shards[3] = {64, 128, 64};
    tpb_layer_desc_t d = {.orient = tpb_orient_of(TPB_SPLIT_COL),
                          .coll = tpb_coll_of(TPB_SPLIT_COL, TPB_COLL_ALLGATHER, TPB_SEQPAR_ON),
                          .m = 100,
                          .n = 256,
                          .k = 48,
                          .dtype = TPB_DTYPE_FP64,
                          .tp = 3,
                          .shards = shards,
                          .seed = 5,
                          .granularity = 64,
                          .chunks = 2};
    long *r = NULL, *c = NULL, *r2 = NULL, *c2 = NULL;
    int nr, nc, nr2, nc2;
    ck_assert_int_eq(tpb_check_samples(&d, &r, &nr, &c, &nc), TPB_OK);
    const long cols[] = {0, 63, 64, 191, 192, 255};
    for (int i = 0; i < 6; i++)
        ck_assert(has(c, nc, cols[i]));
    /* chunks of 50 rows; each cut in 17, 17, 16 by rank */
    const long rows[] = {0, 49, 50, 99, 16, 17, 33, 34, 66, 67, 83, 84};
    for (int i = 0; i < 12; i++)
        ck_assert(has(r, nr, rows[i]));
    for (int i = 1; i < nr; i++)
        ck_assert(r[i - 1] < r[i]);
    for (int i = 1; i < nc; i++)
        ck_assert(c[i - 1] < c[i]);
    ck_assert_int_eq(tpb_check_samples(&d, &r2, &nr2, &c2, &nc2), TPB_OK);
    ck_assert(nr2 == nr && nc2 == nc && !memcmp(r, r2, sizeof(long) * (size_t)nr));
    double ref[nr * nc];
    ck_assert_int_eq(tpb_check_reference(&d, r, nr, c, nc, ref), TPB_OK);
    double want = 0.0; /* Y[r[1]][c[2]] by the element generator */
    for (long k = 0; k < d.k; k++)
        want += tpb_rng_normal(5, 1, (uint64_t)r[1], (uint64_t)k) *
                (tpb_rng_normal(5, 2, (uint64_t)c[2], (uint64_t)k) / sqrt(48.0));
    ck_assert_double_eq_tol(ref[1 * nc + 2], want, 1e-12);
    free(r2);
    free(c2);
    free(r);
    free(c);
    /* an all-reduce of Y does not cut M: no per-rank row blocks, fewer rows */
    d.orient = tpb_orient_of(TPB_SPLIT_ROW);
    d.coll = tpb_coll_of(TPB_SPLIT_ROW, TPB_COLL_ALLGATHER, TPB_SEQPAR_OFF);
    d.chunks = 0;
    ck_assert_int_eq(tpb_check_samples(&d, &r, &nr, &c, &nc), TPB_OK);
    ck_assert(has(r, nr, 0) && has(r, nr, 99));
    ck_assert_int_le(nr, 2 + 16);
    free(r);
    free(c);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("plan");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, busbw_factors_beside_their_collectives);
    tcase_add_test(tc, sequence_parallel_bytes_and_rows);
    tcase_add_test(tc, one_plan_per_config_in_sweep_order);
    tcase_add_test(tc, given_speeds_weigh_at_build);
    tcase_add_test(tc, spread_placement_positions);
    tcase_add_test(tc, skips_are_planned);
    tcase_add_test(tc, speeds_set_once_per_block);
    tcase_add_test(tc, memory_checked_once);
    tcase_add_test(tc, estimate_by_hand);
    tcase_add_test(tc, check_samples_hold_every_boundary);
    suite_add_tcase(s, tc);
    return s;
}

TPB_TEST_MAIN(suite)
