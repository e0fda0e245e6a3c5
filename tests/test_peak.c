/* test_peak.c - theoretical peaks (CPU from SIMD flags and clock; the GPU table)
 * and the OpenBLAS kernel advice. */
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "backend/cuda/cuda_plan.h"
#include "backend/host/host_clock.h"
#include "backend/host/host_peak.h"
#include "tpb_test.h"

START_TEST(cpu_flags_and_peak)
{
    tpb_cpu_t c = {0};
    tpb_cpu_parse_flags("fpu sse2 avx avx2 fma avx512f avx512bw", &c);
    ck_assert(c.avx512 && c.avx2 && c.fma && c.avx);
    ck_assert_int_eq(tpb_cpu_flop_per_cycle(&c, TPB_DTYPE_FP32), 64);
    ck_assert_int_eq(tpb_cpu_flop_per_cycle(&c, TPB_DTYPE_FP64), 32);
    ck_assert_int_eq(tpb_cpu_flop_per_cycle(&c, TPB_DTYPE_BF16), 0);
    c.ghz = 2.3;
    char basis[96];
    ck_assert_double_eq_tol(tpb_cpu_peak_gflops(&c, 2, TPB_DTYPE_FP32, basis, sizeof(basis)),
                            2 * 2.3 * 64, 1e-9);
    ck_assert_ptr_nonnull(strstr(basis, "2 cores x 2.30 GHz x 64 FLOP/cycle (AVX-512"));
    /* half a core: two ranks on one core */
    ck_assert_double_eq_tol(tpb_cpu_peak_gflops(&c, 0.5, TPB_DTYPE_FP32, basis, sizeof(basis)),
                            0.5 * 2.3 * 64, 1e-9);
    ck_assert_ptr_nonnull(strstr(basis, "0.5 cores x 2.30 GHz x 64"));
    c.ghz_from = "measured"; /* where the clock came from is said */
    tpb_cpu_peak_gflops(&c, 1, TPB_DTYPE_FP32, basis, sizeof(basis));
    ck_assert_ptr_nonnull(strstr(basis, "1 core x 2.30 GHz (measured) x 64 FLOP/cycle"));
    /* words, not substrings: "avx512f" is not "avx" and "fma4" is not "fma" */
    tpb_cpu_t d = {0};
    tpb_cpu_parse_flags("sse2 avx512fx fma4 avx2", &d);
    ck_assert(!d.avx512 && !d.fma && d.avx2 && !d.avx);
    ck_assert_int_eq(tpb_cpu_flop_per_cycle(&d, TPB_DTYPE_FP32), 16); /* AVX2 without FMA */
    tpb_cpu_t sse = {0};
    ck_assert_int_eq(tpb_cpu_flop_per_cycle(&sse, TPB_DTYPE_FP64), 4);
    ck_assert_double_eq(tpb_cpu_peak_gflops(&sse, 1, TPB_DTYPE_FP64, basis, sizeof(basis)), 0.0);
}
END_TEST

#if defined(__x86_64__)
/* One run of 2.7 M dependent imuls (as long as tpbal's 8 M adds) (3 cycles each on every x86-64
 * core since Sandy Bridge and Zen), in GHz: a reference that shares no code with
 * tpb_cpu_measure_ghz. */
static double imul_ghz(void)
{
    uint64_t y = 3, m = 1;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long i = 0; i < 333333; i++)
        __asm__ volatile("imul %1, %0\n\timul %1, %0\n\timul %1, %0\n\timul %1, %0\n\t"
                         "imul %1, %0\n\timul %1, %0\n\timul %1, %0\n\timul %1, %0"
                         : "+r"(y)
                         : "r"(m));
    clock_gettime(CLOCK_MONOTONIC, &b);
    double ns = (b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec);
    return y == 3 && ns > 0 ? 3 * 8 * 333333.0 / ns : 0;
}

/* The measured clock agrees with the imul chain's within 15 % (the fastest of 10 tries of
 * each, interleaved, 5 imul runs a try as tpbal times 5 chains). The chain of "add $1" it timed
 * before read 5.8-12 GHz on cores that fold it (Emerald Rapids: 2.97 GHz by both). Timing:
 * doc/TESTING.md has the rate. */
START_TEST(measured_clock)
{
    double got = 0, ref = 0;
    for (int t = 0; t < 10; t++) {
        double g = tpb_cpu_measure_ghz();
        got = g > got ? g : got;
        for (int i = 0; i < 5; i++) {
            double r = imul_ghz();
            ref = r > ref ? r : ref;
        }
    }
    ck_assert_msg(got > 0.3 && got <= TPB_GHZ_PLAUSIBLE, "measured %.2f GHz", got);
    ck_assert_msg(got > 0.85 * ref && got < 1.15 * ref, "measured %.2f GHz, imul chain %.2f", got,
                  ref);
}
END_TEST
#endif

