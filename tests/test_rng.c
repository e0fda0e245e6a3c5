/*
 * test_rng.c - the generator's fast path (base/rng_fast.c, rng_avx2.c, rng_avx512.c): its
 * approximation within the bound it claims, on random and edge inputs, by the scalar, the AVX2
 * and the AVX-512 code (the last two the same bit for bit); and
 * the inputs it encodes bit for bit glibc's, in every narrow dtype, its exact draws included.
 */
#include <string.h>

#include "base/rng.h"
#include "base/rng_internal.h"
#include "tpb_test.h"

/* How much of the bound the largest difference from glibc's value uses. */
static double used(const double *v, const uint64_t *a, const uint64_t *b, long n)
{
    double worst = 0.0;
    for (long c = 0; c < n; c++) {
        double x = tpb_rng_exact(a[c], b[c]);
        double r = fabs(x - v[c]) / (fabs(x) * TPB_RNG_REL_BOUND + TPB_RNG_ABS_BOUND);
        worst = r > worst ? r : worst;
    }
    return worst;
}

enum { EDGE = 4096 };

/* Bits where the approximation is hardest: u1 at 2^-53, at its binades' and the table's
 * switch points and at 1 (log 0); u2 at its quadrants, at the table's points and their middles. */
static long edge_bits(uint64_t *a, uint64_t *b)
{
    const uint64_t top = 1ULL << 53, q = 1ULL << 51, k = 1ULL << 44;
    const uint64_t as[] = {0,
                           1,
                           2,
                           3,
                           (1ULL << 52) - 2,
                           (1ULL << 52) - 1,
                           1ULL << 52,
                           3 * q - 2,
                           3 * q - 1,
                           3 * q,
                           top - 1000,
                           top - 4,
                           top - 3,
                           top - 2,
                           top - 1,
                           (top / 256) * 191,
                           (top / 256) * 193 + 7};
    const uint64_t bs[] = {0,         q, 2 * q,   3 * q,       q / 2,      3 * q / 2, 5 * q / 2,
                           7 * q / 2, k, 127 * k, 128 * k - 1, q + 64 * k, q + k / 2, top - 1};
    long n = 0;
    for (size_t i = 0; i < sizeof(as) / sizeof(as[0]); i++)
        for (size_t j = 0; j < sizeof(bs) / sizeof(bs[0]); j++)
            for (int d = -3; d <= 3 && n < EDGE; d++) {
                a[n] = as[i];
                b[n] = (bs[j] + (uint64_t)d) & (top - 1);
                n++;
            }
    return n;
}

START_TEST(approx_within_bound)
{
    enum { N = 1 << 16 };
    static uint64_t a[N], b[N];
    static double v[N];
    for (int path = TPB_RNG_PATH_SCALAR; path <= TPB_RNG_PATH_AVX512; path++) {
        double worst = 0.0;
        long n = edge_bits(a, b);
        if (tpb_rng_approx_bits(v, a, b, n, path) != 0) {
            ck_assert_int_ne(path, TPB_RNG_PATH_SCALAR); /* a CPU without AVX2 or AVX-512 */
            continue;
        }
        double w = used(v, a, b, n);
        worst = w > worst ? w : worst;
        for (uint32_t row = 0; row < 8; row++) { /* rows of the hash, as the draw sees them */
            uint64_t rp = tpb_rng_row_part(row % 3, row * 1000003ULL), seed = 42 + row;
            for (long c = 0; c < N; c++)
                tpb_rng_bits(seed, rp, (uint64_t)c, &a[c], &b[c]);
            ck_assert_int_eq(tpb_rng_approx_row(v, N - 3, seed, rp, 0, path), 0); /* a tail */
            v[N - 3] = v[N - 2] = v[N - 1] = 0.0;
            w = used(v, a, b, N - 3);
            worst = w > worst ? w : worst;
        }
        /* measured: 0.0053 of the bound on every path; 1/16 leaves the reasons in the header */
        ck_assert_msg(worst < 1.0 / 16, "path %d uses %.4f of the bound", path, worst);
    }
}
END_TEST

/* The AVX-512 code's values are the AVX2 code's, bit for bit (the same operations lane by
 * lane), at every length (its tail of fewer than eight done by AVX2 and the scalar code) and
 * on the edge inputs; skipped where the CPU lacks either. */
