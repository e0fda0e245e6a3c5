/* test_partition.c - even and weighted splits. */
#include <math.h>
#include <string.h>

#include "base/partition.h"
#include "tpb_test.h"

static long sum(const long *v, int n)
{
    long s = 0;
    for (int i = 0; i < n; i++)
        s += v[i];
    return s;
}

START_TEST(even_divisible)
{
    long s[4];
    ck_assert_int_eq(tpb_partition_even(1024, 4, 1, s), TPB_OK);
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(s[i], 256);
}
END_TEST

START_TEST(even_remainder_and_granularity)
{
    long s[3];
    /* 1000 = 15 units of 64 + 40: units 5,5,5; the 40 go to the last shard */
    ck_assert_int_eq(tpb_partition_even(1000, 3, 64, s), TPB_OK);
    ck_assert_int_eq(s[0], 320);
    ck_assert_int_eq(s[1], 320);
    ck_assert_int_eq(s[2], 360);
    ck_assert_int_eq(sum(s, 3), 1000);
    ck_assert_int_eq(tpb_partition_even(10, 3, 1, s), TPB_OK);
    ck_assert_int_eq(s[0], 4);
    ck_assert_int_eq(s[1], 3);
    ck_assert_int_eq(s[2], 3);
}
END_TEST

START_TEST(even_t1)
{
    long s[1];
    ck_assert_int_eq(tpb_partition_even(77, 1, 1, s), TPB_OK);
    ck_assert_int_eq(s[0], 77);
}
END_TEST

START_TEST(too_small_is_an_error_and_writes_nothing)
{
    long s[4] = {-1, -1, -1, -1};
    double sp[4] = {1, 1, 1, 1}, f[4] = {-1, -1, -1, -1};
    ck_assert_int_eq(tpb_partition_even(255, 4, 64, s), TPB_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(tpb_err_msg(), "cannot be split into 4 shards"));
    ck_assert_int_eq(tpb_partition_weighted(3, 4, 1, sp, s, f), TPB_ERR_INVALID);
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(s[i], -1);
        ck_assert(f[i] == -1);
    }
    ck_assert_int_eq(tpb_partition_even(8, 0, 1, s), TPB_ERR_INVALID);
    ck_assert_int_eq(tpb_partition_even(8, 2, 0, s), TPB_ERR_INVALID);
}
END_TEST

START_TEST(weighted_seed_example)
{
    /* seed 1: capacities 1.0, 0.8, 1.2, 1.0 and W = 1000 */
    double sp[4] = {1.0, 0.8, 1.2, 1.0}, f[4];
    long s[4];
    ck_assert_int_eq(tpb_partition_weighted(1000, 4, 1, sp, s, f), TPB_OK);
    ck_assert_int_eq(s[0], 250);
    ck_assert_int_eq(s[1], 200);
    ck_assert_int_eq(s[2], 300);
    ck_assert_int_eq(s[3], 250);
    ck_assert_double_eq_tol(f[1], 0.2, 1e-12);
    ck_assert_double_eq_tol(f[2], 0.3, 1e-12);
}
END_TEST

START_TEST(weighted_largest_remainder)
{
    /* quotas 3.33.. each: floors 3,3,3 and the one spare unit to the first largest remainder */
    double sp[3] = {1, 1, 1};
    long s[3];
    ck_assert_int_eq(tpb_partition_weighted(10, 3, 1, sp, s, NULL), TPB_OK);
    ck_assert_int_eq(sum(s, 3), 10);
    ck_assert_int_eq(s[0], 4);
    /* quotas 1.5, 3.5, 5.0 of 10: remainders .5 .5 0 -> 2,4,5 or 1,4,5+... must sum to 10 */
    double sp2[3] = {1.5, 3.5, 5.0};
    ck_assert_int_eq(tpb_partition_weighted(10, 3, 1, sp2, s, NULL), TPB_OK);
    ck_assert_int_eq(sum(s, 3), 10);
    ck_assert_int_eq(s[2], 5);
    ck_assert(s[0] + s[1] == 5 && s[0] >= 1 && s[1] >= 3);
}
END_TEST

START_TEST(weighted_granularity_and_skew)
{
    /* heavy skew: the slow rank still gets one unit of g */
    double sp[4] = {1000, 1, 1, 1000};
    long s[4];
    ck_assert_int_eq(tpb_partition_weighted(4096, 4, 128, sp, s, NULL), TPB_OK);
    ck_assert_int_eq(sum(s, 4), 4096);
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(s[i] % 128, 0);
    ck_assert_int_eq(s[1], 128);
    ck_assert_int_eq(s[2], 128);
    ck_assert_int_eq(s[0], s[3]);
    /* remainder elements beyond the granularity go to the last shard */
    double sp2[2] = {1, 3};
    ck_assert_int_eq(tpb_partition_weighted(1000, 2, 64, sp2, s, NULL), TPB_OK);
    ck_assert_int_eq(s[0] + s[1], 1000);
    ck_assert_int_eq(s[0] % 64, 0);
    ck_assert_int_eq((s[1] - 1000 % 64) % 64, 0);
}
END_TEST

START_TEST(weighted_bad_speeds)
{
    long s[2];
    double zero[2] = {1, 0}, neg[2] = {-1, 1}, nan_[2] = {NAN, 1}, inf[2] = {INFINITY, 1};
    ck_assert_int_eq(tpb_partition_weighted(100, 2, 1, zero, s, NULL), TPB_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(tpb_err_msg(), "speed of rank 1"));
    ck_assert_int_eq(tpb_partition_weighted(100, 2, 1, neg, s, NULL), TPB_ERR_INVALID);
    ck_assert_int_eq(tpb_partition_weighted(100, 2, 1, nan_, s, NULL), TPB_ERR_INVALID);
    ck_assert_int_eq(tpb_partition_weighted(100, 2, 1, inf, s, NULL), TPB_ERR_INVALID);
}
END_TEST

START_TEST(weighted_t1_and_offsets)
{
    double sp[1] = {3.0};
    long s[1], off[3];
    ck_assert_int_eq(tpb_partition_weighted(99, 1, 1, sp, s, NULL), TPB_OK);
    ck_assert_int_eq(s[0], 99);
    long sh[3] = {5, 7, 9};
    tpb_partition_offsets(sh, 3, off);
    ck_assert_int_eq(off[0], 0);
    ck_assert_int_eq(off[1], 5);
    ck_assert_int_eq(off[2], 12);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("partition");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, even_divisible);
    tcase_add_test(tc, even_remainder_and_granularity);
    tcase_add_test(tc, even_t1);
    tcase_add_test(tc, too_small_is_an_error_and_writes_nothing);
    tcase_add_test(tc, weighted_seed_example);
    tcase_add_test(tc, weighted_largest_remainder);
    tcase_add_test(tc, weighted_granularity_and_skew);
    tcase_add_test(tc, weighted_bad_speeds);
    tcase_add_test(tc, weighted_t1_and_offsets);
    suite_add_tcase(s, tc);
    return s;
}

TPB_TEST_MAIN(suite)
