/* test_fleet.c - a fleet's scores (base/fleet.h): against the cohort's median round by round,
 * so that what slows a whole round cancels and a rank slow in every round stands out; the
 * interval over the rounds; the verdicts at the threshold. */
#include <math.h>
#include <string.h>

#include "base/fleet.h"
#include "base/sequential.h"
#include "record/fleet_out.h"
#include "tpb_test.h"

START_TEST(cohort_rounds)
{
    enum { N = 4, R = 5 };
    /* ranks 0-2 at 100, rank 3 at 50, all of round 2 at half speed (a busy moment) */
    double v[N * R];
    for (int i = 0; i < N; i++)
        for (int j = 0; j < R; j++)
            v[i * R + j] = (i == 3 ? 50.0 : 100.0) * (j == 2 ? 0.5 : 1.0);
    tpb_fleet_score_t s[N];
    tpb_fleet_scores(v, NULL, N, R, s);
    for (int i = 0; i < 3; i++)
        ck_assert_double_eq_tol(s[i].score, 1.0, 1e-12);
    ck_assert_double_eq_tol(s[3].score, 0.5, 1e-12); /* the round's slowdown cancelled */
    ck_assert_double_eq_tol(s[3].hi, 0.5, 1e-12);    /* every round alike: no width */
    ck_assert_int_eq(tpb_fleet_judge(s[3], 0.9), TPB_FLEET_EXCLUDE);
    ck_assert_int_eq(tpb_fleet_judge(s[0], 0.9), TPB_FLEET_OK);
    /* two cohorts (turns): rank 3 measured alone in its turn is its own median */
    int cohort[N] = {0, 0, 0, 1};
    tpb_fleet_scores(v, cohort, N, R, s);
    ck_assert_double_eq_tol(s[3].score, 1.0, 1e-12);
}
END_TEST

START_TEST(noisy_rounds_are_suspect)
{
    enum { N = 2, R = 5 };
    /* rank 1 slow in two rounds of five (a passing slowdown): its median ratio is 1, but a
     * rank slow in three rounds has a median below and an interval reaching 1: suspect */
    double a[N * R] = {100, 100, 100, 100, 100, 100, 60, 100, 60, 100};
    double b[N * R] = {100, 100, 100, 100, 100, 60, 60, 100, 60, 100};
    tpb_fleet_score_t s[N];
    tpb_fleet_scores(a, NULL, N, R, s);
    ck_assert_int_eq(tpb_fleet_judge(s[1], 0.9), TPB_FLEET_OK);
    tpb_fleet_scores(b, NULL, N, R, s);
    ck_assert(s[1].score < 0.9 && s[1].hi >= 0.9);
    ck_assert_int_eq(tpb_fleet_judge(s[1], 0.9), TPB_FLEET_SUSPECT);
    /* unknown figures: NaN scores, judged OK (nothing to say) */
    double u[N * R];
    for (int i = 0; i < N * R; i++)
        u[i] = NAN;
    tpb_fleet_scores(u, NULL, N, R, s);
    ck_assert(isnan(s[0].score));
    ck_assert_int_eq(tpb_fleet_judge(s[0], 0.9), TPB_FLEET_OK);
    double med, half;
    tpb_fleet_figure(a + R, R, &med, &half); /* rates 100 100 60 100 60: median 100 */
    ck_assert_double_eq_tol(med, 100.0, 1e-12);
    ck_assert(half > 0.0);
}
END_TEST

/* --budget with --fleet: a rank at 0.84 of the others in a pattern of five rounds (0.80 0.95
 * 0.84 0.78 0.86) is suspect at 0.9 after look 1 (its interval at 97.5 % reaches 0.95) and
 * through look 5; with the pattern six times over (look 6, 99.88 %) its interval lies below
 * 0.9 and the node is decided (excluded). Computed by hand from base/interval.c's rule: the
 * median's order statistics at the effective size, no wider than 5 batches' t-interval. */
