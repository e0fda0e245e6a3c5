/* test_timeline.c - wait/comm decomposition, stragglers, spikes, clock correction. */
#include <math.h>
#include <stdlib.h>

#include "base/clock.h"
#include "base/timeline.h"
#include "tpb_test.h"

#define ITERS 20

/* marks[r][i]: compute from 1000*i for comp[r] us (+ extra), then a collective
 * ending xfer us after the group's last arrival. */
static void synth(tpb_mark_t *m, int world, int tp, const double *comp, double xfer, int late_rank,
                  double late_us, int every)
{
    for (int i = 0; i < ITERS; i++) {
        for (int g = 0; g < world / tp; g++) {
            double a = 0;
            for (int r = g * tp; r < (g + 1) * tp; r++) {
                tpb_mark_t *k = &m[r * ITERS + i];
                k->c0 = 10000.0 * i;
                double extra = (r == late_rank && (i + 1) % every == 0) ? late_us : 0.0;
                k->c1 = k->c0 + comp[r] + extra;
                a = fmax(a, k->c1);
            }
            for (int r = g * tp; r < (g + 1) * tp; r++)
                m[r * ITERS + i].x1 = a + xfer;
        }
    }
}

START_TEST(two_ranks_one_late)
{
    tpb_mark_t m[2 * ITERS];
    double comp[2] = {1000, 3000};
    tpb_rank_stats_t r[2];
    tpb_config_stats_t c;
    synth(m, 2, 2, comp, 50, -1, 0, 1);
    ck_assert_int_eq(tpb_timeline_analyse(m, 2, 2, ITERS, r, &c), TPB_OK);
    ck_assert_double_eq_tol(r[0].compute_med, 1000, 1e-9);
    ck_assert_double_eq_tol(r[0].wait_med, 2000, 1e-9);
    ck_assert_double_eq_tol(r[1].wait_med, 0, 1e-9);
    ck_assert_double_eq_tol(r[0].comm_med, 50, 1e-9);
    ck_assert_double_eq_tol(c.step_med, 3050, 1e-9);
    ck_assert_double_eq_tol(c.xfer_med, 50, 1e-9);
    ck_assert_int_eq(c.straggler_rank, 1);
    ck_assert_double_eq_tol(c.straggler_frac, 1.0, 1e-12);
    ck_assert_double_eq_tol(c.straggler_late_us, 2000, 1e-9);
    ck_assert_int_eq(r[1].last_count, ITERS);
    ck_assert_double_eq_tol(r[1].score, 1.0 / 3.0, 1e-12);
    /* clock-free: transfer bound = min (x1 - c1) = 50, wait estimate of rank 0 = 2000 */
    ck_assert_double_eq_tol(c.xfer_free_med, 50, 1e-9);
    ck_assert_double_eq_tol(r[0].wait_free_med, 2000, 1e-9);
    ck_assert_int_eq(c.causality_violations, 0);
    ck_assert_int_eq(c.nspikes, 0);
    /* means: the step and the transfer of the group that set it */
    ck_assert_double_eq_tol(c.step_mean, 3050, 1e-9);
    ck_assert_double_eq_tol(c.xfer_mean, 50, 1e-9);
    /* T_comp/N = the mean of 1000 and 3000; idle = 3050 - 2000 - 50 = 1000: rank 0's wait / 2 */
    ck_assert_double_eq_tol(c.comp_mean, 2000, 1e-9);
    ck_assert(tpb_straggler_clear(&c, 2)); /* last every time, 2000 us late of 3050 */
}
END_TEST

START_TEST(groups_and_worst_group)
{
    /* 4 ranks, tp 2: group 1 is slower; the config step follows it */
    tpb_mark_t m[4 * ITERS];
    double comp[4] = {1000, 1000, 1500, 2500};
    tpb_rank_stats_t r[4];
    tpb_config_stats_t c;
    synth(m, 4, 2, comp, 10, -1, 0, 1);
    ck_assert_int_eq(tpb_timeline_analyse(m, 4, 2, ITERS, r, &c), TPB_OK);
    ck_assert_double_eq_tol(c.step_med, 2510, 1e-9);
    ck_assert_double_eq_tol(r[2].wait_med, 1000, 1e-9);
    ck_assert_double_eq_tol(r[0].wait_med, 0, 1e-9);
    ck_assert_int_eq(c.straggler_rank, 3);
    ck_assert_double_eq_tol(r[2].score, 1.0, 1e-12);
    ck_assert_double_eq_tol(r[3].score, 0.6, 1e-12);
    /* the transfer that adds up is the step-setting group's */
    ck_assert_double_eq_tol(c.step_mean - c.xfer_mean, 2500, 1e-9);
    /* ... and so is the compute: group 1's mean (1500 + 2500) / 2, not group 0's */
    ck_assert_double_eq_tol(c.comp_mean, 2000, 1e-9);
    ck_assert(c.step_mean - c.comp_mean - c.xfer_mean >= 0.0);
}
END_TEST

