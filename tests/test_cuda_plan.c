/* test_cuda_plan.c - the GPU class's and the CUDA backend's device-free decisions (run without
 * a GPU). */
#include <string.h>

#include "backend/backend.h"
#include "backend/cuda/cuda_plan.h"
#include "backend/gpu/gpu.h"
#include "backend/gpu/gpu_device.h"
#include "base/partition.h"
#include "tpb_test.h"

/* a GPU vendor's names as its refusals say them (no device call is made here) */
static const tpb_gpu_class_t vendor = {.backend = "vgpu", .visible_env = "VGPU_VISIBLE_DEVICES"};

START_TEST(pick_device)
{
    int dev = -1;
    ck_assert_int_eq(tpb_gpu_pick_device(&vendor, 5, 4, NULL, 0, &dev), TPB_OK);
    ck_assert_int_eq(dev, 1);
    ck_assert_int_eq(tpb_gpu_pick_device(&vendor, 3, 1, NULL, 0, &dev),
                     TPB_OK); /* one visible device */
    ck_assert_int_eq(dev, 0);
    int map[3] = {2, 0, 1};
    ck_assert_int_eq(tpb_gpu_pick_device(&vendor, 0, 4, map, 3, &dev), TPB_OK);
    ck_assert_int_eq(dev, 2);
    dev = -1;
    ck_assert_int_eq(tpb_gpu_pick_device(&vendor, 3, 4, map, 3, &dev), TPB_ERR_INVALID);
    ck_assert_int_eq(dev, -1);
    ck_assert_ptr_nonnull(strstr(tpb_err_msg(), "--gpu-map has 3 entries"));
    ck_assert_int_eq(tpb_gpu_pick_device(&vendor, 0, 2, map, 3, &dev), TPB_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(tpb_err_msg(), "only 2 devices"));
    ck_assert_int_eq(tpb_gpu_pick_device(&vendor, 0, 0, NULL, 0, &dev), TPB_ERR_NO_DEVICE);
    ck_assert_ptr_nonnull(strstr(tpb_err_msg(), "--backend vgpu: no GPU is visible"));
    ck_assert_ptr_nonnull(strstr(tpb_err_msg(), "check VGPU_VISIBLE_DEVICES"));
}
END_TEST

START_TEST(sharing)
{
    /* GPUs are told apart by UUID: with per-task CUDA_VISIBLE_DEVICES every rank says
     * device 0, yet the GPUs differ */
    char ids[3][TPB_GPU_ID_LEN] = {"GPU-aaa", "GPU-bbb", "GPU-aaa"};
    ck_assert_int_eq(tpb_gpu_ranks_sharing((const char(*)[TPB_GPU_ID_LEN])ids, 3, 0), 2);
    ck_assert_int_eq(tpb_gpu_ranks_sharing((const char(*)[TPB_GPU_ID_LEN])ids, 3, 1), 1);
    ck_assert_int_eq(
        tpb_gpu_check_sharing("VCCL", (const char(*)[TPB_GPU_ID_LEN])ids, 2, TPB_COMM_CCL), TPB_OK);
    ck_assert_int_eq(
        tpb_gpu_check_sharing("VCCL", (const char(*)[TPB_GPU_ID_LEN])ids, 3, TPB_COMM_CCL),
        TPB_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(tpb_err_msg(), "--comm mpi"));
    ck_assert_ptr_nonnull(strstr(tpb_err_msg(), "share GPU GPU-aaa: VCCL needs one GPU"));
    ck_assert_int_eq(
        tpb_gpu_check_sharing("VCCL", (const char(*)[TPB_GPU_ID_LEN])ids, 3, TPB_COMM_MPI), TPB_OK);
}
END_TEST

START_TEST(sm_request_and_repeat)
{
    ck_assert_int_eq(tpb_cuda_sm_request(132, 0.5, 8, 8), 72); /* 66 rounded up to 8 */
    ck_assert_int_eq(tpb_cuda_sm_request(132, 0.75, 8, 8), 104);
    ck_assert_int_eq(tpb_cuda_sm_request(128, 0.25, 8, 8), 32); /* exact: not one step more */
    ck_assert_int_eq(tpb_cuda_sm_request(132, 1.0, 8, 8), 132);
    ck_assert_int_eq(tpb_cuda_sm_request(132, 0.01, 8, 8), 8);
    ck_assert_int_eq(tpb_cuda_sm_request(100, 0.33, 2, 2), 34);
    int full;
    long extra;
    tpb_repeat_plan(0.5, 1000, &full, &extra);
    ck_assert_int_eq(full, 2);
    ck_assert_int_eq(extra, 0);
    tpb_repeat_plan(0.4, 1000, &full, &extra);
    ck_assert_int_eq(full, 2);
    ck_assert_int_eq(extra, 500);
    tpb_repeat_plan(1.0, 64, &full, &extra);
    ck_assert_int_eq(full, 1);
    ck_assert_int_eq(extra, 0);
}
END_TEST

