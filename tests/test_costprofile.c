/* test_costprofile.c - --cost-profile parsing and geometry, and the cost-aware split
 * against a brute-force search of every contiguous split. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "base/costprofile.h"
#include "base/partition.h"
#include "tpb_test.h"

/* xorshift64: the trials' own numbers, the same on every machine */
static uint64_t next(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

static double uniform(uint64_t *x)
{
    return (double)(next(x) >> 11) / 9007199254740992.0;
}

static tpb_cost_profile_t parsed(const char *text)
{
    tpb_cost_profile_t p;
    ck_assert_int_eq(tpb_cost_profile_parse(text, strlen(text), "test", &p), TPB_OK);
    return p;
}

START_TEST(parse_numbers_commas_comments)
{
    tpb_cost_profile_t p = parsed("# thick then thin\n4, 4 2\n1 # last\n");
    ck_assert_int_eq(p.nblocks, 4);
    ck_assert_double_eq(p.cost[0], 4.0);
    ck_assert_double_eq(p.cost[2], 2.0);
    ck_assert_double_eq(p.cost[3], 1.0);
    tpb_cost_profile_free(&p);
    ck_assert_int_eq(p.nblocks, 0);
}
END_TEST

START_TEST(parse_refusals_name_the_block)
{
    const char *bad[] = {"",      "# only a comment\n", "1 x 2",    "1 0 2", "1 -3", "1 nan",
                         "1 inf", "1 1e300000",         "1 2000000"};
    tpb_cost_profile_t p = {0};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ck_assert_int_eq(tpb_cost_profile_parse(bad[i], strlen(bad[i]), "F", &p), TPB_ERR_INVALID);
        ck_assert_int_eq(p.nblocks, 0); /* nothing set */
        ck_assert_ptr_nonnull(strstr(tpb_err_msg(), "F"));
    }
    ck_assert_ptr_nonnull(
        strstr((tpb_cost_profile_parse("1 x", 3, "F", &p), tpb_err_msg()), "block 1 is 'x'"));
}
END_TEST

