/* test_cuda_plan.c - the CUDA backend's device-free decisions (run without a GPU). */
#include <string.h>

#include "backend/backend.h"
#include "backend/cuda/cuda_plan.h"
#include "tpb_test.h"

START_TEST(pick_device)
{
    int dev = -1;
    ck_assert_int_eq(tpb_cuda_pick_device(5, 4, NULL, 0, &dev), TPB_OK);
    ck_assert_int_eq(dev, 1);
    ck_assert_int_eq(tpb_cuda_pick_device(3, 1, NULL, 0, &dev), TPB_OK); /* one visible device */
    ck_assert_int_eq(dev, 0);
    int map[3] = {2, 0, 1};
    ck_assert_int_eq(tpb_cuda_pick_device(0, 4, map, 3, &dev), TPB_OK);
    ck_assert_int_eq(dev, 2);
    dev = -1;
    ck_assert_int_eq(tpb_cuda_pick_device(3, 4, map, 3, &dev), TPB_ERR_INVALID);
    ck_assert_int_eq(dev, -1);
    ck_assert_ptr_nonnull(strstr(tpb_err_msg(), "--gpu-map has 3 entries"));
    ck_assert_int_eq(tpb_cuda_pick_device(0, 2, map, 3, &dev), TPB_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(tpb_err_msg(), "only 2 devices"));
    ck_assert_int_eq(tpb_cuda_pick_device(0, 0, NULL, 0, &dev), TPB_ERR_NO_DEVICE);
    ck_assert_ptr_nonnull(strstr(tpb_err_msg(), "no GPU is visible"));
}
END_TEST

START_TEST(sharing)
{
    /* memory shares: 8 local ranks on 4 GPUs -> 2 each; a map can stack them */
    ck_assert_int_eq(tpb_cuda_ranks_on_device(8, 4, NULL, 0, 1), 2);
    ck_assert_int_eq(tpb_cuda_ranks_on_device(3, 1, NULL, 0, 0), 3);
    int stack[4] = {0, 0, 0, 1};
    ck_assert_int_eq(tpb_cuda_ranks_on_device(4, 2, stack, 4, 0), 3);
    ck_assert_int_eq(tpb_cuda_ranks_on_device(4, 2, stack, 4, 1), 1);
    int host[3] = {0, 0, 1}, dev[3] = {0, 1, 0};
    ck_assert_int_eq(tpb_cuda_check_sharing(host, dev, 3, TPB_COMM_NCCL), TPB_OK);
    dev[1] = 0;
    ck_assert_int_eq(tpb_cuda_check_sharing(host, dev, 3, TPB_COMM_NCCL), TPB_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(tpb_err_msg(), "--comm mpi"));
    ck_assert_int_eq(tpb_cuda_check_sharing(host, dev, 3, TPB_COMM_MPI), TPB_OK);
}
END_TEST

START_TEST(sm_request_and_repeat)
{
    ck_assert_int_eq(tpb_cuda_sm_request(132, 0.5, 8, 8), 64);
    ck_assert_int_eq(tpb_cuda_sm_request(132, 1.0, 8, 8), 132);
    ck_assert_int_eq(tpb_cuda_sm_request(132, 0.01, 8, 8), 8);
    ck_assert_int_eq(tpb_cuda_sm_request(100, 0.33, 2, 2), 34);
    int full;
    long extra;
    tpb_cuda_repeat_plan(0.5, 1000, &full, &extra);
    ck_assert_int_eq(full, 2);
    ck_assert_int_eq(extra, 0);
    tpb_cuda_repeat_plan(0.4, 1000, &full, &extra);
    ck_assert_int_eq(full, 2);
    ck_assert_int_eq(extra, 500);
    tpb_cuda_repeat_plan(1.0, 64, &full, &extra);
    ck_assert_int_eq(full, 1);
    ck_assert_int_eq(extra, 0);
}
END_TEST

START_TEST(blocks_and_build)
{
    size_t eq[3] = {8, 8, 8}, uneq[3] = {8, 16, 8};
    ck_assert_int_eq(tpb_cuda_blocks_equal(eq, 3), 1);
    ck_assert_int_eq(tpb_cuda_blocks_equal(uneq, 3), 0);
    /* auto picks cuda only when it is built and a GPU is visible */
    tpb_backend_kind_t kind;
    int gpu = tpb_cuda_built() && tpb_cuda_device_count() > 0;
    ck_assert_ptr_eq(tpb_backend_select(TPB_BACKEND_AUTO, &kind),
                     gpu ? &tpb_backend_cuda : &tpb_backend_host);
    ck_assert_int_eq(kind, gpu ? TPB_BACKEND_CUDA : TPB_BACKEND_HOST);
    ck_assert_ptr_eq(tpb_backend_select(TPB_BACKEND_CUDA, &kind), &tpb_backend_cuda);
    /* every slot of both tables is filled */
    const tpb_backend_ops_t *tables[2] = {&tpb_backend_host, &tpb_backend_cuda};
    for (int i = 0; i < 2; i++) {
        const void *const *slot = (const void *const *)tables[i];
        for (size_t j = 0; j < sizeof(tpb_backend_ops_t) / sizeof(void *); j++)
            ck_assert_ptr_nonnull(slot[j]);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("cuda_plan");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, pick_device);
    tcase_add_test(tc, sharing);
    tcase_add_test(tc, sm_request_and_repeat);
    tcase_add_test(tc, blocks_and_build);
    suite_add_tcase(s, tc);
    return s;
}

TPB_TEST_MAIN(suite)
