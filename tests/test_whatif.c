/* test_whatif.c - what-if replay on constructed timelines (hand-computed values). */
#include <math.h>

#include "base/whatif.h"
#include "tpb_test.h"

#define ITERS 9

/* Iteration i starts at 10000 i on every rank; rank r computes comp[r] (+ extra[r]
 * in the iterations where (i % every) == 0); the collective ends xfer after the
 * group's last arrival. */
static void synth(tpb_mark_t *m, int world, int tp, const double *comp, const double *extra,
                  int every, double xfer)
{
    for (int i = 0; i < ITERS; i++)
        for (int g = 0; g < world / tp; g++) {
            double a = -INFINITY;
            for (int r = g * tp; r < (g + 1) * tp; r++) {
                tpb_mark_t *k = &m[r * ITERS + i];
                k->c0 = 10000.0 * i;
                k->c1 = k->c0 + comp[r] + (extra && i % every == 0 ? extra[r] : 0.0);
                a = fmax(a, k->c1);
            }
            for (int r = g * tp; r < (g + 1) * tp; r++)
                m[r * ITERS + i].x1 = a + xfer;
        }
}

START_TEST(two_ranks)
{
    /* 100 and 300 us, 50 us collective: step 350. Without the straggler both compute
     * what its peer did, 100: step 150, S = 350 / 150 (a median of the two, 200, would
     * have kept half the straggler's delay: 250) */
    tpb_mark_t m[2 * ITERS];
    double comp[2] = {100, 300};
    synth(m, 2, 2, comp, NULL, 1, 50);
    tpb_whatif_t w;
    ck_assert_int_eq(tpb_whatif_replay(m, 2, 2, ITERS, 1, 350.0, &w), TPB_OK);
    ck_assert_double_eq_tol(w.step_us, 150.0, 1e-9);
    ck_assert_double_eq_tol(w.slowdown, 350.0 / 150.0, 1e-12);
    ck_assert_double_eq_tol(w.straggler_step_us, 150.0, 1e-9);
}
END_TEST

START_TEST(four_ranks_all_vs_straggler)
{
    /* 100, 200, 300, 400: the median without the slowest is 200. All replaced: 200 + 50 =
     * 250. Only rank 3 replaced by its peers' median (200): max(100, 200, 300, 200) + 50 =
     * 350. Measured 450. */
    tpb_mark_t m[4 * ITERS];
    double comp[4] = {100, 200, 300, 400};
    synth(m, 4, 4, comp, NULL, 1, 50);
    tpb_whatif_t w;
    ck_assert_int_eq(tpb_whatif_replay(m, 4, 4, ITERS, 3, 450.0, &w), TPB_OK);
    ck_assert_double_eq_tol(w.step_us, 250.0, 1e-9);
    ck_assert_double_eq_tol(w.slowdown, 1.8, 1e-12);
    ck_assert_double_eq_tol(w.straggler_step_us, 350.0, 1e-9);
    ck_assert_double_eq_tol(w.straggler_slowdown, 450.0 / 350.0, 1e-12);
}
END_TEST

START_TEST(balanced_is_one)
{
    tpb_mark_t m[4 * ITERS];
    double comp[4] = {500, 500, 500, 500};
    synth(m, 4, 2, comp, NULL, 1, 80);
    tpb_whatif_t w;
    ck_assert_int_eq(tpb_whatif_replay(m, 4, 2, ITERS, 0, 580.0, &w), TPB_OK);
    ck_assert_double_eq_tol(w.step_us, 580.0, 1e-9);
    ck_assert_double_eq_tol(w.slowdown, 1.0, 1e-12);
    ck_assert_double_eq_tol(w.straggler_slowdown, 1.0, 1e-12);
}
END_TEST

START_TEST(other_group_sets_the_step)
{
    /* Two groups of 2: group 0 {100, 900}, group 1 {600, 600}. Measured step 950.
     * All replaced: group 0 -> 100 + 50, group 1 -> 650: step 650.
     * Straggler rank 1 only: group 0 -> max(100, 100) + 50 = 150, group 1 keeps
     * its measured 650: step 650. */
    tpb_mark_t m[4 * ITERS];
    double comp[4] = {100, 900, 600, 600};
    synth(m, 4, 2, comp, NULL, 1, 50);
    tpb_whatif_t w;
    ck_assert_int_eq(tpb_whatif_replay(m, 4, 2, ITERS, 1, 950.0, &w), TPB_OK);
    ck_assert_double_eq_tol(w.step_us, 650.0, 1e-9);
    ck_assert_double_eq_tol(w.straggler_step_us, 650.0, 1e-9);
    ck_assert_double_eq_tol(w.slowdown, 950.0 / 650.0, 1e-12);
}
END_TEST

START_TEST(periodic_stall_and_skewed_starts)
{
    /* Rank 1 stalls 1000 us every 3rd iteration: the median replay removes it. */
    tpb_mark_t m[2 * ITERS];
    double comp[2] = {200, 200}, extra[2] = {0, 1000};
    synth(m, 2, 2, comp, extra, 3, 40);
    tpb_whatif_t w;
    ck_assert_int_eq(tpb_whatif_replay(m, 2, 2, ITERS, 1, 240.0, &w), TPB_OK);
    ck_assert_double_eq_tol(w.step_us, 240.0, 1e-9); /* stalled: (200+1200)/2 + 40 < measured */
    /* one stalled iteration replayed: the stalled rank computes what its peer did, 200 */
    double scratch[4];
    ck_assert_double_eq_tol(tpb_whatif_group_step(m, 2, ITERS, 0, 0, TPB_WHATIF_ALL, scratch),
                            240.0, 1e-9);
    ck_assert_double_eq_tol(tpb_whatif_group_step(m, 2, ITERS, 0, 0, 1, scratch), 240.0, 1e-9);
    ck_assert_double_eq_tol(tpb_whatif_group_step(m, 2, ITERS, 0, 0, TPB_WHATIF_NONE, scratch),
                            1240.0, 1e-9);
    /* a rank that starts 30 us late (computing 170): the slowest (rank 0, 200) is left out,
     * both compute 170, A' = 30 + 170 */
    m[1 * ITERS + 4].c0 += 30.0;
    ck_assert_double_eq_tol(tpb_whatif_group_step(m, 2, ITERS, 0, 4, TPB_WHATIF_ALL, scratch),
                            30.0 + 170.0 + 40.0, 1e-9);
}
END_TEST

START_TEST(tp_one_has_no_straggler_replay)
{
    tpb_mark_t m[2 * ITERS];
    double comp[2] = {100, 300};
    synth(m, 2, 1, comp, NULL, 1, 5);
    tpb_whatif_t w;
    ck_assert_int_eq(tpb_whatif_replay(m, 2, 1, ITERS, -1, 305.0, &w), TPB_OK);
    ck_assert_double_eq_tol(w.step_us, 305.0, 1e-9);
    ck_assert(isnan(w.straggler_step_us) && isnan(w.straggler_slowdown));
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("whatif");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, two_ranks);
    tcase_add_test(tc, four_ranks_all_vs_straggler);
    tcase_add_test(tc, balanced_is_one);
    tcase_add_test(tc, other_group_sets_the_step);
    tcase_add_test(tc, periodic_stall_and_skewed_starts);
    tcase_add_test(tc, tp_one_has_no_straggler_replay);
    suite_add_tcase(s, tc);
    return s;
}

TPB_TEST_MAIN(suite)
