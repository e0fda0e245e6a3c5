/* test_overlap.c - the figures of a chunked config from hand-made marks. */
#include <math.h>

#include "base/overlap.h"
#include "tpb_test.h"

/* Two ranks, one group, three iterations, two chunks. Rank 0 computes 40 + 40 us and ends
 * at 100 us; rank 1 computes 30 + 30 us and waits for rank 0: the step is 100 us, the
 * longest GEMM 80 us, so 20 us of communication are exposed (rank 1's wait is imbalance). */
START_TEST(figures_from_marks)
{
    tpb_mark_t m[6];
    double ch[2 * 3 * 2 * 3];
    for (int r = 0; r < 2; r++)
        for (int i = 0; i < 3; i++) {
            double t0 = 1000.0 * i, g = r == 0 ? 40.0 : 30.0;
            m[r * 3 + i] = (tpb_mark_t){.c0 = t0, .c1 = t0 + 2 * g, .x1 = t0 + 100.0};
            double *c = &ch[(r * 3 + i) * 6];
            c[0] = t0;
            c[1] = t0 + g;
            c[2] = t0 + g + 15.0;
            c[3] = t0 + g;
            c[4] = t0 + 2 * g;
            c[5] = t0 + 100.0;
        }
    /* alone: whole GEMM, chunked GEMMs, chunked collectives, serial collective */
    double alone[8] = {70.0, 76.0, 40.0, 30.0, 55.0, 60.0, 41.0, 30.0};
    tpb_overlap_t o;
    tpb_overlap_figures(2, 2, 3, 2, m, ch, alone, &o);
    ck_assert_double_eq_tol(o.t_overlap_us, 100.0, 1e-9);
    ck_assert_double_eq_tol(o.gemm_busy_us, 80.0, 1e-9);
    ck_assert_double_eq_tol(o.exposed_us, 20.0, 1e-9);
    ck_assert_double_eq_tol(o.t_gemm_us, 76.0, 1e-9);
    ck_assert_double_eq_tol(o.t_comm_us, 41.0, 1e-9);
    ck_assert_double_eq_tol(o.t_serial_us, 100.0, 1e-9); /* rank 0: 70 + 30 */
    ck_assert_double_eq_tol(o.efficiency, 1.0 - 20.0 / 41.0, 1e-12);
    ck_assert_double_eq_tol(o.interference, 80.0 / 76.0, 1e-12);
    ck_assert_double_eq_tol(o.chunking_cost, 60.0 / 55.0, 1e-12); /* rank 1: 1.091 > 1.086 */
    ck_assert_double_eq_tol(o.speedup, 1.0, 1e-12);
    ck_assert_double_eq_tol(tpb_overlap_busy(&ch[0], 2), 80.0, 1e-12);
}
END_TEST

START_TEST(nothing_measured_is_unknown)
{
    tpb_overlap_t o;
    double alone[4] = {NAN, NAN, NAN, NAN};
    tpb_overlap_figures(1, 1, 0, 2, NULL, NULL, alone, &o);
    ck_assert(isnan(o.t_overlap_us) && isnan(o.exposed_us) && isnan(o.efficiency));
    ck_assert(isnan(o.speedup) && isnan(o.t_serial_us));
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("overlap");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, figures_from_marks);
    tcase_add_test(tc, nothing_measured_is_unknown);
    suite_add_tcase(s, tc);
    return s;
}

TPB_TEST_MAIN(suite)
