/*
 * rng_avx2.c - rng_fast.c's approximation four elements at a time (AVX2 and FMA, chosen at run
 * time by the CPU's flags): the same hash, the same tables and the same polynomials, each
 * lane as the scalar code computes it but for FMA's single rounding and round-half-even table
 * indices (either index keeps |r| and |d| within the scalar code's bounds).
 */
#include "base/rng_internal.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define AVX2 __attribute__((target("avx2,fma")))

/* x * c mod 2^64, lane by lane: AVX2 multiplies 32 x 32 bits only. */
AVX2 static inline __m256i mul64(__m256i x, uint64_t c)
{
    __m256i cl = _mm256_set1_epi64x((long long)(c & 0xffffffffULL));
    __m256i ch = _mm256_set1_epi64x((long long)(c >> 32));
    __m256i cross =
        _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64(x, 32), cl), _mm256_mul_epu32(x, ch));
    return _mm256_add_epi64(_mm256_mul_epu32(x, cl), _mm256_slli_epi64(cross, 32));
}

AVX2 static inline __m256i mix(__m256i x)
{
    x = _mm256_add_epi64(x, _mm256_set1_epi64x((long long)0x9e3779b97f4a7c15ULL));
    x = mul64(_mm256_xor_si256(x, _mm256_srli_epi64(x, 30)), 0xbf58476d1ce4e5b9ULL);
    x = mul64(_mm256_xor_si256(x, _mm256_srli_epi64(x, 27)), 0x94d049bb133111ebULL);
    return _mm256_xor_si256(x, _mm256_srli_epi64(x, 31));
}

/* Non-negative integers below 2^52 to doubles, exactly (the exponent of 2^52 laid over). */
AVX2 static inline __m256d small_to_double(__m256i x)
{
    const __m256i magic = _mm256_set1_epi64x(0x4330000000000000LL);
    return _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(x, magic)),
                         _mm256_castsi256_pd(magic));
}

/* Small signed integers (|x| < 2^51) to doubles. */
AVX2 static inline __m256d signed_to_double(__m256i x)
{
    const __m256i magic = _mm256_set1_epi64x(0x4338000000000000LL);
    return _mm256_sub_pd(_mm256_castsi256_pd(_mm256_add_epi64(x, magic)),
                         _mm256_castsi256_pd(magic));
}

/* x rounded to the nearest integer (ties to even), 0 <= x < 2^51, as a double and as a 64-bit
 * index: adding 1.5 * 2^52 leaves the integer in the low bits of the sum. */
AVX2 static inline __m256d round_index(__m256d x, __m256i *index)
{
    const __m256d magic = _mm256_set1_pd(0x1.8p52);
    __m256d t = _mm256_add_pd(x, magic);
    *index = _mm256_sub_epi64(_mm256_castpd_si256(t), _mm256_castpd_si256(magic));
    return _mm256_sub_pd(t, magic);
}

AVX2 static inline __m256d poly_log(__m256d x, const double *log_c, const double *inv_c)
{
    __m256i bits = _mm256_castpd_si256(x);
    __m256i mant = _mm256_and_si256(bits, _mm256_set1_epi64x(0x000fffffffffffffLL));
    __m256i up = _mm256_cmpgt_epi64(mant, _mm256_set1_epi64x((1LL << 51) - 1)); /* -1: m >= 1.5 */
    __m256i e = _mm256_sub_epi64(
        _mm256_sub_epi64(_mm256_srli_epi64(bits, 52), _mm256_set1_epi64x(1023)), up);
    __m256i expo = _mm256_add_epi64(_mm256_set1_epi64x(0x3ffLL << 52), _mm256_slli_epi64(up, 52));
    __m256d m = _mm256_castsi256_pd(_mm256_or_si256(mant, expo));
    __m256i i;
    __m256d id = round_index(_mm256_mul_pd(m, _mm256_set1_pd(256.0)), &i);
    __m256d c = _mm256_mul_pd(id, _mm256_set1_pd(0x1.0p-8));
    __m256d r = _mm256_mul_pd(_mm256_sub_pd(m, c), _mm256_i64gather_pd(inv_c, i, 8));
    __m256d r2 = _mm256_mul_pd(r, r);
    __m256d p01 = _mm256_fmadd_pd(r, _mm256_set1_pd(1.0 / 3), _mm256_set1_pd(-1.0 / 2));
    __m256d p23 = _mm256_fmadd_pd(r, _mm256_set1_pd(1.0 / 5), _mm256_set1_pd(-1.0 / 4));
    __m256d p = _mm256_fmadd_pd(r2, _mm256_set1_pd(-1.0 / 6), p23);
    p = _mm256_fmadd_pd(r2, p, p01);
    p = _mm256_fmadd_pd(r2, p, r);
    __m256d base = _mm256_fmadd_pd(signed_to_double(e), _mm256_set1_pd(0x1.62e42fefa39efp-1),
                                   _mm256_i64gather_pd(log_c, i, 8));
    return _mm256_add_pd(base, p);
}

