/* test_metrics.c - metric formulas against hand-computed values, and result derivation. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/disturb.h"
#include "base/metrics.h"
#include "record/result.h"
#include "tpb_test.h"

#define TOL 1e-9

/* seed 1: W = 1000, capacities 1.0, 0.8, 1.2, 1.0 */
static const double speeds[4] = {1.0, 0.8, 1.2, 1.0};

START_TEST(seed_even_split)
{
    double t[4];
    for (int i = 0; i < 4; i++)
        t[i] = 250.0 / speeds[i];
    ck_assert_double_eq_tol(t[1], 312.5, TOL);
    ck_assert_double_eq_tol(t[2], 208.333333333, 1e-6);
    ck_assert_double_eq_tol(tpb_metric_lb(t, 4), 0.6666666667, 1e-9);
    ck_assert_double_eq_tol(tpb_stats_max(t, 4), 312.5, TOL); /* total time = slowest */
    /* U = (250 + 312.5 + 208.33 + 250) / (4 * 312.5) */
    ck_assert_double_eq_tol(tpb_metric_utilisation(t, 4), (1020.8333333333 / 1250.0), 1e-9);
}
END_TEST

START_TEST(seed_weighted_split)
{
    double t[4];
    for (int i = 0; i < 4; i++)
        t[i] = (1000.0 * speeds[i] / 4.0) / speeds[i];
    ck_assert_double_eq_tol(tpb_metric_lb(t, 4), 1.0, TOL);
    ck_assert_double_eq_tol(tpb_stats_max(t, 4), 250.0, TOL);
    ck_assert_double_eq_tol(tpb_metric_utilisation(t, 4), 1.0, TOL);
    /* predicted speed-up mean(s)/min(s) = 1.0/0.8 = 312.5/250 */
    ck_assert_double_eq_tol(tpb_metric_predicted_speedup(speeds, 4), 1.25, TOL);
}
END_TEST

START_TEST(quantiles)
{
    double v[5] = {5, 1, 4, 2, 3};
    ck_assert_double_eq_tol(tpb_stats_median(v, 5), 3.0, TOL);
    ck_assert_double_eq_tol(tpb_stats_quantile(v, 5, 0.0), 1.0, TOL);
    ck_assert_double_eq_tol(tpb_stats_quantile(v, 5, 1.0), 5.0, TOL);
    ck_assert_double_eq_tol(tpb_stats_quantile(v, 5, 0.95), 4.8, TOL);
    double w[4] = {4, 1, 3, 2};
    ck_assert_double_eq_tol(tpb_stats_median(w, 4), 2.5, TOL);
    ck_assert(v[0] == 5); /* input untouched */
    ck_assert(isnan(tpb_stats_median(v, 0)));
}
END_TEST

START_TEST(efficiency)
{
    ck_assert_double_eq_tol(tpb_metric_efficiency(1000.0, 4, 312.5), 0.8, TOL);
    ck_assert(isnan(tpb_metric_efficiency(NAN, 4, 100)));
    /* E_het: W = 1000 work units, speeds sum 4 -> T_ideal 250; step 312.5 */
    ck_assert_double_eq_tol(tpb_metric_efficiency_het(1000.0, speeds, 4, 312.5), 0.8, TOL);
    double bad[2] = {1, 0};
    ck_assert(isnan(tpb_metric_efficiency_het(1, bad, 2, 1)));
}
END_TEST

START_TEST(bandwidth_like_nccl_tests)
{
    /* 1 GB in 1000 us = 1000 GB/s algbw */
    ck_assert_double_eq_tol(tpb_metric_algbw_gbs(1e9, 1000.0), 1000.0, 1e-9);
    /* the bus-bandwidth factors live beside their collectives: tests/test_plan.c */
    ck_assert_double_eq_tol(tpb_metric_tflops(2e12, 1e6), 2.0, TOL);
}
END_TEST