START_TEST(blocks_and_build)
{
    /* auto picks cuda only when it is built and a GPU is visible */
    int gpu = tpb_backend_cuda.built && tpb_backend_cuda.device_count() > 0;
    const tpb_backend_class_t *chosen = tpb_backend_find("auto");
    ck_assert_ptr_eq(chosen, gpu ? &tpb_backend_cuda : &tpb_backend_host);
    ck_assert_ptr_eq(tpb_backend_find("cuda"), &tpb_backend_cuda);
    ck_assert_ptr_eq(tpb_backend_find("host"), &tpb_backend_host);
    ck_assert_ptr_null(tpb_backend_find("rocm"));
    ck_assert_str_eq(tpb_backend_names(), "auto, cuda or host");
    /* every slot of every registered class is filled; each owns its defaults and help */
    for (int i = 0; tpb_backends[i]; i++) {
        const tpb_backend_class_t *t = tpb_backends[i];
        void (*slots[])(void) = {(void (*)(void))t->device_count, (void (*)(void))t->check_config,
                                 (void (*)(void))t->open};
        for (size_t j = 0; j < sizeof(slots) / sizeof(slots[0]); j++)
            ck_assert_ptr_nonnull(slots[j]);
        ck_assert_ptr_nonnull(t->name);
        ck_assert_ptr_nonnull(t->about);
        ck_assert_ptr_nonnull(t->dtypes);
        ck_assert(t->defaults.granularity >= 1 && t->defaults.m >= 1);
    }
    /* every class runs every collective with equal blocks under every --comm it takes (its
     * capability table has a row for each); NCCL's reduce-scatter and all-gather take equal
     * blocks only, MPI's any */
    tpb_backend_cfg_t nccl = {.comm = TPB_COMM_CCL, .dtype = TPB_DTYPE_BF16},
                      mpi = {.comm = TPB_COMM_MPI, .dtype = TPB_DTYPE_FP32};
    char why[160] = "";
    for (int i = 0; tpb_backends[i]; i++)
        for (int k = 0; k < TPB_COLL_COUNT; k++) {
            ck_assert_int_eq(
                tpb_backend_supports(tpb_backends[i], &mpi, (tpb_coll_t)k, 1, why, sizeof(why)), 1);
            ck_assert_int_eq(
                tpb_backend_supports(tpb_backends[i], &nccl, (tpb_coll_t)k, 0, why, sizeof(why)),
                1);
            ck_assert_int_eq(
                tpb_backend_supports(&tpb_backend_host, &nccl, (tpb_coll_t)k, 1, why, sizeof(why)),
                1);
        }
    ck_assert_str_eq(why, "");
    ck_assert_int_eq(tpb_backend_supports(&tpb_backend_cuda, &nccl, TPB_COLL_REDUCE_SCATTER, 1, why,
                                          sizeof(why)),
                     0);
    ck_assert_str_eq(why, "the cuda backend's reduce-scatter needs equal blocks under "
                          "--comm ccl (ncclReduceScatter)");
    ck_assert_int_eq(
        tpb_backend_supports(&tpb_backend_cuda, &nccl, TPB_COLL_ALLGATHER, 1, why, sizeof(why)), 0);
    ck_assert_str_eq(why, "the cuda backend's all-gather needs equal blocks under "
                          "--comm ccl (ncclAllGather)");
    ck_assert_int_eq(
        tpb_backend_supports(&tpb_backend_cuda, &nccl, TPB_COLL_ALLREDUCE, 1, why, sizeof(why)), 1);
    /* a class without a row for a kind says so */
    const tpb_backend_cap_t one[] = {
        {TPB_COLL_ALLREDUCE, TPB_CAP_COMMS_ALL, 1u << TPB_DTYPE_FP32, 1, "MPI_Allreduce"}};
    tpb_backend_class_t narrow = tpb_backend_host;
    narrow.caps = one;
    narrow.ncaps = 1;
    ck_assert_int_eq(tpb_backend_supports(&narrow, &mpi, TPB_COLL_ALLGATHER, 0, why, sizeof(why)),
                     0);
    ck_assert_str_eq(why, "the host backend has no all-gather under --comm mpi in fp32");
    ck_assert_int_eq(tpb_backend_supports(&narrow, &nccl, TPB_COLL_ALLREDUCE, 0, why, sizeof(why)),
                     0); /* bf16: not in its row */
    tpb_backend_cfg_t bf16 = {.dtype = TPB_DTYPE_BF16}, fp64 = {.dtype = TPB_DTYPE_FP64};
    ck_assert_int_eq(tpb_backend_host.check_config(&bf16), TPB_ERR_INVALID);
    ck_assert_int_eq(tpb_backend_host.check_config(&fp64), TPB_OK);
}
END_TEST