START_TEST(straggler_beyond_noise)
{
    tpb_config_stats_t c = {.step_med = 1000, .straggler_rank = 1};
    c.straggler_frac = 0.55, c.straggler_late_us = 200; /* equal ranks: last by chance */
    ck_assert(!tpb_straggler_clear(&c, 2));
    c.straggler_frac = 0.8; /* last 4 times in 5 (chance: 1 in 2), 20 % of the step late */
    ck_assert(tpb_straggler_clear(&c, 2));
    c.straggler_late_us = 30; /* ... but by 3 % of the step */
    ck_assert(!tpb_straggler_clear(&c, 2));
    c.straggler_late_us = 200, c.straggler_frac = 0.6; /* 0.6 at tp 8: chance is 1/8 */
    ck_assert(tpb_straggler_clear(&c, 8));
    ck_assert(!tpb_straggler_clear(&c, 1));
}
END_TEST

START_TEST(spikes_blamed_on_the_right_rank)
{
    tpb_mark_t m[4 * ITERS];
    double comp[4] = {1000, 1000, 1000, 1000};
    tpb_rank_stats_t r[4];
    tpb_config_stats_t c;
    synth(m, 4, 4, comp, 10, 2, 3000, 10); /* iterations 9 and 19 */
    ck_assert_int_eq(tpb_timeline_analyse(m, 4, 4, ITERS, r, &c), TPB_OK);
    ck_assert_int_eq(c.nspikes, 2);
    ck_assert_int_eq(c.spikes[0].iter, 9);
    ck_assert_int_eq(c.spikes[0].rank, 2);
    ck_assert_int_eq(c.spikes[1].iter, 19);
    ck_assert_double_eq_tol(c.spikes[1].step_us, 4010, 1e-9);
    ck_assert_int_eq(r[2].last_count >= 2, 1);
}
END_TEST

START_TEST(causality_violations_counted)
{
    tpb_mark_t m[2 * ITERS];
    double comp[2] = {1000, 2000};
    tpb_rank_stats_t r[2];
    tpb_config_stats_t c;
    synth(m, 2, 2, comp, 50, -1, 0, 1);
    for (int i = 0; i < ITERS; i++) /* rank 0's clock 100 us behind: ends "before" A */
        m[i].x1 -= 100;
    ck_assert_int_eq(tpb_timeline_analyse(m, 2, 2, ITERS, r, &c), TPB_OK);
    ck_assert_int_eq(c.causality_violations, ITERS);
    /* 50 us early: beyond stated uncertainties of 20 + 20 us, within 30 + 25 (rank 1 last) */
    double tight[2] = {20, 20}, loose[2] = {30, 25}, one_sided[2] = {49, 0};
    ck_assert_int_eq(tpb_timeline_violations(m, 2, 2, ITERS, tight), ITERS);
    ck_assert_int_eq(tpb_timeline_violations(m, 2, 2, ITERS, loose), 0);
    ck_assert_int_eq(tpb_timeline_violations(m, 2, 2, ITERS, one_sided), ITERS);
    ck_assert_int_eq(tpb_timeline_violations(m, 2, 2, ITERS, NULL), ITERS);
}
END_TEST

