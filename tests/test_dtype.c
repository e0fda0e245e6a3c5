/* test_dtype.c - element types and the conversions of fp16, bf16 and fp8 (e4m3). */
#include <math.h>
#include <string.h>

#include "base/dtype.h"
#include "base/rng.h"
#include "tpb_test.h"

START_TEST(names_and_sizes)
{
    tpb_dtype_t dt;
    ck_assert_int_eq(tpb_dtype_parse("bf16", &dt), TPB_OK);
    ck_assert_int_eq(dt, TPB_DTYPE_BF16);
    ck_assert_int_eq(tpb_dtype_parse("int8", &dt), TPB_ERR_INVALID);
    ck_assert_str_eq(tpb_dtype_name(TPB_DTYPE_FP8), "fp8");
    ck_assert_int_eq(tpb_dtype_in_size(TPB_DTYPE_FP8), 1);
    ck_assert_int_eq(tpb_dtype_out(TPB_DTYPE_FP8), TPB_DTYPE_BF16);
    ck_assert_int_eq(tpb_dtype_out_size(TPB_DTYPE_TF32), 4);
    ck_assert_int_eq(tpb_dtype_in_size(TPB_DTYPE_FP64), 8);
    ck_assert(tpb_dtype_tolerance(TPB_DTYPE_FP64) < tpb_dtype_tolerance(TPB_DTYPE_FP32));
    ck_assert(tpb_dtype_tolerance(TPB_DTYPE_FP32) < tpb_dtype_tolerance(TPB_DTYPE_BF16));
}
END_TEST

START_TEST(half)
{
    ck_assert_uint_eq(tpb_float_to_half(1.0f), 0x3c00);
    ck_assert_uint_eq(tpb_float_to_half(-2.0f), 0xc000);
    ck_assert_uint_eq(tpb_float_to_half(65504.0f), 0x7bff);
    ck_assert_uint_eq(tpb_float_to_half(1e6f), 0x7c00);
    ck_assert_uint_eq(tpb_float_to_half(5.960464477539063e-08f), 0x0001);
    ck_assert_float_eq(tpb_half_to_float(0x3555), 0.333251953125f);
    /* 1 + 2^-11 is halfway between 1 and 1 + 2^-10: rounds to even (1) */
    ck_assert_uint_eq(tpb_float_to_half(1.0f + 0.00048828125f), 0x3c00);
    for (float f = -8.0f; f <= 8.0f; f += 0.125f)
        ck_assert_float_eq(tpb_half_to_float(tpb_float_to_half(f)), f);
}
END_TEST

START_TEST(bf16)
{
    ck_assert_uint_eq(tpb_float_to_bf16(1.0f), 0x3f80);
    ck_assert_uint_eq(tpb_float_to_bf16(-1.5f), 0xbfc0);
    ck_assert_float_eq(tpb_bf16_to_float(0x4049), 3.140625f);
    ck_assert_float_eq(tpb_bf16_to_float(tpb_float_to_bf16(3.14159265f)), 3.140625f);
    ck_assert(isnan(tpb_bf16_to_float(tpb_float_to_bf16(NAN))));
}
END_TEST

/* The e4m3 conversion as it was written first (frexpf and lrintf): the reference of the
 * bit form in dtype.c, which matched it on all 2^32 floats when it replaced it. */
static uint8_t e4m3_by_frexp(float f)
{
    uint8_t sign = signbit(f) ? 0x80 : 0;
    float a = fabsf(f);
    if (isnan(f))
        return 0x7f;
    if (a >= 448.0f)
        return sign | 0x7e;
    if (a < 0.015625f)
        return sign | (uint8_t)lrintf(a * 512.0f);
    int e;
    float m = frexpf(a, &e);
    long q = lrintf(m * 16.0f);
    if (q == 16) {
        q = 8;
        e++;
    }
    int be = e - 1 + 7;
    if (be > 15 || (be == 15 && q - 8 > 6))
        return sign | 0x7e;
    return sign | (uint8_t)(be << 3) | (uint8_t)(q - 8);
}