START_TEST(avx512_is_avx2)
{
    enum { N = 4099 };
    static uint64_t a[EDGE], b[EDGE];
    static double w2[EDGE], w5[EDGE];
    long n = edge_bits(a, b);
    if (tpb_rng_approx_bits(w5, a, b, n, TPB_RNG_PATH_AVX512) != 0 ||
        tpb_rng_approx_bits(w2, a, b, n, TPB_RNG_PATH_AVX2) != 0)
        return; /* not this CPU */
    ck_assert(memcmp(w2, w5, (size_t)n * sizeof(double)) == 0);
    for (long len = 1; len <= N; len += len < 20 ? 1 : 1000) {
        uint64_t rp = tpb_rng_row_part(3, (uint64_t)len);
        ck_assert_int_eq(tpb_rng_approx_row(w2, len, 9, rp, 5, TPB_RNG_PATH_AVX2), 0);
        ck_assert_int_eq(tpb_rng_approx_row(w5, len, 9, rp, 5, TPB_RNG_PATH_AVX512), 0);
        ck_assert_msg(memcmp(w2, w5, (size_t)len * sizeof(double)) == 0, "length %ld", len);
    }
}
END_TEST

/* tpb_rng_row_encode against glibc's values encoded, at scales that reach fp16's and fp8's
 * subnormals and saturation (and float's overflow to infinity), by every code path (bf16, fp32 and
 * tf32 fused into the vector code, a row's last elements, fewer than its width, by the code after
 * it); fp32's exact draws happen (the test reaches that code). */
START_TEST(encode_bit_for_bit)
{
    enum { N = 20003 };
    static double ref[N], tmp[3 * N];
    static unsigned char want[N * 4], got[N * 4];
    const double scales[] = {1.0, 0.25, 1e-6, 300.0, -2.0, 0.0, -0.0, 1e-300, 1e38};
    const tpb_dtype_t dts[] = {TPB_DTYPE_FP32, TPB_DTYPE_TF32, TPB_DTYPE_FP16, TPB_DTYPE_BF16,
                               TPB_DTYPE_FP8};
    for (int path = TPB_RNG_PATH_SCALAR; path <= TPB_RNG_PATH_AVX512; path++) {
        long fp32_exact = 0;
        for (size_t s = 0; s < sizeof(scales) / sizeof(scales[0]); s++) {
            tpb_rng_row(ref, N, 7, 2, 1003, 11, scales[s]);
            for (size_t d = 0; d < sizeof(dts) / sizeof(dts[0]); d++) {
                size_t bytes = (size_t)N * tpb_dtype_in_size(dts[d]);
                tpb_dtype_encode(dts[d], ref, want, N);
                memset(got, 0xab, sizeof(got));
                long exact = tpb_rng_row_encode_path(got, N, 7, tpb_rng_row_part(2, 1003), 11,
                                                     scales[s], dts[d], tmp, path);
                if (exact < 0) { /* a CPU without this path */
                    ck_assert_int_ne(path, TPB_RNG_PATH_SCALAR);
                    goto next_path;
                }
                ck_assert_msg(memcmp(got, want, bytes) == 0, "%s at scale %g differs (path %d)",
                              tpb_dtype_name(dts[d]), scales[s], path);
                /* a zero or tiny scale: every element drawn exactly */
                ck_assert(fabs(scales[s]) < 1e-200 ? exact == N : exact >= 0 && exact < N / 100);
                if (dts[d] == TPB_DTYPE_FP32)
                    fp32_exact += exact;
            }
        }
        ck_assert(fp32_exact > 0);
    next_path:;
    }
}
END_TEST

/* bf16's ties: a float halfway between two bf16 values rounds to the even one. Both ends of an
 * element's interval round to the same float (a float's step is 2^16 times the interval's), so
 * only the encoding itself decides them: 2^20 elements hold some ties that the rule changes
 * (counted, so that the test can fail), each encoded as glibc's value is, by every path. */
START_TEST(bf16_ties_to_even)
{
    enum { N = 1 << 20 };
    static double ref[N], tmp[3 * N];
    static uint16_t want[N], got[N];
    tpb_rng_row(ref, N, 5, 1, 77, 3, 1.0);
    tpb_dtype_encode(TPB_DTYPE_BF16, ref, want, N);
    long ties = 0;
    for (long c = 0; c < N; c++) {
        float f = (float)ref[c];
        uint32_t u;
        memcpy(&u, &f, sizeof(u));
        ties += (u & 0x1ffff) == 0x18000; /* halfway, from an odd bf16: even is up */
    }
    ck_assert_int_gt(ties, 0);
    for (int path = TPB_RNG_PATH_SCALAR; path <= TPB_RNG_PATH_AVX512; path++) {
        long exact = tpb_rng_row_encode_path(got, N, 5, tpb_rng_row_part(1, 77), 3, 1.0,
                                             TPB_DTYPE_BF16, tmp, path);
        if (exact < 0)
            continue; /* a CPU without this path */
        ck_assert_msg(memcmp(got, want, sizeof(want)) == 0, "path %d (%ld ties)", path, ties);
    }
}
END_TEST