START_TEST(comm_model_fit)
{
    /* T = 2 messages * 5 us + V / (10 GB/s), V in bytes, T in us: 1 GB/s = 1e3 bytes/us */
    double v[4] = {1e3, 1e5, 1e6, 4e6}, t[4];
    for (int i = 0; i < 4; i++)
        t[i] = 2 * 5.0 + v[i] / (10.0 * 1e3);
    tpb_comm_fit_t fit;
    ck_assert_int_eq(tpb_metric_comm_fit(v, t, 4, 2, &fit), 0);
    ck_assert_double_eq_tol(fit.latency_us, 5.0, 1e-6);
    ck_assert_double_eq_tol(fit.bandwidth_gbs, 10.0, 1e-6);
    ck_assert_double_eq_tol(fit.r2, 1.0, 1e-9);
    double same[2] = {5, 5};
    ck_assert_int_eq(tpb_metric_comm_fit(same, t, 2, 1, &fit), -1);
    ck_assert_int_eq(tpb_metric_comm_fit(v, t, 1, 1, &fit), -1);
    /* 4K..16M by 4 with L = 10 us, B = 3.3 GB/s, the largest 3 % slow: relative weights keep
     * L at 9.96 us (an unweighted fit would say 2.8 us) and B at 3.28 GB/s (3.20) */
    double vv[7], tt[7];
    for (int i = 0; i < 7; i++) {
        vv[i] = 4096.0 * pow(4.0, i);
        tt[i] = 10.0 + vv[i] / 3300.0;
    }
    tt[6] *= 1.03;
    ck_assert_int_eq(tpb_metric_comm_fit(vv, tt, 7, 1, &fit), 0);
    ck_assert_double_eq_tol(fit.latency_us, 9.964, 0.01);
    ck_assert_double_eq_tol(fit.bandwidth_gbs, 3.276, 0.01);
    ck_assert(fit.r2 > 0.99 && fit.r2 < 1.0);
    ck_assert_int_eq(fit.quality, TPB_FIT_OK);
    /* the intervals hold the fitted values and are narrow for a near-exact series */
    ck_assert(fit.latency_lo_us <= fit.latency_us && fit.latency_us <= fit.latency_hi_us);
    ck_assert(fit.bandwidth_lo_gbs <= fit.bandwidth_gbs &&
              fit.bandwidth_gbs <= fit.bandwidth_hi_gbs);
    ck_assert(fit.latency_hi_us - fit.latency_lo_us < 2.0);
    ck_assert_int_eq(fit.points, 7);
    tt[0] = 0.0; /* a time that is not positive cannot be weighted */
    ck_assert_int_eq(tpb_metric_comm_fit(vv, tt, 7, 1, &fit), -1);
}
END_TEST

START_TEST(comm_model_fit_physical)
{
    /* the case: three sizes whose free fit gives L = -3.4 us: L is fixed at 0 and
     * B fitted through the origin, and the fit says so */
    double v[3] = {4096, 65536, 1048576}, t[3] = {1.0, 22.0, 400.0};
    tpb_comm_fit_t fit;
    ck_assert_int_eq(tpb_metric_comm_fit(v, t, 3, 1, &fit), 0);
    ck_assert_int_eq(fit.quality, TPB_FIT_NO_LATENCY);
    ck_assert_double_eq(fit.latency_us, 0.0);
    ck_assert(fit.bandwidth_gbs > 0.0 && isfinite(fit.bandwidth_gbs));
    /* two sizes: a line through two points (no interval, said as such) */
    double v2[2] = {4096, 1048576}, t2[2] = {10.0, 300.0};
    ck_assert_int_eq(tpb_metric_comm_fit(v2, t2, 2, 1, &fit), 0);
    ck_assert_int_eq(fit.quality, TPB_FIT_EXACT);
    ck_assert(isnan(fit.latency_lo_us));
    /* larger messages no slower: no bandwidth, the latency is the weighted mean time */
    double t3[3] = {50.0, 48.0, 47.0};
    ck_assert_int_eq(tpb_metric_comm_fit(v, t3, 3, 1, &fit), 0);
    ck_assert_int_eq(fit.quality, TPB_FIT_NO_BANDWIDTH);
    ck_assert(isinf(fit.bandwidth_gbs));
    ck_assert(fit.latency_us > 47.0 && fit.latency_us < 50.0);
    /* a series the model does not describe (a step at 64 KiB) is a poor fit */
    double v4[6] = {1024, 4096, 16384, 65536, 262144, 1048576};
    double t4[6] = {10, 10, 10, 100, 100, 100};
    ck_assert_int_eq(tpb_metric_comm_fit(v4, t4, 6, 1, &fit), 0);
    ck_assert_int_eq(fit.quality, TPB_FIT_POOR);
    ck_assert(fit.r2 < 0.9);
}
END_TEST