START_TEST(e4m3)
{
    /* every 251st float bit pattern (all exponents, both signs, NaNs, ties) and the ties and
     * neighbours of every e4m3 value */
    long differ = 0; /* counted: a Check assertion per pattern costs a pipe write */
    for (uint64_t b = 0; b < (1ULL << 32); b += 251) {
        uint32_t u = (uint32_t)b;
        float f;
        memcpy(&f, &u, sizeof(f));
        differ += tpb_float_to_e4m3(f) != e4m3_by_frexp(f);
    }
    ck_assert_int_eq(differ, 0);
    for (int v = 0; v < 127; v++) {
        float lo = tpb_e4m3_to_float((uint8_t)v), hi = tpb_e4m3_to_float((uint8_t)(v + 1));
        float tie = lo + (hi - lo) / 2;
        const float probe[] = {tie, nextafterf(tie, 0.0f), nextafterf(tie, 1e9f), -tie};
        for (int i = 0; i < 4; i++)
            ck_assert_uint_eq(tpb_float_to_e4m3(probe[i]), e4m3_by_frexp(probe[i]));
    }
    ck_assert_uint_eq(tpb_float_to_e4m3(1.0f), 0x38);
    ck_assert_uint_eq(tpb_float_to_e4m3(448.0f), 0x7e);
    ck_assert_uint_eq(tpb_float_to_e4m3(1000.0f), 0x7e); /* saturates */
    ck_assert_uint_eq(tpb_float_to_e4m3(-2.0f), 0xc0);
    ck_assert_uint_eq(tpb_float_to_e4m3(0.001953125f), 0x01); /* smallest subnormal 2^-9 */
    ck_assert_float_eq(tpb_e4m3_to_float(0x7e), 448.0f);
    ck_assert_float_eq(tpb_e4m3_to_float(0x39), 1.125f);
    ck_assert(isnan(tpb_e4m3_to_float(0x7f)));
    for (int v = 0; v < 256; v++) {
        if ((v & 0x7f) == 0x7f)
            continue;
        float f = tpb_e4m3_to_float((uint8_t)v);
        if (f == 0.0f)
            continue;
        ck_assert_uint_eq(tpb_float_to_e4m3(f), (unsigned)v);
    }
}
END_TEST

START_TEST(encode_decode_and_rng)
{
    double in[4] = {1.0, -0.5, 0.1, 3.0}, out[4];
    unsigned char buf[64];
    for (int dt = 0; dt < TPB_DTYPE_COUNT; dt++) {
        tpb_dtype_encode((tpb_dtype_t)dt, in, buf, 4);
        tpb_dtype_decode((tpb_dtype_t)dt, buf, out, 4);
        for (int i = 0; i < 4; i++)
            ck_assert_double_eq_tol(out[i], in[i], fabs(in[i]) * 0.07);
    }
    /* the generator: deterministic per element, never zero, roughly standard normal */
    ck_assert(tpb_rng_normal(42, 1, 3, 4) == tpb_rng_normal(42, 1, 3, 4));
    ck_assert(tpb_rng_normal(42, 1, 3, 4) != tpb_rng_normal(42, 1, 4, 3));
    double sum = 0, sq = 0;
    int n = 20000;
    for (int i = 0; i < n; i++) {
        double v = tpb_rng_normal(7, 2, (uint64_t)i, 0);
        ck_assert(v != 0.0 && isfinite(v));
        sum += v;
        sq += v * v;
    }
    ck_assert_double_eq_tol(sum / n, 0.0, 0.05);
    ck_assert_double_eq_tol(sq / n, 1.0, 0.05);
    double blk[6], full[12];
    tpb_rng_fill(full, 3, 4, 4, 0, 0, 9, 1, 2.0);
    tpb_rng_fill(blk, 3, 2, 2, 0, 2, 9, 1, 2.0); /* columns 2..3 of the same matrix */
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 2; c++)
            ck_assert(blk[r * 2 + c] == full[r * 4 + 2 + c]);
}
END_TEST