START_TEST(clock_correction)
{
    tpb_clock_sample_t a = {500.0, 2.0, 1000.0}, b = {700.0, 2.0, 3000.0};
    /* constant offset */
    ck_assert_double_eq_tol(tpb_clock_correct(&a, NULL, 2000.0), 1500.0, 1e-9);
    /* linear drift: the rank read a at 1500 and b at 3700 on its own clock */
    ck_assert_double_eq_tol(tpb_clock_correct(&a, &b, 1500.0), 1000.0, 1e-9);
    ck_assert_double_eq_tol(tpb_clock_correct(&a, &b, 3700.0), 3000.0, 1e-9);
    ck_assert_double_eq_tol(tpb_clock_correct(&a, &b, 2600.0), 2000.0, 1e-9);
    /* clock readings include an injected offset */
    tpb_clock_t c0 = {0}, c1 = {50000.0};
    double t0 = tpb_clock_now_us(&c0), t1 = tpb_clock_now_us(&c1);
    ck_assert(t1 - t0 > 49000.0 && t1 - t0 < 51000.0);
    double s0 = tpb_clock_now_us(NULL);
    tpb_spin_us(1000.0);
    ck_assert(tpb_clock_now_us(NULL) - s0 >= 1000.0);
}
END_TEST

START_TEST(trace_window)
{
    /* 20 iterations of 100 us; the slowest (400) at 15, spikes (>150) at 2 and 7 */
    double step[20];
    unsigned char keep[20];
    for (int i = 0; i < 20; i++)
        step[i] = 100.0;
    step[15] = 400.0;
    step[2] = 300.0;
    step[7] = 200.0;
    step[9] = 140.0; /* slow, but not a spike */
    ck_assert_int_eq(tpb_timeline_trace_window(step, 20, 4, keep), 6);
    for (int i = 0; i < 20; i++) /* window 13..16 around 15, and the two spikes */
        ck_assert_int_eq(keep[i], (i >= 13 && i <= 16) || i == 2 || i == 7);
    /* only one spike fits beside a window of 1: the slower */
    ck_assert_int_eq(tpb_timeline_trace_window(step, 20, 1, keep), 2);
    ck_assert(keep[15] && keep[2] && !keep[7]);
    /* the window is shifted inside [0, iters) */
    step[15] = 100.0;
    step[19] = 500.0;
    ck_assert_int_eq(tpb_timeline_trace_window(step, 20, 4, keep), 6);
    ck_assert(keep[16] && keep[17] && keep[18] && keep[19] && !keep[15]);
    /* auto: 20 iterations x 2 rows in a budget of 40: all of them; 40 rows in a budget of 8
     * (at least 16 iterations): three spikes (2, 7, 19), a window of 16 - 3 = 13 (7..19) and
     * the spike outside it: 14 */
    ck_assert_int_eq(tpb_timeline_trace_budget(step, 20, 2, 40, keep), 20);
    ck_assert_int_eq(tpb_timeline_trace_budget(step, 20, 40, 8, keep), 14);
    ck_assert(keep[2] && keep[7] && keep[19] && !keep[6]);
    for (int i = 0; i < 20; i++) /* 9 spikes, more than half of 16: a window of 8 (4..11)
                                  * and the 4 spikes outside it, never more than 16 */
        step[i] = i < 9 ? 1000.0 + i : 100.0;
    ck_assert_int_eq(tpb_timeline_trace_budget(step, 20, 40, 640, keep), 12);
    for (int i = 0; i < 20; i++)
        step[i] = i == 7 ? 400.0 : i == 2 ? 300.0 : 100.0;
    /* n >= iters, or n < 1: everything */
    ck_assert_int_eq(tpb_timeline_trace_window(step, 20, 20, keep), 20);
    ck_assert_int_eq(tpb_timeline_trace_window(step, 20, 0, keep), 20);
    /* the per-iteration step is the worst group's */
    tpb_mark_t m[4 * ITERS];
    double comp[4] = {100, 300, 200, 200}, st[ITERS];
    synth(m, 4, 2, comp, 50, -1, 0, 1);
    tpb_timeline_steps(m, 4, 2, ITERS, st);
    for (int i = 0; i < ITERS; i++)
        ck_assert_double_eq_tol(st[i], 350.0, 1e-9);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("timeline");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, two_ranks_one_late);
    tcase_add_test(tc, groups_and_worst_group);
    tcase_add_test(tc, straggler_beyond_noise);
    tcase_add_test(tc, spikes_blamed_on_the_right_rank);
    tcase_add_test(tc, causality_violations_counted);
    tcase_add_test(tc, clock_correction);
    tcase_add_test(tc, trace_window);
    suite_add_tcase(s, tc);
    return s;
}

TPB_TEST_MAIN(suite)
