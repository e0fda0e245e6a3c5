/* test_clock.c (2+ ranks) - min-RTT offsets: near 0 on one host, and an injected
 * offset recovered to within 0.1 ms. */
#include <math.h>

#include "run/clocksync.h"
#include "tpb_test_mpi.h"

static void sync_with(double inject_rank1, tpb_clock_sample_t *s)
{
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    tpb_clock_t c = {r == 1 ? inject_rank1 : 0.0};
    ck_assert_int_eq(tpb_clock_sync(MPI_COMM_WORLD, &c, 50, s), TPB_OK);
}

START_TEST(same_host_offsets_near_zero)
{
    int r, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    tpb_clock_sample_t s[64];
    sync_with(0.0, s);
    if (r == 0)
        for (int p = 0; p < n; p++) {
            ck_assert_msg(fabs(s[p].offset_us) <= 0.5 * s[p].rtt_us + 1.0,
                          "rank %d offset %.3f rtt %.3f", p, s[p].offset_us, s[p].rtt_us);
            ck_assert(s[p].rtt_us >= 0.0);
        }
}
END_TEST

START_TEST(injected_offset_recovered)
{
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    tpb_clock_sample_t s[64];
    sync_with(50000.0, s);
    if (r == 0) {
        ck_assert_msg(fabs(s[1].offset_us - 50000.0) < 100.0, "offset %.3f", s[1].offset_us);
        /* a time read on rank 1's clock moves back onto rank 0's */
        ck_assert_double_eq_tol(tpb_clock_correct(&s[1], NULL, s[1].at_us + 50000.0), s[1].at_us,
                                100.0);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("clock");
    TCase *tc = tcase_create("mpi");
    tcase_add_test(tc, same_host_offsets_near_zero);
    tcase_add_test(tc, injected_offset_recovered);
    suite_add_tcase(s, tc);
    return s;
}

TPB_TEST_MPI_MAIN(suite)