AVX2 static inline __m256d poly_cos(__m256i b, const double *cos_k, const double *sin_k)
{
    __m256i q = _mm256_srli_epi64(b, 51);
    __m256d f =
        _mm256_mul_pd(small_to_double(_mm256_and_si256(b, _mm256_set1_epi64x((1LL << 51) - 1))),
                      _mm256_set1_pd(0x1.0p-51));
    __m256i k;
    __m256d kd = round_index(_mm256_mul_pd(f, _mm256_set1_pd(128.0)), &k);
    __m256d d = _mm256_mul_pd(_mm256_fnmadd_pd(kd, _mm256_set1_pd(1.0 / 128), f),
                              _mm256_set1_pd(0x1.921fb54442d18p+0));
    __m256d d2 = _mm256_mul_pd(d, d);
    __m256d cd =
        _mm256_fmadd_pd(d2, _mm256_fmadd_pd(d2, _mm256_set1_pd(1.0 / 24), _mm256_set1_pd(-1.0 / 2)),
                        _mm256_set1_pd(1.0));
    __m256d sd = _mm256_fmadd_pd(
        _mm256_mul_pd(d, d2),
        _mm256_fmadd_pd(d2, _mm256_set1_pd(1.0 / 120), _mm256_set1_pd(-1.0 / 6)), d);
    __m256d ck = _mm256_i64gather_pd(cos_k, k, 8), sk = _mm256_i64gather_pd(sin_k, k, 8);
    __m256d cosv = _mm256_fmsub_pd(ck, cd, _mm256_mul_pd(sk, sd));
    __m256d sinv = _mm256_fmadd_pd(sk, cd, _mm256_mul_pd(ck, sd));
    /* q 0: cos, 1: -sin, 2: -cos, 3: sin */
    __m256i odd =
        _mm256_cmpeq_epi64(_mm256_and_si256(q, _mm256_set1_epi64x(1)), _mm256_set1_epi64x(1));
    __m256d v = _mm256_blendv_pd(cosv, sinv, _mm256_castsi256_pd(odd));
    __m256i neg = _mm256_slli_epi64(
        _mm256_and_si256(_mm256_srli_epi64(_mm256_add_epi64(q, _mm256_set1_epi64x(1)), 1),
                         _mm256_set1_epi64x(1)),
        63);
    return _mm256_xor_pd(v, _mm256_castsi256_pd(neg));
}

/* sqrt(-2 log u1) cos(2 pi u2) of four elements from a + 1 and b. */
AVX2 static inline __m256d normal4(__m256i a1, __m256i b, const tpb_rng_tables_t *t)
{
    /* a + 1 <= 2^53: its two halves exactly, then their sum exactly */
    __m256d hi = small_to_double(_mm256_srli_epi64(a1, 32));
    __m256d lo = small_to_double(_mm256_and_si256(a1, _mm256_set1_epi64x(0xffffffffLL)));
    __m256d u1 =
        _mm256_mul_pd(_mm256_fmadd_pd(hi, _mm256_set1_pd(0x1.0p32), lo), _mm256_set1_pd(0x1.0p-53));
    __m256d lg = poly_log(u1, t->log_c, t->inv_c);
    __m256d s = _mm256_sqrt_pd(_mm256_mul_pd(lg, _mm256_set1_pd(-2.0)));
    return _mm256_mul_pd(s, poly_cos(b, t->cos_k, t->sin_k));
}

AVX2 long tpb_rng_approx_row_avx2(double *v, long n, uint64_t seed, uint64_t row_part, uint64_t j0,
                                  const tpb_rng_tables_t *t)
{
    const __m256i lane = _mm256_set_epi64x(3, 2, 1, 0), one = _mm256_set1_epi64x(1);
    const __m256i vseed = _mm256_set1_epi64x((long long)seed);
    const __m256i vrow = _mm256_set1_epi64x((long long)row_part);
    long c = 0;
    for (; c + 4 <= n; c += 4) {
        __m256i j = _mm256_add_epi64(_mm256_set1_epi64x((long long)(j0 + (uint64_t)c)), lane);
        __m256i h = mix(_mm256_xor_si256(vrow, _mm256_slli_epi64(j, 1)));
        h = mix(_mm256_xor_si256(vseed, h));
        __m256i a1 = _mm256_add_epi64(_mm256_srli_epi64(h, 11), one);
        _mm256_storeu_pd(v + c, normal4(a1, _mm256_srli_epi64(mix(h), 11), t));
    }
    return c;
}

AVX2 long tpb_rng_approx_bits_avx2(double *v, const uint64_t *a, const uint64_t *b, long n,
                                   const tpb_rng_tables_t *t)
{
    long c = 0;
    for (; c + 4 <= n; c += 4) {
        __m256i a1 =
            _mm256_add_epi64(_mm256_loadu_si256((const __m256i *)(a + c)), _mm256_set1_epi64x(1));
        _mm256_storeu_pd(v + c, normal4(a1, _mm256_loadu_si256((const __m256i *)(b + c)), t));
    }
    return c;
}
#else
long tpb_rng_approx_row_avx2(double *v, long n, uint64_t seed, uint64_t row_part, uint64_t j0,
                             const tpb_rng_tables_t *t)
{
    (void)v, (void)n, (void)seed, (void)row_part, (void)j0, (void)t;
    return 0;
}

long tpb_rng_approx_bits_avx2(double *v, const uint64_t *a, const uint64_t *b, long n,
                              const tpb_rng_tables_t *t)
{
    (void)v, (void)a, (void)b, (void)n, (void)t;
    return 0;
}
#endif