/* Whether the vector conversions of `path` give dtype.c's encodings of the n patterns. */
static int converts_as_dtype(const uint32_t *bits, long n, tpb_dtype_t dt, int path)
{
    static unsigned char want[4 << 20], got[4 << 20];
    ck_assert_int_le(n, 1 << 20);
    size_t esz = tpb_dtype_in_size(dt);
    ck_assert_int_eq(tpb_rng_convert_path(want, bits, n, dt, TPB_RNG_PATH_SCALAR), 0);
    ck_assert_int_eq(tpb_rng_convert_path(got, bits, n, dt, path), 0);
    return memcmp(want, got, (size_t)n * esz) == 0;
}

/* Append pattern p and its neighbours, both signs, unless NaN. */
static long add_near(uint32_t *bits, long n, uint32_t p)
{
    for (int d = -1; d <= 1; d++)
        for (int neg = 0; neg <= 1; neg++) {
            uint32_t u = ((p + (uint32_t)d) & 0x7fffffffu) | (uint32_t)neg << 31;
            if ((u & 0x7fffffffu) <= 0x7f800000u)
                bits[n++] = u;
        }
    return n;
}

/* The vector code's conversions of floats to bf16, fp16 and e4m3 (what the fused encoding
 * stores) are dtype.c's: on every 251st bit pattern (NaN's left out: the draw makes none), and
 * on each tie of the three formats (their normal and subnormal halfway points) and their
 * neighbours, both signs; by AVX2 and AVX-512 where the CPU has them. */
START_TEST(vector_conversions_are_dtypes)
{
    enum { PART = 1 << 20 };
    static uint32_t bits[PART];
    const tpb_dtype_t dts[] = {TPB_DTYPE_BF16, TPB_DTYPE_FP16, TPB_DTYPE_FP8};
    for (int path = TPB_RNG_PATH_AVX2; path <= TPB_RNG_PATH_AVX512; path++) {
        if (tpb_rng_convert_path(bits, bits, 0, TPB_DTYPE_FP32, path) != 0)
            continue; /* a CPU without this path */
        for (size_t k = 0; k < sizeof(dts) / sizeof(dts[0]); k++) {
            long n = 0;
            for (uint64_t u = 0; u < (1ULL << 32); u += 251) {
                if ((u & 0x7fffffffu) <= 0x7f800000u)
                    bits[n++] = (uint32_t)u;
                if (n == PART || u + 251 >= (1ULL << 32)) {
                    ck_assert_msg(converts_as_dtype(bits, n, dts[k], path), "%s path %d near %#llx",
                                  tpb_dtype_name(dts[k]), path, (unsigned long long)u);
                    n = 0;
                }
            }
            for (uint32_t h = 0; h < 0x8000u; h++) /* bf16's ties: bits 0-15 halfway */
                n = add_near(bits, n, h << 16 | 0x8000u);
            ck_assert(converts_as_dtype(bits, n, dts[k], path));
            n = 0;
            for (uint32_t h = 0; h < 0x40000u; h++) { /* fp16's: bits 0-12 halfway */
                n = add_near(bits, n, h << 13 | 0x1000u);
                if (n > PART - 6 || h == 0x3ffffu) {
                    ck_assert(converts_as_dtype(bits, n, dts[k], path));
                    n = 0;
                }
            }
            for (uint32_t h = 0; h < 0x800u; h++) /* e4m3's: bits 0-19 halfway */
                n = add_near(bits, n, h << 20 | 0x80000u);
            for (int i = 1; i < 2048; i += 2) { /* subnormal halfway points: fp16's, e4m3's */
                float a = (float)i * 0x1.0p-25f, b = (float)i * 0x1.0p-10f;
                uint32_t ua, ub;
                memcpy(&ua, &a, sizeof(ua));
                memcpy(&ub, &b, sizeof(ub));
                n = add_near(bits, n, ua);
                n = add_near(bits, n, ub);
            }
            n = add_near(bits, n, 0x43e00000u); /* e4m3's saturation at 448, 2^-6 below */
            n = add_near(bits, n, 0x3c800000u);
            ck_assert(converts_as_dtype(bits, n, dts[k], path));
        }
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("rng");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, approx_within_bound);
    tcase_add_test(tc, avx512_is_avx2);
    tcase_add_test(tc, encode_bit_for_bit);
    tcase_add_test(tc, bf16_ties_to_even);
    tcase_add_test(tc, vector_conversions_are_dtypes);
    suite_add_tcase(s, tc);
    return s;
}

TPB_TEST_MAIN(suite)
