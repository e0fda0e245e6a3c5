/* test_agree.c (2+ ranks) - an error seen on one rank becomes every rank's verdict. */
#include <string.h>

#include "run/agree.h"
#include "run/topo_mpi.h"
#include "tpb_test_mpi.h"

static int rank(void)
{
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

START_TEST(nobody_fails)
{
    tpb_err_clear();
    ck_assert_int_eq(tpb_agree(MPI_COMM_WORLD, TPB_OK), TPB_OK);
}
END_TEST

START_TEST(one_rank_fails)
{
    tpb_status_t local = TPB_OK;
    if (rank() == 1)
        local = tpb_err_set(TPB_ERR_NOMEM, "shape too big on rank 1");
    else
        tpb_err_clear();
    ck_assert_int_eq(tpb_agree(MPI_COMM_WORLD, local), TPB_ERR_NOMEM);
    ck_assert_str_eq(tpb_err_msg(), "shape too big on rank 1");
}
END_TEST

START_TEST(agreed_or_alone)
{
    tpb_status_t local =
        rank() == 1 ? tpb_err_set(TPB_ERR_BACKEND, "rank 1's GEMM failed") : TPB_OK;
    int before = tpb_err_agreed(local); /* asserted after the collective: no rank skips it */
    tpb_status_t st = tpb_agree(MPI_COMM_WORLD, local);
    ck_assert_int_eq(before, rank() != 1); /* rank 1 was alone with it */
    ck_assert_int_eq(st, TPB_ERR_BACKEND);
    ck_assert(tpb_err_agreed(st)); /* every rank holds it now */
    st = tpb_err_set(TPB_ERR_MPI, "a failed call after it");
    ck_assert(!tpb_err_agreed(st)); /* a new error is this rank's until agreed */
    ck_assert(tpb_err_agreed(TPB_OK));
    ck_assert(tpb_err_agreed(tpb_err_set(TPB_ERR_INTERRUPTED, "stop"))); /* at one iteration */
    tpb_err_clear();
}
END_TEST

START_TEST(lowest_failing_rank_wins)
{
    tpb_status_t local =
        tpb_err_set(rank() == 0 ? TPB_ERR_IO : TPB_ERR_INVALID, "rank %d says no", rank());
    ck_assert_int_eq(tpb_agree(MPI_COMM_WORLD, local), TPB_ERR_IO);
    ck_assert_str_eq(tpb_err_msg(), "rank 0 says no");
}
END_TEST

START_TEST(topology)
{
    tpb_topo_t t;
    ck_assert_int_eq(tpb_topo_discover(MPI_COMM_WORLD, &t), TPB_OK);
    ck_assert_int_eq(t.rank, rank());
    ck_assert_int_eq(t.nhosts, 1); /* the tests run on one machine */
    ck_assert_int_eq(t.local_size, t.size);
    ck_assert_int_eq(t.local_rank, t.rank);
    ck_assert_str_eq(t.hosts[t.size - 1], t.host);
    tpb_topo_free(&t);
    char hosts[4][TPB_HOST_LEN] = {"b", "a", "b", "c"};
    int idx[4];
    ck_assert_int_eq(tpb_topo_index_hosts(hosts, 4, idx), 3);
    ck_assert_int_eq(idx[0], 0);
    ck_assert_int_eq(idx[1], 1);
    ck_assert_int_eq(idx[2], 0);
    ck_assert_int_eq(idx[3], 2);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("agree");
    TCase *tc = tcase_create("mpi");
    tcase_add_test(tc, nobody_fails);
    tcase_add_test(tc, one_rank_fails);
    tcase_add_test(tc, lowest_failing_rank_wins);
    tcase_add_test(tc, agreed_or_alone);
    tcase_add_test(tc, topology);
    suite_add_tcase(s, tc);
    return s;
}

TPB_TEST_MPI_MAIN(suite)
