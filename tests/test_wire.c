/* test_wire.c (2+ ranks) - the structs that cross MPI are sent by their datatypes:
 * every field arrives, and the datatype covers every byte a field holds. */
#include <math.h>
#include <string.h>

#include "run/wire.h"
#include "tpb_test_mpi.h"

static int rank(void)
{
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

START_TEST(types_match_their_structs)
{
    for (int w = 0; w < TPB_WIRE_COUNT; w++) {
        MPI_Datatype t;
        ck_assert_int_eq(tpb_wire_type((tpb_wire_t)w, &t), TPB_OK);
        MPI_Aint lb, extent;
        int size;
        MPI_Type_get_extent(t, &lb, &extent);
        MPI_Type_size(t, &size);
        ck_assert_int_eq(lb, 0);
        ck_assert_int_eq((size_t)extent, tpb_wire_struct_size((tpb_wire_t)w));
        /* what MPI carries is what the fields hold: a field missing from the datatype (or
         * one of the wrong size) shows up here */
        ck_assert_int_eq((size_t)size, tpb_wire_field_bytes((tpb_wire_t)w));
        ck_assert(tpb_wire_field_bytes((tpb_wire_t)w) <= tpb_wire_struct_size((tpb_wire_t)w));
        MPI_Type_free(&t);
    }
}
END_TEST

/* Every rank sends a rank info whose fields all differ; rank 0 gets them all back. */
START_TEST(rank_info_round_trip)
{
    int size, me = rank();
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    tpb_rank_info_t mine = {.speed = 1.5 + me,
                            .fraction = 0.25,
                            .flop = 3e9,
                            .mem = 4e6,
                            .max_err = NAN,
                            .speed_spread = 0.03,
                            .peak_gflops = 78.25,
                            .emulate_achieved = 0.5,
                            .shard = 1234567890123L + me,
                            .speed_samples = 17 + me};
    tpb_rank_info_t all[size];
    memset(all, 0, sizeof(all));
    MPI_Datatype t;
    ck_assert_int_eq(tpb_wire_type(TPB_WIRE_RANK_INFO, &t), TPB_OK);
    MPI_Allgather(&mine, 1, t, all, 1, t, MPI_COMM_WORLD);
    MPI_Type_free(&t);
    for (int r = 0; r < size; r++) {
        ck_assert_double_eq(all[r].speed, 1.5 + r);
        ck_assert_double_eq(all[r].fraction, 0.25);
        ck_assert_double_eq(all[r].flop, 3e9);
        ck_assert_double_eq(all[r].mem, 4e6);
        ck_assert(isnan(all[r].max_err));
        ck_assert_double_eq(all[r].speed_spread, 0.03);
        ck_assert_double_eq(all[r].peak_gflops, 78.25);
        ck_assert_double_eq(all[r].emulate_achieved, 0.5);
        ck_assert_int_eq(all[r].shard, 1234567890123L + r);
        ck_assert_int_eq(all[r].speed_samples, 17 + r);
    }
}
END_TEST

START_TEST(round_and_speed_round_trip)
{
    int size, me = rank();
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    tpb_round_rank_t mine = {.compute_us = 10 + me, .spread = 0.1, .span_us = 20, .shard = 64 + me};
    tpb_round_rank_t w[size];
    tpb_cal_speed_t cs = {.speed = 100.0 / (me + 1), .spread = 0.04, .samples = 8 + me};
    tpb_cal_speed_t ws[size];
    tpb_mark_t mk[2] = {{1, 2, 3}, {4, 5, 6 + me}}, wm[2 * size];
    MPI_Datatype t;
    ck_assert_int_eq(tpb_wire_type(TPB_WIRE_ROUND_RANK, &t), TPB_OK);
    MPI_Allgather(&mine, 1, t, w, 1, t, MPI_COMM_WORLD);
    MPI_Type_free(&t);
    ck_assert_int_eq(tpb_wire_type(TPB_WIRE_CAL_SPEED, &t), TPB_OK);
    MPI_Allgather(&cs, 1, t, ws, 1, t, MPI_COMM_WORLD);
    MPI_Type_free(&t);
    ck_assert_int_eq(tpb_wire_type(TPB_WIRE_MARK, &t), TPB_OK);
    MPI_Allgather(mk, 2, t, wm, 2, t, MPI_COMM_WORLD);
    MPI_Type_free(&t);
    for (int r = 0; r < size; r++) {
        ck_assert_double_eq(w[r].compute_us, 10 + r);
        ck_assert_double_eq(w[r].span_us, 20);
        ck_assert_int_eq(w[r].shard, 64 + r);
        ck_assert_double_eq(ws[r].speed, 100.0 / (r + 1));
        ck_assert_int_eq(ws[r].samples, 8 + r);
        ck_assert_double_eq(wm[2 * r].c0, 1);
        ck_assert_double_eq(wm[2 * r + 1].x1, 6 + r);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("wire");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, types_match_their_structs);
    tcase_add_test(tc, rank_info_round_trip);
    tcase_add_test(tc, round_and_speed_round_trip);
    suite_add_tcase(s, tc);
    return s;
}

TPB_TEST_MPI_MAIN(suite)