START_TEST(openblas_advice)
{
    tpb_cpu_t c = {.avx512 = 1, .avx2 = 1, .fma = 1, .avx = 1, .ghz = 2.3};
    char a[192];
    tpb_openblas_advice(&c, "Prescott", a, sizeof(a));
    ck_assert_ptr_nonnull(strstr(a, "Prescott kernels (SSE) on a CPU with AVX-512"));
    ck_assert_ptr_nonnull(strstr(a, "OPENBLAS_CORETYPE=SkylakeX"));
    tpb_openblas_advice(&c, "SkylakeX", a, sizeof(a));
    ck_assert_str_eq(a, "");
    tpb_openblas_advice(&c, "SomethingNew", a, sizeof(a)); /* unknown: say nothing */
    ck_assert_str_eq(a, "");
    tpb_cpu_t h = {.avx2 = 1, .fma = 1, .avx = 1};
    tpb_openblas_advice(&h, "sandybridge", a, sizeof(a));
    ck_assert_ptr_nonnull(strstr(a, "OPENBLAS_CORETYPE=Haswell"));
}
END_TEST

START_TEST(gpu_table)
{
    /* H100/H200: 989 TFLOP/s bf16 dense = 132 SMs x 1.83 GHz x 4096 */
    ck_assert_int_eq(tpb_cuda_flop_per_cycle_sm(9, 0, TPB_DTYPE_BF16), 4096);
    ck_assert_int_eq(tpb_cuda_flop_per_cycle_sm(9, 0, TPB_DTYPE_FP8), 8192);
    ck_assert_int_eq(tpb_cuda_flop_per_cycle_sm(8, 0, TPB_DTYPE_TF32), 1024);
    ck_assert_int_eq(tpb_cuda_flop_per_cycle_sm(8, 0, TPB_DTYPE_FP8), 0);  /* no fp8 on A100 */
    ck_assert_int_eq(tpb_cuda_flop_per_cycle_sm(7, 0, TPB_DTYPE_FP32), 0); /* not in the table */
    /* H200 SXM: the datasheet's 989 / 1979 / 495 TFLOP/s, not the 1.98 GHz maximum's 1070 */
    char basis[96];
    const int h200_khz = 1980000;
    ck_assert_double_eq_tol(tpb_cuda_peak_gflops(9, 0, 132, "NVIDIA H200", h200_khz, TPB_DTYPE_BF16,
                                                 basis, sizeof(basis)),
                            989.4e3, 0.5e3);
    ck_assert_ptr_nonnull(strstr(basis, "132 SMs x 1.83 GHz (datasheet) x 4096"));
    ck_assert_double_eq_tol(tpb_cuda_peak_gflops(9, 0, 132, "NVIDIA H200", h200_khz, TPB_DTYPE_FP8,
                                                 basis, sizeof(basis)),
                            1978.9e3, 1e3);
    ck_assert_double_eq_tol(tpb_cuda_peak_gflops(9, 0, 132, "NVIDIA H200", h200_khz, TPB_DTYPE_TF32,
                                                 basis, sizeof(basis)),
                            494.7e3, 0.5e3);
    /* fp32 on CUDA cores: the datasheet's 67 TFLOP/s is at the maximum clock */
    ck_assert_double_eq_tol(tpb_cuda_peak_gflops(9, 0, 132, "NVIDIA H200", h200_khz, TPB_DTYPE_FP32,
                                                 basis, sizeof(basis)),
                            66.9e3, 0.1e3);
    ck_assert_ptr_nonnull(strstr(basis, "(max clock)"));
    /* the NVL part (same SMs, lower clock) and an unknown part (the maximum clock) */
    ck_assert_double_eq_tol(tpb_cuda_peak_gflops(9, 0, 132, "NVIDIA H200 NVL", h200_khz,
                                                 TPB_DTYPE_BF16, basis, sizeof(basis)),
                            835.3e3, 1e3);
    ck_assert_double_eq_tol(tpb_cuda_peak_gflops(9, 0, 100, "NVIDIA H-something", 1500000,
                                                 TPB_DTYPE_BF16, basis, sizeof(basis)),
                            100 * 1.5 * 4096, 1e-6);
    ck_assert_double_eq_tol(tpb_cuda_peak_gflops(8, 0, 108, "NVIDIA A100-SXM4-80GB", 1410000,
                                                 TPB_DTYPE_BF16, basis, sizeof(basis)),
                            312.0e3, 0.5e3);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("peak");
    TCase *tc = tcase_create("peak");
    tcase_add_test(tc, cpu_flags_and_peak);
    tcase_add_test(tc, openblas_advice);
#if defined(__x86_64__)
    tcase_add_test(tc, measured_clock);
#endif
    tcase_add_test(tc, gpu_table);
    suite_add_tcase(s, tc);
    return s;
}

TPB_TEST_MAIN(suite)
