/* test_adaptive.c - the adaptive policy's decision: speeds from measured times,
 * re-partition only beyond the noise, and the round's load balance. */
#include <math.h>

#include "base/adaptive.h"
#include "tpb_test.h"

/* Two ranks whose compute times for shards s0 and s1 are t0 and t1 (spread sp). */
static void round2(tpb_round_rank_t *w, double s0, double t0, double s1, double t1, double sp)
{
    w[0] = (tpb_round_rank_t){.compute_us = t0, .spread = sp, .span_us = t0, .shard = s0};
    w[1] = (tpb_round_rank_t){.compute_us = t1, .spread = sp, .span_us = t1, .shard = s1};
}

START_TEST(inverted_speeds_are_corrected)
{
    /* rank 1 is 4x slower but got 4/5 of K = 1000: speeds 200/100 = 2 and 800/1600 = 0.5 */
    tpb_round_rank_t w[2];
    long shards[2];
    double gain;
    round2(w, 200, 100.0, 800, 1600.0, 0.01);
    ck_assert_int_eq(tpb_adaptive_decide(w, 0, 2, 1000, 1, shards, &gain), 1);
    ck_assert_int_eq(shards[0], 800); /* 2 / 2.5 of 1000 */
    ck_assert_int_eq(shards[1], 200);
    ck_assert_double_eq_tol(gain, 1600.0 / 400.0 - 1.0, 1e-9); /* 1600 us -> 400 us */
    ck_assert_double_eq_tol(tpb_adaptive_round_lb(w, 0, 2), 100.0 / 1600.0, 1e-12);
}
END_TEST

START_TEST(hysteresis)
{
    tpb_round_rank_t w[2];
    long shards[2];
    double gain;
    /* balanced: nothing to gain, shards kept */
    round2(w, 500, 1000.0, 500, 1000.0, 0.0);
    ck_assert_int_eq(tpb_adaptive_decide(w, 0, 2, 1000, 1, shards, &gain), 0);
    ck_assert_int_eq(shards[0], 500);
    ck_assert_int_eq(shards[1], 500);
    /* a 10 % imbalance re-partitions on a quiet round ... */
    round2(w, 500, 1000.0, 500, 1100.0, 0.01);
    ck_assert_int_eq(tpb_adaptive_decide(w, 0, 2, 1000, 1, shards, &gain), 1);
    ck_assert(gain > 0.04 && gain < 0.06);
    /* ... but not on a round whose own noise is larger than the gain */
    round2(w, 500, 1000.0, 500, 1100.0, 0.04);
    ck_assert_int_eq(tpb_adaptive_decide(w, 0, 2, 1000, 1, shards, &gain), 0);
    ck_assert_int_eq(shards[0], 500);
    /* a gain under 3 % never moves, whatever the noise */
    round2(w, 500, 1000.0, 500, 1040.0, 0.0);
    ck_assert_int_eq(tpb_adaptive_decide(w, 0, 2, 1000, 1, shards, &gain), 0);
}
END_TEST

START_TEST(groups_and_bad_rounds)
{
    /* the second group of a world of 4 decides from its own ranks only */
    tpb_round_rank_t w[4];
    long shards[2];
    double gain;
    round2(w, 100, 100.0, 100, 100.0, 0.0);
    round2(w + 2, 100, 50.0, 100, 200.0, 0.0);
    ck_assert_int_eq(tpb_adaptive_decide(w, 2, 2, 200, 1, shards, &gain), 1);
    ck_assert_int_eq(shards[0], 160);
    ck_assert_int_eq(shards[1], 40);
    /* a rank with no time (failed round) keeps the shards */
    w[3].compute_us = NAN;
    ck_assert_int_eq(tpb_adaptive_decide(w, 2, 2, 200, 1, shards, &gain), 0);
    ck_assert_int_eq(shards[0], 100);
    /* granularity is kept */
    round2(w, 512, 100.0, 512, 300.0, 0.0);
    ck_assert_int_eq(tpb_adaptive_decide(w, 0, 2, 1024, 64, shards, &gain), 1);
    ck_assert_int_eq(shards[0] % 64, 0);
    ck_assert_int_eq(shards[0] + shards[1], 1024);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("adaptive");
    TCase *tc = tcase_create("adaptive");
    tcase_add_test(tc, inverted_speeds_are_corrected);
    tcase_add_test(tc, hysteresis);
    tcase_add_test(tc, groups_and_bad_rounds);
    suite_add_tcase(s, tc);
    return s;
}

TPB_TEST_MAIN(suite)