START_TEST(budget_looks_decide)
{
    enum { N = 4, RMAX = 30 };
    static const double f[5] = {0.80, 0.95, 0.84, 0.78, 0.86};
    double v[N * RMAX];
    int node_of[N] = {0, 0, 1, 1}, first = -2;
    tpb_fleet_score_t s[N];
    for (int look = 1; look <= 6; look++) {
        int R = 5 * look;
        for (int i = 0; i < N; i++)
            for (int j = 0; j < R; j++)
                v[i * R + j] = i == 3 ? 100.0 * f[j % 5] : 100.0;
        tpb_fleet_scores_at(v, NULL, N, R, tpb_seq_conf(0.05, look), s);
        ck_assert_double_eq_tol(s[3].score, 0.84, 1e-12);
        int open = tpb_fleet_gemm_open(s, node_of, N, 2, 0.9, &first);
        ck_assert_int_eq(open, look < 6);
        ck_assert_int_eq(first, look < 6 ? 3 : -1);
        ck_assert_int_eq(tpb_fleet_judge(s[3], 0.9),
                         look < 6 ? TPB_FLEET_SUSPECT : TPB_FLEET_EXCLUDE);
    }
    /* at 0.95 the same as tpb_fleet_scores, bit for bit; at a higher level no narrower */
    tpb_fleet_score_t a[N], b[N];
    tpb_fleet_scores(v, NULL, N, 5, a);
    tpb_fleet_scores_at(v, NULL, N, 5, 0.95, b);
    ck_assert_mem_eq(a, b, sizeof(a));
    tpb_fleet_scores_at(v, NULL, N, 5, tpb_seq_conf(0.05, 2), b);
    ck_assert(b[3].lo <= a[3].lo && b[3].hi >= a[3].hi);
}
END_TEST

/* A node's slowest rank: the lowest score, the first of a tie, a known score before an unknown
 * one; only a node whose slowest rank is suspect is open (a suspect rank beside an excluded
 * one is not: the node is decided). */
START_TEST(slowest_and_open)
{
    enum { N = 6 };
    int node_of[N] = {0, 0, 1, 1, 2, 2}, slowest[3], first = -2;
    tpb_fleet_score_t s[N] = {
        {NAN, NAN, NAN},   {0.95, 0.9, 1.0}, /* node 0: the known one */
        {0.85, 0.8, 0.95}, {0.7, 0.6, 0.78}, /* node 1: excluded, its suspect rank aside */
        {0.88, 0.8, 0.95}, {0.88, 0.7, 0.99} /* node 2: a tie, the first; suspect */
    };
    tpb_fleet_slowest(s, node_of, N, 3, slowest);
    ck_assert_int_eq(slowest[0], 1);
    ck_assert_int_eq(slowest[1], 3);
    ck_assert_int_eq(slowest[2], 4);
    ck_assert_int_eq(tpb_fleet_gemm_open(s, node_of, N, 3, 0.9, &first), 1);
    ck_assert_int_eq(first, 4);
    ck_assert_int_eq(tpb_fleet_gemm_open(s, node_of, N, 3, 0.8, &first), 0);
    ck_assert_int_eq(first, -1);
}
END_TEST

/* --fleet --repeat: a node excluded in more than half of the passes is excluded over them,
 * one excluded in fewer is transient (left in, named). */
START_TEST(passes_count_exclusions)
{
    tpb_fleet_passes_t p;
    tpb_fleet_passes_init(&p, 3);
    ck_assert_int_eq(tpb_fleet_passes_add(&p, "--exclude=n1,n2"), TPB_OK);
    ck_assert_int_eq(tpb_fleet_passes_add(&p, "--exclude=n1"), TPB_OK);
    ck_assert_int_eq(tpb_fleet_passes_add(&p, ""), TPB_OK);
    ck_assert_int_eq(p.done, 3);
    ck_assert_int_eq(p.n, 2);
    ck_assert_str_eq(p.host[0], "n1");
    ck_assert_int_eq(p.count[0], 2);
    ck_assert_str_eq(p.host[1], "n2");
    ck_assert_int_eq(p.count[1], 1);
    tpb_buf_t txt = TPB_BUF_INIT;
    tpb_fleet_passes_answer(&p, &txt);
    ck_assert_ptr_nonnull(strstr(tpb_buf_str(&txt), "# over 3 of 3 passes: n1 excluded in 2, n2 "
                                                    "excluded in 1\n"));
    ck_assert_ptr_nonnull(strstr(tpb_buf_str(&txt), "left in): n2\n"));
    ck_assert_ptr_nonnull(strstr(tpb_buf_str(&txt), "# exclude over the passes: --exclude=n1\n"));
    tpb_buf_free(&txt);
    tpb_fleet_passes_free(&p);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("fleet");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, cohort_rounds);
    tcase_add_test(tc, noisy_rounds_are_suspect);
    tcase_add_test(tc, passes_count_exclusions);
    tcase_add_test(tc, budget_looks_decide);
    tcase_add_test(tc, slowest_and_open);
    suite_add_tcase(s, tc);
    return s;
}

TPB_TEST_MAIN(suite)