START_TEST(plan_key)
{
    /* 256-aligned operands; C written at a 4-byte offset is another plan */
    static _Alignas(256) float a[64], b[64], c[128];
    tpb_gemm_t g = {.m = 8,
                    .n = 8,
                    .k = 8,
                    .a = a,
                    .lda = 8,
                    .b = b,
                    .ldb = 8,
                    .c = c,
                    .ldc = 8,
                    .dtype = TPB_DTYPE_BF16};
    tpb_gpu_plan_key_t full = tpb_gpu_plan_key(&g, 0), same = tpb_gpu_plan_key(&g, 0);
    ck_assert(tpb_gpu_plan_key_equal(&full, &same));
    ck_assert_int_eq(full.align[2], 256);
    /* an emulating rank's plans carry the SM target; the probe's full-device one does not */
    tpb_gpu_plan_key_t green = tpb_gpu_plan_key(&g, 66);
    ck_assert(!tpb_gpu_plan_key_equal(&full, &green));
    tpb_gemm_t shifted = g;
    shifted.c = c + 1;
    tpb_gpu_plan_key_t off = tpb_gpu_plan_key(&shifted, 0);
    ck_assert_int_eq(off.align[2], 4);
    ck_assert(!tpb_gpu_plan_key_equal(&full, &off));
    tpb_gemm_t fp8 = g;
    fp8.dtype = TPB_DTYPE_FP8;
    tpb_gpu_plan_key_t k8 = tpb_gpu_plan_key(&fp8, 0);
    ck_assert(!tpb_gpu_plan_key_equal(&full, &k8));
}
END_TEST

/* The plan cache's index: equal keys hash alike; keys that differ in any field (a block
 * GEMM's k, an operand's alignment, the SM target) spread over the index. */
START_TEST(plan_hash)
{
    tpb_gemm_t g = {.m = 128,
                    .n = 256,
                    .k = 64,
                    .lda = 64,
                    .ldb = 64,
                    .ldc = 256,
                    .a = (void *)0x1000,
                    .b = (void *)0x2000,
                    .c = (void *)0x3000,
                    .dtype = TPB_DTYPE_BF16};
    tpb_gpu_plan_key_t a = tpb_gpu_plan_key(&g, 0), b = tpb_gpu_plan_key(&g, 0);
    ck_assert_uint_eq(tpb_gpu_plan_hash(&a), tpb_gpu_plan_hash(&b));
    enum { N = 4096 };
    static int used[N];
    int distinct = 0;
    for (int i = 0; i < N; i++) { /* a layer of 4096 block GEMMs of different k */
        g.k = 16 * (i + 1);
        tpb_gpu_plan_key_t k = tpb_gpu_plan_key(&g, 0);
        unsigned slot = (unsigned)(tpb_gpu_plan_hash(&k) % (2 * N));
        distinct += slot < 2 * N && !used[slot % N]++;
    }
    ck_assert_int_gt(distinct, N / 2); /* no clustering on one bucket */
    tpb_gpu_plan_key_t c = tpb_gpu_plan_key(&g, 64);
    tpb_gpu_plan_key_t d = tpb_gpu_plan_key(&g, 0);
    ck_assert_uint_ne(tpb_gpu_plan_hash(&c), tpb_gpu_plan_hash(&d));
}
END_TEST

/* The generic plan cache: every plan found again by its key after the index and the array
 * grew (4096 plans: the array moves and the index is rebuilt six times), a key not added
 * not found, and every plan destroyed once when the cache is freed. */
typedef struct {
    long k;
    int destroyed;
} fake_plan_t;

static int destroyed;

static void destroy_fake(void *plan)
{
    fake_plan_t *p = plan;
    ck_assert_int_eq(p->destroyed, 0);
    p->destroyed = 1;
    destroyed++;
}