/* The generator's values as they were before its row form and threads (issue 55): pinned. */
START_TEST(rng_golden)
{
    ck_assert(tpb_rng_normal(42, 1, 3, 4) == -0x1.91da5d6c5b708p+0);
    ck_assert(tpb_rng_normal(42, 1, 1003, 81) == -0x1.87fcc39be2e3dp-1);
    ck_assert(tpb_rng_normal(7, 2, 1003, 81) == 0x1.1bdebe2c313b1p+0);
    ck_assert(tpb_rng_normal(0x9e3779b97f4a7c15ULL, 3, 3, 4) == -0x1.7b88757454c13p+0);
}
END_TEST

/* The threaded, encoded fill and the row list: bit for bit the element generator, every dtype,
 * an odd block at odd offsets, 1 and 3 threads (rows split unevenly). */
START_TEST(rng_threads_bit_for_bit)
{
    enum { R = 37, C = 29 };
    double ref[R * C], rows[5 * C];
    unsigned char want[R * C * 8], got[R * C * 8];
    tpb_rng_fill(ref, R, C, C, 11, 7, 99, 2, 0.25);
    for (int dt = 0; dt < TPB_DTYPE_COUNT; dt++) {
        size_t bytes = (size_t)R * C * tpb_dtype_in_size((tpb_dtype_t)dt);
        tpb_dtype_encode((tpb_dtype_t)dt, ref, want, (size_t)R * C);
        for (int threads = 1; threads <= 3; threads += 2) {
            memset(got, 0xab, sizeof(got));
            ck_assert_int_eq(
                tpb_rng_encode(got, R, C, 11, 7, 99, 2, 0.25, (tpb_dtype_t)dt, threads), TPB_OK);
            ck_assert(memcmp(got, want, bytes) == 0);
        }
    }
    /* a big block takes every thread it is given (rows split at 1/3 and 2/3) */
    static double big_ref[300 * 400];
    static float big[300 * 400], big_want[300 * 400];
    tpb_rng_fill(big_ref, 300, 400, 400, 0, 5, 3, 1, 1.0);
    tpb_dtype_encode(TPB_DTYPE_FP32, big_ref, big_want, 300 * 400);
    ck_assert_int_eq(tpb_rng_encode(big, 300, 400, 0, 5, 3, 1, 1.0, TPB_DTYPE_FP32, 3), TPB_OK);
    ck_assert(memcmp(big, big_want, sizeof(big)) == 0);
    const long pick[5] = {36, 0, 12, 12, 5};
    tpb_rng_rows(rows, pick, 5, C, 99, 2, 0.25, 3);
    for (int r = 0; r < 5; r++)
        for (int c = 0; c < C; c++)
            ck_assert(rows[r * C + c] ==
                      0.25 * tpb_rng_normal(99, 2, (uint64_t)pick[r], (uint64_t)c));
    /* the cheap fill: in [-1, 1), a function of (seed, index) */
    float u[1000], u2[1000];
    tpb_rng_uniform_encode(u, 1000, 5, TPB_DTYPE_FP32);
    tpb_rng_uniform_encode(u2, 1000, 5, TPB_DTYPE_FP32);
    ck_assert(memcmp(u, u2, sizeof(u)) == 0);
    for (int i = 0; i < 1000; i++)
        ck_assert(u[i] >= -1.0f && u[i] < 1.0f);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("dtype");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, names_and_sizes);
    tcase_add_test(tc, half);
    tcase_add_test(tc, bf16);
    tcase_add_test(tc, e4m3);
    tcase_add_test(tc, encode_decode_and_rng);
    tcase_add_test(tc, rng_golden);
    tcase_add_test(tc, rng_threads_bit_for_bit);
    suite_add_tcase(s, tc);
    return s;
}

TPB_TEST_MAIN(suite)
