/*
 * rng_avx512.c - rng_avx2.c's approximation eight elements at a time (AVX-512 F and DQ, chosen
 * at run time by the CPU's flags): the same operations lane by lane, so the same values bit for
 * bit (tests/test_rng.c compares them), with the hash's 64-bit multiplies in one instruction
 * (AVX2 builds each of three 32 x 32-bit ones) and masks for the quadrant and the mantissa's
 * half.
 */
#include "base/rng_internal.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define AVX512 __attribute__((target("avx512f,avx512dq")))

AVX512 static inline __m512i mix(__m512i x)
{
    x = _mm512_add_epi64(x, _mm512_set1_epi64((long long)0x9e3779b97f4a7c15ULL));
    x = _mm512_mullo_epi64(_mm512_xor_si512(x, _mm512_srli_epi64(x, 30)),
                           _mm512_set1_epi64((long long)0xbf58476d1ce4e5b9ULL));
    x = _mm512_mullo_epi64(_mm512_xor_si512(x, _mm512_srli_epi64(x, 27)),
                           _mm512_set1_epi64((long long)0x94d049bb133111ebULL));
    return _mm512_xor_si512(x, _mm512_srli_epi64(x, 31));
}

/* Non-negative integers below 2^52 to doubles, exactly (the exponent of 2^52 laid over). */
AVX512 static inline __m512d small_to_double(__m512i x)
{
    const __m512i magic = _mm512_set1_epi64(0x4330000000000000LL);
    return _mm512_sub_pd(_mm512_castsi512_pd(_mm512_or_si512(x, magic)),
                         _mm512_castsi512_pd(magic));
}

/* x rounded to the nearest integer (ties to even), 0 <= x < 2^51, as a double and as a 64-bit
 * index (rng_avx2.c's round_index). */
AVX512 static inline __m512d round_index(__m512d x, __m512i *index)
{
    const __m512d magic = _mm512_set1_pd(0x1.8p52);
    __m512d t = _mm512_add_pd(x, magic);
    *index = _mm512_sub_epi64(_mm512_castpd_si512(t), _mm512_castpd_si512(magic));
    return _mm512_sub_pd(t, magic);
}

AVX512 static inline __m512d poly_log(__m512d x, const double *log_c, const double *inv_c)
{
    __m512i bits = _mm512_castpd_si512(x);
    __m512i mant = _mm512_and_si512(bits, _mm512_set1_epi64(0x000fffffffffffffLL));
    __mmask8 up = _mm512_cmpgt_epi64_mask(mant, _mm512_set1_epi64((1LL << 51) - 1)); /* m>=1.5 */
    __m512i e = _mm512_sub_epi64(_mm512_srli_epi64(bits, 52), _mm512_set1_epi64(1023));
    e = _mm512_mask_add_epi64(e, up, e, _mm512_set1_epi64(1));
    __m512i expo = _mm512_mask_blend_epi64(up, _mm512_set1_epi64(0x3ffLL << 52),
                                           _mm512_set1_epi64(0x3feLL << 52));
    __m512d m = _mm512_castsi512_pd(_mm512_or_si512(mant, expo));
    __m512i i;
    __m512d id = round_index(_mm512_mul_pd(m, _mm512_set1_pd(256.0)), &i);
    __m512d c = _mm512_mul_pd(id, _mm512_set1_pd(0x1.0p-8));
    __m512d r = _mm512_mul_pd(_mm512_sub_pd(m, c), _mm512_i64gather_pd(i, inv_c, 8));
    __m512d r2 = _mm512_mul_pd(r, r);
    __m512d p01 = _mm512_fmadd_pd(r, _mm512_set1_pd(1.0 / 3), _mm512_set1_pd(-1.0 / 2));
    __m512d p23 = _mm512_fmadd_pd(r, _mm512_set1_pd(1.0 / 5), _mm512_set1_pd(-1.0 / 4));
    __m512d p = _mm512_fmadd_pd(r2, _mm512_set1_pd(-1.0 / 6), p23);
    p = _mm512_fmadd_pd(r2, p, p01);
    p = _mm512_fmadd_pd(r2, p, r);
    __m512d base = _mm512_fmadd_pd(_mm512_cvtepi64_pd(e), _mm512_set1_pd(0x1.62e42fefa39efp-1),
                                   _mm512_i64gather_pd(i, log_c, 8));
    return _mm512_add_pd(base, p);
}