START_TEST(plan_cache)
{
    tpb_gpu_plans_t c;
    tpb_gpu_plans_init(&c, sizeof(fake_plan_t));
    tpb_gemm_t g = {.m = 64, .n = 64, .lda = 64, .ldb = 64, .ldc = 64, .dtype = TPB_DTYPE_BF16};
    enum { N = 4096 };
    for (long i = 0; i < N; i++) {
        g.k = 16 * (i + 1);
        tpb_gpu_plan_key_t key = tpb_gpu_plan_key(&g, (int)(i % 3));
        ck_assert_ptr_null(tpb_gpu_plans_find(&c, &key));
        void *slot = NULL;
        ck_assert_int_eq(tpb_gpu_plans_reserve(&c, &slot), TPB_OK);
        ((fake_plan_t *)slot)->k = g.k;
        tpb_gpu_plans_add(&c, &key);
        ck_assert_ptr_eq(tpb_gpu_plans_find(&c, &key), slot);
    }
    ck_assert_uint_eq(c.n, N);
    ck_assert_uint_ge(c.nindex, 2 * N);
    for (long i = 0; i < N; i++) {
        g.k = 16 * (i + 1);
        tpb_gpu_plan_key_t key = tpb_gpu_plan_key(&g, (int)(i % 3));
        fake_plan_t *p = tpb_gpu_plans_find(&c, &key);
        ck_assert_ptr_nonnull(p);
        ck_assert_int_eq(p->k, g.k);
        key.sm_target += 3; /* another SM target: another plan, never built */
        ck_assert_ptr_null(tpb_gpu_plans_find(&c, &key));
    }
    destroyed = 0;
    tpb_gpu_plans_free(&c, destroy_fake);
    ck_assert_int_eq(destroyed, N);
    ck_assert_uint_eq(c.n, 0);
    g.k = 16;
    tpb_gpu_plan_key_t key = tpb_gpu_plan_key(&g, 0);
    ck_assert_ptr_null(tpb_gpu_plans_find(&c, &key)); /* empty again, and usable */
}
END_TEST

START_TEST(comm_dtype)
{
    /* --comm mpi reduces fp32 and fp64 outputs: fp32, tf32 and fp64 GEMMs; not 16-bit ones */
    const tpb_dtype_t ok[] = {TPB_DTYPE_FP32, TPB_DTYPE_TF32, TPB_DTYPE_FP64};
    const tpb_dtype_t no[] = {TPB_DTYPE_FP16, TPB_DTYPE_BF16, TPB_DTYPE_FP8};
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(tpb_cuda_check_comm_dtype(ok[i], TPB_COMM_MPI), TPB_OK);
        ck_assert_int_eq(tpb_cuda_check_comm_dtype(no[i], TPB_COMM_MPI), TPB_ERR_UNSUPPORTED);
        ck_assert_int_eq(tpb_cuda_check_comm_dtype(no[i], TPB_COMM_CCL), TPB_OK);
    }
    tpb_cuda_check_comm_dtype(TPB_DTYPE_BF16, TPB_COMM_MPI);
    ck_assert_ptr_nonnull(strstr(tpb_err_msg(), "--comm mpi reduces fp32 and fp64 only"));
    /* the backend's check before any device: the same rule, and --emulate-schedule */
    tpb_backend_cfg_t bf16_mpi = {.dtype = TPB_DTYPE_BF16, .comm = TPB_COMM_MPI};
    tpb_backend_cfg_t sched = {
        .dtype = TPB_DTYPE_BF16, .comm = TPB_COMM_CCL, .emulate_schedule = 1};
    tpb_backend_cfg_t fine = {.dtype = TPB_DTYPE_FP32, .comm = TPB_COMM_MPI};
    if (tpb_backend_cuda.built) {
        ck_assert_int_ne(tpb_backend_cuda.check_config(&bf16_mpi), TPB_OK);
        ck_assert_int_ne(tpb_backend_cuda.check_config(&sched), TPB_OK);
        ck_assert_int_eq(tpb_backend_cuda.check_config(&fine), TPB_OK);
    } else { /* a host-only build refuses every cuda config, saying how to build it */
        ck_assert_int_ne(tpb_backend_cuda.check_config(&fine), TPB_OK);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("cuda_plan");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, pick_device);
    tcase_add_test(tc, plan_hash);
    tcase_add_test(tc, sharing);
    tcase_add_test(tc, sm_request_and_repeat);
    tcase_add_test(tc, blocks_and_build);
    tcase_add_test(tc, plan_key);
    tcase_add_test(tc, comm_dtype);
    tcase_add_test(tc, plan_cache);
    suite_add_tcase(s, tc);
    return s;
}

TPB_TEST_MAIN(suite)