START_TEST(scores_and_decomposition)
{
    double t[3] = {100, 200, 125}, out[3];
    tpb_metric_relative_scores(t, 3, out);
    ck_assert_double_eq_tol(out[0], 1.0, TOL);
    ck_assert_double_eq_tol(out[1], 0.5, TOL);
    ck_assert_double_eq_tol(out[2], 0.8, TOL);
    tpb_decomp_t d = tpb_metric_decompose(250.0, 30.0, 300.0); /* the terms add up to the step */
    ck_assert_double_eq_tol(d.comp_us, 250.0, TOL);
    ck_assert_double_eq_tol(d.comm_us, 30.0, TOL);
    ck_assert_double_eq_tol(d.idle_us, 20.0, TOL);
    ck_assert_double_eq_tol(d.comp_us + d.comm_us + d.idle_us, 300.0, TOL);
}
END_TEST

START_TEST(result_derive)
{
    /* 2 ranks, one group: compute 100 and 200 us, step 220 us, transfer 20 us */
    tpb_rank_info_t info[2] = {
        {.shard = 64, .speed = 2.0, .fraction = 2.0 / 3, .max_err = NAN, .speed_spread = NAN},
        {.shard = 64, .speed = 1.0, .fraction = 1.0 / 3, .max_err = NAN, .speed_spread = NAN}};
    tpb_rank_stats_t ranks[2] = {{0}};
    ranks[0].compute_med = 100;
    ranks[1].compute_med = 200;
    tpb_result_t r = {0};
    r.world = 2;
    r.tp = 2;
    r.m = 100;
    r.n = 128;
    r.k = 1000;
    r.dtype = TPB_DTYPE_FP32;
    r.split = TPB_SPLIT_ROW;
    r.coll = TPB_COLL_ALLREDUCE;
    r.busbw_factor = 1.0; /* all-reduce at t = 2: 2(t-1)/t */
    r.coll_bytes = 100.0 * 128 * 4;
    r.info = info;
    r.ranks = ranks;
    r.speed_source = TPB_SPEEDS_GIVEN;
    r.stats.step_med = 220;
    r.stats.xfer_med = 20;
    tpb_result_derive(&r, 300.0);
    ck_assert_double_eq_tol(r.lb, 0.5, TOL);
    ck_assert_double_eq_tol(r.u, 0.75, TOL);
    ck_assert_double_eq_tol(r.e, 300.0 / (2 * 220.0), TOL);
    ck_assert_double_eq_tol(r.r, 10.0, TOL);
    ck_assert_double_eq_tol(r.predicted_speedup, 1.5, TOL);
    ck_assert(isnan(r.e_het)); /* relative --speeds give no absolute ideal time */
    double bytes = 100.0 * 128 * 4;
    ck_assert_double_eq_tol(r.algbw_gbs, bytes / 20e3, 1e-12);
    ck_assert_double_eq_tol(r.busbw_gbs, bytes / 20e3, 1e-12); /* 2(t-1)/t = 1 */
    ck_assert_double_eq_tol(r.tflops, 2.0 * 100 * 128 * 1000 / 220e6, 1e-15);
    /* calibrated speeds in GFLOP/s give E_het = (W / sum s) / step */
    info[0].speed = 0.25;
    info[1].speed = 0.25;
    r.speed_source = TPB_SPEEDS_CALIBRATION;
    tpb_result_derive(&r, NAN);
    ck_assert(isnan(r.e));
    ck_assert_double_eq_tol(r.e_het, (2.0 * 100 * 128 * 1000 / 500.0) / 220.0, 1e-12);
}
END_TEST

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The linear-time selection against sorting, on sizes 1..300 with many ties, sorted and
 * reversed input. */