AVX512 static inline __m512d poly_cos(__m512i b, const double *cos_k, const double *sin_k)
{
    __m512i q = _mm512_srli_epi64(b, 51);
    __m512d f =
        _mm512_mul_pd(small_to_double(_mm512_and_si512(b, _mm512_set1_epi64((1LL << 51) - 1))),
                      _mm512_set1_pd(0x1.0p-51));
    __m512i k;
    __m512d kd = round_index(_mm512_mul_pd(f, _mm512_set1_pd(128.0)), &k);
    __m512d d = _mm512_mul_pd(_mm512_fnmadd_pd(kd, _mm512_set1_pd(1.0 / 128), f),
                              _mm512_set1_pd(0x1.921fb54442d18p+0));
    __m512d d2 = _mm512_mul_pd(d, d);
    __m512d cd =
        _mm512_fmadd_pd(d2, _mm512_fmadd_pd(d2, _mm512_set1_pd(1.0 / 24), _mm512_set1_pd(-1.0 / 2)),
                        _mm512_set1_pd(1.0));
    __m512d sd = _mm512_fmadd_pd(
        _mm512_mul_pd(d, d2),
        _mm512_fmadd_pd(d2, _mm512_set1_pd(1.0 / 120), _mm512_set1_pd(-1.0 / 6)), d);
    __m512d ck = _mm512_i64gather_pd(k, cos_k, 8), sk = _mm512_i64gather_pd(k, sin_k, 8);
    __m512d cosv = _mm512_fmsub_pd(ck, cd, _mm512_mul_pd(sk, sd));
    __m512d sinv = _mm512_fmadd_pd(sk, cd, _mm512_mul_pd(ck, sd));
    /* q 0: cos, 1: -sin, 2: -cos, 3: sin */
    __mmask8 odd = _mm512_test_epi64_mask(q, _mm512_set1_epi64(1));
    __m512d v = _mm512_mask_blend_pd(odd, cosv, sinv);
    __m512i neg = _mm512_slli_epi64(
        _mm512_and_si512(_mm512_srli_epi64(_mm512_add_epi64(q, _mm512_set1_epi64(1)), 1),
                         _mm512_set1_epi64(1)),
        63);
    return _mm512_xor_pd(v, _mm512_castsi512_pd(neg));
}

/* sqrt(-2 log u1) cos(2 pi u2) of eight elements from a + 1 and b. */
AVX512 static inline __m512d normal8(__m512i a1, __m512i b, const tpb_rng_tables_t *t)
{
    /* a + 1 <= 2^53: its two halves exactly, then their sum exactly (as rng_avx2.c) */
    __m512d hi = small_to_double(_mm512_srli_epi64(a1, 32));
    __m512d lo = small_to_double(_mm512_and_si512(a1, _mm512_set1_epi64(0xffffffffLL)));
    __m512d u1 =
        _mm512_mul_pd(_mm512_fmadd_pd(hi, _mm512_set1_pd(0x1.0p32), lo), _mm512_set1_pd(0x1.0p-53));
    __m512d lg = poly_log(u1, t->log_c, t->inv_c);
    __m512d s = _mm512_sqrt_pd(_mm512_mul_pd(lg, _mm512_set1_pd(-2.0)));
    return _mm512_mul_pd(s, poly_cos(b, t->cos_k, t->sin_k));
}

AVX512 long tpb_rng_approx_row_avx512(double *v, long n, uint64_t seed, uint64_t row_part,
                                      uint64_t j0, const tpb_rng_tables_t *t)
{
    const __m512i lane = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0), one = _mm512_set1_epi64(1);
    const __m512i vseed = _mm512_set1_epi64((long long)seed);
    const __m512i vrow = _mm512_set1_epi64((long long)row_part);
    long c = 0;
    for (; c + 8 <= n; c += 8) {
        __m512i j = _mm512_add_epi64(_mm512_set1_epi64((long long)(j0 + (uint64_t)c)), lane);
        __m512i h = mix(_mm512_xor_si512(vrow, _mm512_slli_epi64(j, 1)));
        h = mix(_mm512_xor_si512(vseed, h));
        __m512i a1 = _mm512_add_epi64(_mm512_srli_epi64(h, 11), one);
        _mm512_storeu_pd(v + c, normal8(a1, _mm512_srli_epi64(mix(h), 11), t));
    }
    return c;
}

AVX512 long tpb_rng_approx_bits_avx512(double *v, const uint64_t *a, const uint64_t *b, long n,
                                       const tpb_rng_tables_t *t)
{
    long c = 0;
    for (; c + 8 <= n; c += 8) {
        __m512i a1 = _mm512_add_epi64(_mm512_loadu_si512(a + c), _mm512_set1_epi64(1));
        _mm512_storeu_pd(v + c, normal8(a1, _mm512_loadu_si512(b + c), t));
    }
    return c;
}
#else
long tpb_rng_approx_row_avx512(double *v, long n, uint64_t seed, uint64_t row_part, uint64_t j0,
                               const tpb_rng_tables_t *t)
{
    (void)v, (void)n, (void)seed, (void)row_part, (void)j0, (void)t;
    return 0;
}

long tpb_rng_approx_bits_avx512(double *v, const uint64_t *a, const uint64_t *b, long n,
                                const tpb_rng_tables_t *t)
{
    (void)v, (void)a, (void)b, (void)n, (void)t;
    return 0;
}
#endif
