/* test_cuda_errors.c - CUDA, cuBLAS and NCCL codes translated once into tpb_status_t
 * (CUDA builds only; needs no GPU). */
#include <string.h>

#include "backend/cuda/cuda_internal.h"
#include "tpb_test.h"

static int calls;

static cudaError_t count_call(cudaError_t e)
{
    calls++;
    return e;
}

static tpb_status_t checked(cudaError_t e)
{
    TPB_CUDA_RET(count_call(e));
    return TPB_OK;
}

START_TEST(translation)
{
    tpb_err_context(3, "nodeA");
    ck_assert_int_eq(tpb_cuda_err(cudaErrorMemoryAllocation, "cudaMalloc(&p, n)", "f.c", 12),
                     TPB_ERR_NOMEM);
    ck_assert_str_eq(tpb_err_msg(), "cudaMalloc(&p, n) failed: out of memory (f.c:12, rank 3 on "
                                    "nodeA)");
    ck_assert_int_eq(tpb_cuda_err(cudaErrorNoDevice, "x", "f.c", 1), TPB_ERR_NO_DEVICE);
    ck_assert_int_eq(tpb_cuda_err(cudaErrorLaunchFailure, "x", "f.c", 1), TPB_ERR_BACKEND);
    ck_assert_int_eq(tpb_cublas_err(CUBLAS_STATUS_NOT_SUPPORTED, "cublasLtMatmul", "g.c", 7),
                     TPB_ERR_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(tpb_err_msg(), "cublasLtMatmul failed: "));
    ck_assert_int_eq(tpb_nccl_err(ncclInvalidUsage, "ncclAllReduce", "h.c", 9), TPB_ERR_BACKEND);
    ck_assert_ptr_nonnull(strstr(tpb_err_msg(), ncclGetErrorString(ncclInvalidUsage)));
}
END_TEST

START_TEST(macro_evaluates_once)
{
    calls = 0;
    ck_assert_int_eq(checked(cudaErrorInvalidValue), TPB_ERR_BACKEND);
    ck_assert_int_eq(calls, 1);
    ck_assert_ptr_nonnull(strstr(tpb_err_msg(), "count_call(e) failed"));
    ck_assert_int_eq(checked(cudaSuccess), TPB_OK);
    ck_assert_int_eq(calls, 2);
}
END_TEST

START_TEST(driver_symbol_versions)
{
    /* each symbol is asked for at the version that introduced it (cudaTypedefs.h): asked
     * at 12.4, cuGreenCtxStreamCreate (12.5) returned no pointer and green contexts never
     * engaged */
    ck_assert_int_eq(tpb_cuda_driver_symbol_version("cuGreenCtxStreamCreate"), 12050);
    ck_assert_int_eq(tpb_cuda_driver_symbol_version("cuGreenCtxCreate"), 12040);
    ck_assert_int_eq(tpb_cuda_driver_symbol_version("cuDevSmResourceSplitByCount"), 12040);
    ck_assert_int_eq(tpb_cuda_driver_symbol_version("cuCtxPushCurrent"), 4000);
    ck_assert_int_eq(tpb_cuda_driver_symbol_version("cuNoSuchThing"), 0);
}
END_TEST

START_TEST(blas_loaded_when_needed)
{
    /* cuBLASLt and cuBLAS are not linked (cuda_blasdl.c): every function tpbal calls is found
     * in the libraries the loader finds (the toolkit's through the RUNPATH, or the stand-in's),
     * and they answer for the major version tpbal was built against */
    ck_assert_int_eq(tpb_cuda_blas_load(), TPB_OK);
    size_t v = cublasLtGetVersion();
    ck_assert_uint_ge(v, (size_t)CUBLAS_VER_MAJOR * 10000);
    ck_assert_uint_lt(v, (size_t)(CUBLAS_VER_MAJOR + 1) * 10000);
    const char *said = cublasGetStatusString(CUBLAS_STATUS_SUCCESS); /* "success" (13.0) */
    ck_assert_ptr_nonnull(said);
    ck_assert_ptr_null(strstr(said, "could not be loaded"));
}
END_TEST

START_TEST(init_without_gpu)
{
    if (tpb_cuda_device_count() > 0)
        return; /* on a GPU machine the GPU tests cover init */
    tpb_clock_t clock = {0};
    tpb_backend_args_t a = {.world = MPI_COMM_NULL,
                            .world_size = 1,
                            .local_size = 1,
                            .cfg = {.dtype = TPB_DTYPE_BF16, .timeout_s = 300},
                            .clock = &clock,
                            .emulate_factor = 1.0};
    tpb_device_t *dev = NULL;
    ck_assert_int_eq(tpb_backend_cuda.open(&a, &dev), TPB_ERR_NO_DEVICE);
    ck_assert_ptr_null(dev);
    ck_assert_ptr_nonnull(strstr(tpb_err_msg(), "--backend cuda: no GPU is visible"));
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("cuda_errors");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, translation);
    tcase_add_test(tc, macro_evaluates_once);
    tcase_add_test(tc, driver_symbol_versions);
    tcase_add_test(tc, blas_loaded_when_needed);
    tcase_add_test(tc, init_without_gpu);
    suite_add_tcase(s, tc);
    return s;
}

TPB_TEST_MAIN(suite)