START_TEST(quantile_matches_sorting)
{
    static double v[300], s[300];
    const double qs[6] = {0.0, 0.25, 0.5, 0.75, 0.95, 1.0};
    unsigned x = 12345;
    for (int n = 1; n <= 300; n++)
        for (int kind = 0; kind < 4; kind++) {
            for (int i = 0; i < n; i++) {
                x = x * 1103515245u + 12345u;
                v[i] = kind == 0   ? (double)(x >> 16) / 65536.0
                       : kind == 1 ? (double)((x >> 16) % 5)
                       : kind == 2 ? (double)i
                                   : (double)(n - i);
            }
            memcpy(s, v, (size_t)n * sizeof(double));
            qsort(s, (size_t)n, sizeof(double), cmp_d);
            for (int k = 0; k < 6; k++) {
                double pos = qs[k] * (n - 1), lo = floor(pos);
                double want =
                    s[(int)lo] +
                    (pos - lo) * (s[(int)lo + 1 < n ? (int)lo + 1 : (int)lo] - s[(int)lo]);
                ck_assert_double_eq_tol(tpb_stats_quantile(v, (size_t)n, qs[k]), want, 1e-12);
            }
        }
}
END_TEST

/* A config's steps judged one figure or not (base/disturb.h): two modes taking turns (the
 * H200 with another process on the GPU: 1401 / 2737 us), a spiky series, a steady one, and
 * too few steps to tell. */
START_TEST(disturbed_steps)
{
    double alt[20], steady[20], spiky[20];
    for (int i = 0; i < 20; i++) {
        double wiggle = 1.0 + 0.01 * ((i * 7) % 5 - 2); /* +-2 %, deterministic */
        alt[i] = (i % 2 ? 2737.0 : 1401.0) * wiggle;
        steady[i] = 1000.0 * wiggle;
        spiky[i] = i % 10 == 3 ? 1900.0 : 1000.0 * wiggle; /* 2 of 20 at 1.9x: p95 above */
    }
    tpb_disturb_t d = tpb_disturb_judge(alt, 20);
    ck_assert_int_eq(d.verdict, TPB_DISTURBED);
    ck_assert(d.bimodal);
    ck_assert_double_eq_tol(d.low_us, 1401.0, 30.0);
    ck_assert_double_eq_tol(d.high_us, 2737.0, 60.0);
    ck_assert_double_eq_tol(d.high_share, 0.5, 1e-12);
    char why[160];
    tpb_disturb_describe(&d, why, sizeof(why));
    ck_assert_ptr_nonnull(strstr(why, "steps bimodal: 14"));
    ck_assert_ptr_nonnull(strstr(why, " us in 50 %, 27"));
    d = tpb_disturb_judge(steady, 20);
    ck_assert_int_eq(d.verdict, TPB_STEADY);
    ck_assert(!d.bimodal && !d.spiky && isnan(d.low_us));
    tpb_disturb_describe(&d, why, sizeof(why));
    ck_assert_str_eq(why, "");
    d = tpb_disturb_judge(spiky, 20);
    ck_assert_int_eq(d.verdict, TPB_DISTURBED);
    ck_assert(d.spiky && d.p95_ratio > 1.2);
    ck_assert_int_eq(tpb_disturb_judge(alt, 9).verdict, TPB_UNDECIDED); /* < 10 steps */
    ck_assert_str_eq(tpb_disturb_name(TPB_UNDECIDED), "not enough data");
    alt[4] = NAN; /* a missing step is left out, not judged */
    ck_assert_int_eq(tpb_disturb_judge(alt, 20).verdict, TPB_DISTURBED);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("metrics");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, seed_even_split);
    tcase_add_test(tc, seed_weighted_split);
    tcase_add_test(tc, quantiles);
    tcase_add_test(tc, efficiency);
    tcase_add_test(tc, bandwidth_like_nccl_tests);
    tcase_add_test(tc, comm_model_fit);
    tcase_add_test(tc, comm_model_fit_physical);
    tcase_add_test(tc, quantile_matches_sorting);
    tcase_add_test(tc, scores_and_decomposition);
    tcase_add_test(tc, result_derive);
    tcase_add_test(tc, disturbed_steps);
    suite_add_tcase(s, tc);
    return s;
}

TPB_TEST_MAIN(suite)