START_TEST(builtin_skew)
{
    tpb_cost_profile_t p;
    ck_assert(tpb_cost_profile_is_builtin("skew:4"));
    ck_assert(!tpb_cost_profile_is_builtin("costs.txt"));
    ck_assert_int_eq(tpb_cost_profile_builtin("skew:4", &p), TPB_OK);
    ck_assert_int_eq(p.nblocks, 2);
    ck_assert_double_eq(p.cost[0], 4.0);
    ck_assert_double_eq(p.cost[1], 1.0);
    ck_assert_str_eq(p.source, "skew:4");
    tpb_cost_profile_free(&p);
    const char *bad[] = {"skew:", "skew:0.5", "skew:x", "skew:4x", "skew:1e7", "skew:nan"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        ck_assert_int_eq(tpb_cost_profile_builtin(bad[i], &p), TPB_ERR_INVALID);
}
END_TEST

START_TEST(blocks_are_runs_of_units)
{
    tpb_cost_profile_t p = parsed("3 1 2");
    /* 100 elements at g = 8: 12 units, blocks of 4 units; the last takes 100 - 96 */
    ck_assert_int_eq(tpb_cost_block_start(&p, 100, 8, 0), 0);
    ck_assert_int_eq(tpb_cost_block_start(&p, 100, 8, 1), 32);
    ck_assert_int_eq(tpb_cost_block_start(&p, 100, 8, 2), 64);
    ck_assert_int_eq(tpb_cost_block_start(&p, 100, 8, 3), 100);
    for (long e = 0; e < 100; e++)
        ck_assert_int_eq(tpb_cost_block_of(&p, 100, 8, e), e < 32 ? 0 : e < 64 ? 1 : 2);
    double u[12];
    tpb_cost_units(&p, 100, 8, u);
    ck_assert_double_eq(u[0], 3.0);
    ck_assert_double_eq(u[4], 1.0);
    ck_assert_double_eq(u[11], 2.0 * 12.0 / 8.0); /* the last unit: 12 elements */
    ck_assert_double_eq_tol(tpb_cost_range(&p, 100, 8, 0, 100), 4 * 3 + 4 * 1 + 4.5 * 2, 1e-12);
    ck_assert_double_eq_tol(tpb_cost_range(&p, 100, 8, 28, 36), 0.5 * 3 + 0.5 * 1, 1e-12);
    ck_assert_int_eq(tpb_cost_fits(&p, 100, 8), TPB_OK);
    ck_assert_int_eq(tpb_cost_fits(&p, 16, 8), TPB_ERR_INVALID); /* 3 blocks, 2 units */
    tpb_cost_profile_free(&p);
}
END_TEST

START_TEST(kept_follows_density)
{
    tpb_cost_profile_t p = parsed("4 1 0.001");
    ck_assert_int_eq(tpb_cost_kept(&p, 0, 1000), 1000);
    ck_assert_int_eq(tpb_cost_kept(&p, 1, 1000), 256); /* 250 up to a multiple of 16 */
    ck_assert_int_eq(tpb_cost_kept(&p, 2, 1000), 16);  /* at least 1, rounded up */
    ck_assert_int_eq(tpb_cost_kept(&p, 1, 10), 10);    /* never more than there is */
    tpb_cost_profile_free(&p);
}
END_TEST

/* The best largest time over every contiguous split of u[0..n) into t ranks (>= 1 unit
 * each): the reference that shares nothing with the bisection. */
static double brute(const double *u, int n, int t, const double *s, int at, int r)
{
    if (r == t - 1) {
        double c = 0.0;
        for (int i = at; i < n; i++)
            c += u[i];
        return c / s[r];
    }
    double best = INFINITY, c = 0.0;
    for (int end = at + 1; end <= n - (t - 1 - r); end++) {
        c += u[end - 1];
        double rest = brute(u, n, t, s, end, r + 1);
        best = fmin(best, fmax(c / s[r], rest));
    }
    return best;
}

START_TEST(cost_split_is_optimal_against_brute_force)
{
    uint64_t rng = 88172645463325252ull;
    for (int trial = 0; trial < 400; trial++) {
        int t = 1 + (int)(next(&rng) % 4), n = t + (int)(next(&rng) % 9);
        double u[16], s[4], tmax;
        long counts[4];
        for (int i = 0; i < n; i++) /* zeros and a wide range, as profiles have */
            u[i] = trial % 5 == 0 && i % 3 == 0 ? 0.0 : exp(3.0 * uniform(&rng));
        for (int r = 0; r < t; r++)
            s[r] = trial % 2 ? 1.0 : 0.25 + 4.0 * uniform(&rng);
        ck_assert_int_eq(tpb_partition_cost(u, n, t, s, counts, &tmax), TPB_OK);
        double best = brute(u, n, t, s, 0, 0), worst = 0.0;
        long sum = 0;
        for (int r = 0; r < t; r++) {
            ck_assert_int_ge(counts[r], 1);
            double c = 0.0;
            for (long i = sum; i < sum + counts[r]; i++)
                c += u[i];
            worst = fmax(worst, c / s[r]);
            sum += counts[r];
        }
        ck_assert_int_eq(sum, n);
        ck_assert_double_eq_tol(worst, tmax, 1e-12 * fmax(1.0, tmax));
        ck_assert_msg(worst <= best * (1.0 + 1e-9), "trial %d: %g > brute force %g", trial, worst,
                      best);
    }
}
END_TEST

START_TEST(cost_split_skew_goal)
{
    /* 4:1 skew over 1024 units, two equal ranks: even gives 4 : 1 of the work (LB 0.25 as
     * min / max), the cost split 1 : 1 */
    double u[1024], s[2] = {1.0, 1.0}, tmax;
    long c[2];
    for (int i = 0; i < 1024; i++)
        u[i] = i < 512 ? 4.0 : 1.0;
    ck_assert_int_eq(tpb_partition_cost(u, 1024, 2, s, c, &tmax), TPB_OK);
    ck_assert_int_eq(c[0], 320); /* 320 x 4 = 1280 = 192 x 4 + 512 */
    ck_assert_int_eq(c[1], 704);
    ck_assert_double_eq_tol(tmax, 1280.0, 1e-9);
    /* with a rank twice as fast it takes twice the cost */
    s[0] = 2.0;
    ck_assert_int_eq(tpb_partition_cost(u, 1024, 2, s, c, &tmax), TPB_OK);
    ck_assert_double_eq_tol(tmax, 2560.0 / 3.0, 4.0); /* 2T + T = 2560, to a unit */
}
END_TEST

START_TEST(cost_split_refusals)
{
    double u[2] = {1, 1}, s[3] = {1, 1, 1}, bad[2] = {1, NAN};
    long c[3] = {-1, -1, -1};
    ck_assert_int_eq(tpb_partition_cost(u, 2, 3, s, c, NULL), TPB_ERR_INVALID);
    ck_assert_int_eq(tpb_partition_cost(u, 2, 2, bad, c, NULL), TPB_ERR_INVALID);
    ck_assert_int_eq(c[0], -1); /* nothing written */
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("costprofile");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, parse_numbers_commas_comments);
    tcase_add_test(tc, parse_refusals_name_the_block);
    tcase_add_test(tc, builtin_skew);
    tcase_add_test(tc, blocks_are_runs_of_units);
    tcase_add_test(tc, kept_follows_density);
    tcase_add_test(tc, cost_split_is_optimal_against_brute_force);
    tcase_add_test(tc, cost_split_skew_goal);
    tcase_add_test(tc, cost_split_refusals);
    suite_add_tcase(s, tc);
    return s;
}

TPB_TEST_MAIN(suite)
