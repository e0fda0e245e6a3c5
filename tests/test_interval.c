/* test_interval.c - intervals and verdicts of a ratio of medians, on constructed samples. */
#include <math.h>

#include "base/interval.h"
#include "tpb_test.h"

START_TEST(known_intervals)
{
    double flat[20], alt[20];
    for (int i = 0; i < 20; i++) {
        flat[i] = 100.0;
        alt[i] = i % 2 ? 30.0 : 10.0; /* lag-1 negative: n effective samples */
    }
    ck_assert_double_eq(tpb_interval_median_half(flat, 20), 0.0);
    /* median 20 between the 6th (10) and the 15th (30) smallest: log 2 */
    ck_assert_double_eq_tol(tpb_interval_median_half(alt, 20), log(2.0), 1e-12);
    double few[2] = {1.0, 2.0};
    ck_assert(isinf(tpb_interval_median_half(few, 2)));
    tpb_ratio_ci_t r = tpb_interval_ratio(alt, 20, flat, 20);
    ck_assert_double_eq_tol(r.ratio, 5.0, 1e-12);
    ck_assert_double_eq_tol(r.half, log(2.0), 1e-12);
    ck_assert_double_eq_tol(r.lo, 2.5, 1e-9);
    ck_assert_double_eq_tol(r.hi, 10.0, 1e-9);
    r = tpb_interval_ratio(alt, 20, alt, 20); /* a series against itself holds */
    ck_assert_double_eq(r.half, 0.0);
    ck_assert_int_eq(tpb_interval_decide(r.ratio, r.half, 0.05), TPB_VERDICT_DRAW);
}
END_TEST

START_TEST(autocorrelation_and_drift_widen)
{
    /* a slow stretch: the same values, once shuffled and once in two runs of alike */
    double mixed[40], runs[40];
    for (int i = 0; i < 40; i++) {
        mixed[i] = 100.0 + (i % 2 ? 10.0 : 0.0) + 0.1 * i;
        runs[i] = 100.0 + (i < 20 ? 0.0 : 10.0) + 0.1 * (i % 20) * 2 + (i % 2) * 0.05;
    }
    ck_assert(tpb_interval_lag1(runs, 40) > 0.8);
    ck_assert(tpb_interval_lag1(mixed, 40) < 0.0);
    ck_assert(tpb_interval_median_half(runs, 40) > 1.5 * tpb_interval_median_half(mixed, 40));
    ck_assert(tpb_interval_batch_half(runs, 40, 5) > 0.0);
    ck_assert_double_eq(tpb_interval_batch_half(runs, 19, 5), 0.0); /* under 4 a batch */
}
END_TEST

START_TEST(verdicts)
{
    ck_assert_int_eq(tpb_interval_decide(0.8, 0.05, 0.05), TPB_VERDICT_BETTER);
    ck_assert_int_eq(tpb_interval_decide(1.2, 0.05, 0.05), TPB_VERDICT_WORSE);
    ck_assert_int_eq(tpb_interval_decide(1.01, 0.02, 0.05), TPB_VERDICT_DRAW);
    ck_assert_int_eq(tpb_interval_decide(1.04, 0.05, 0.05), TPB_VERDICT_INCONCLUSIVE);
    ck_assert_int_eq(tpb_interval_decide(0.9, INFINITY, 0.05), TPB_VERDICT_INCONCLUSIVE);
    ck_assert_int_eq(tpb_interval_decide(NAN, 0.0, 0.05), TPB_VERDICT_INCONCLUSIVE);
    ck_assert_double_eq_tol(tpb_interval_detectable(0.0, 0.05), 0.05, 1e-12);
    ck_assert_str_eq(tpb_verdict_name(TPB_VERDICT_DISTURBED), "disturbed");
}
END_TEST

/* A machine that slows down steadily (10 % over the measurement): measured one config
 * after the other, two identical configs differ by the drift; in ABBA blocks they do not,
 * and the verdict is a draw. */
START_TEST(interleaving_cancels_a_drift)
{
    enum { K = 2, ROUNDS = 10, B = 4, N = ROUNDS * B };
    int order[K * ROUNDS];
    tpb_interval_order(K, ROUNDS, order);
    ck_assert_int_eq(order[0], 0);
    ck_assert_int_eq(order[1], 1);
    ck_assert_int_eq(order[2], 1); /* A B B A */
    ck_assert_int_eq(order[3], 0);
    double seq[K][N], inter[K][N];
    int got[K] = {0, 0};
    for (int t = 0; t < K * N; t++) { /* the machine's time t: both configs take 100 us */
        double step = 100.0 * (1.0 + 0.1 * t / (K * N)) + (t % 3) * 0.01;
        seq[t / N][t % N] = step; /* all of A, then all of B */
        int c = order[t / B];
        inter[c][got[c]++] = step;
    }
    tpb_ratio_ci_t s = tpb_interval_ratio(seq[0], N, seq[1], N);
    tpb_ratio_ci_t i = tpb_interval_paired(inter[0], inter[1], N, ROUNDS);
    ck_assert(s.ratio > 1.045);             /* the drift, taken for a difference */
    ck_assert(fabs(i.ratio - 1.0) < 0.005); /* cancelled */
    ck_assert(i.half < 0.01);               /* and the pairs see no difference */
    ck_assert_int_eq(tpb_interval_decide(i.ratio, i.half, 0.05), TPB_VERDICT_DRAW);
    /* the unpaired interval of the interleaved series is wide: the drift is in both */
    ck_assert(tpb_interval_ratio(inter[0], N, inter[1], N).half > 3 * i.half);
}
END_TEST

/* A real difference (b 20 % faster) in noisy, drifting blocks: found, inside its interval;
 * too few rounds: no interval. */
START_TEST(paired_finds_a_difference)
{
    enum { N = 40, ROUNDS = 10 };
    double a[N], b[N];
    for (int i = 0; i < N; i++) {
        double machine = 1.0 + 0.3 * ((i / 4) % 3) + 0.02 * (i % 4); /* slow stretches */
        a[i] = 100.0 * machine;
        b[i] = 80.0 * machine * (1.0 + 0.01 * ((i * 7) % 5));
    }
    tpb_ratio_ci_t p = tpb_interval_paired(a, b, N, ROUNDS);
    ck_assert(p.lo < 0.82 && 0.8 < p.hi && p.hi < 0.9);
    ck_assert_int_eq(tpb_interval_decide(p.ratio, p.half, 0.05), TPB_VERDICT_BETTER);
    ck_assert(isinf(tpb_interval_paired(a, b, N, 2).half));
    ck_assert(isinf(tpb_interval_paired(a, b, 2, 3).half));
    ck_assert_double_eq_tol(tpb_interval_t975(9), 2.262, 1e-9);
    ck_assert(fabs(tpb_interval_t975(20) - 2.086) < 0.002);
    ck_assert(fabs(tpb_interval_t975(1000) - 1.962) < 0.001);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("interval");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, known_intervals);
    tcase_add_test(tc, autocorrelation_and_drift_widen);
    tcase_add_test(tc, verdicts);
    tcase_add_test(tc, interleaving_cancels_a_drift);
    tcase_add_test(tc, paired_finds_a_difference);
    suite_add_tcase(s, tc);
    return s;
}

TPB_TEST_MAIN(suite)
