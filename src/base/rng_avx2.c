/*
 * rng_avx2.c - rng_fast.c's approximation four elements at a time (AVX2, FMA and F16C, chosen at
 * run time by the CPU's flags): rng_simd_impl.h's code over AVX2's operations. AVX2 multiplies 32 x
 * 32 bits only: the hash's 64-bit products are built from three.
 */
#include "base/rng_internal.h"

#include <string.h>

#if TPB_RNG_HAVE_VECTOR
#include <immintrin.h>

#define ATTR __attribute__((target("avx2,fma,f16c")))

/* x * c mod 2^64, lane by lane. */
ATTR static inline __m256i mul64(__m256i x, uint64_t c)
{
    __m256i cl = _mm256_set1_epi64x((long long)(c & 0xffffffffULL));
    __m256i ch = _mm256_set1_epi64x((long long)(c >> 32));
    __m256i cross =
        _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64(x, 32), cl), _mm256_mul_epu32(x, ch));
    return _mm256_add_epi64(_mm256_mul_epu32(x, cl), _mm256_slli_epi64(cross, 32));
}

/* The low bytes of four 32-bit lanes (each below 256). */
ATTR static inline void store8(uint8_t *p, __m128i x)
{
    __m128i b = _mm_packus_epi16(_mm_packus_epi32(x, x), x);
    int32_t w = _mm_cvtsi128_si32(b);
    memcpy(p, &w, sizeof(w));
}

#define W 4
#define VD __m256d
#define VI __m256i
#define D_SET1 _mm256_set1_pd
#define I_SET1 _mm256_set1_epi64x
#define I_LANES _mm256_set_epi64x(3, 2, 1, 0)
#define D_ADD _mm256_add_pd
#define D_SUB _mm256_sub_pd
#define D_MUL _mm256_mul_pd
#define D_FMADD _mm256_fmadd_pd
#define D_FNMADD _mm256_fnmadd_pd
#define D_FMSUB _mm256_fmsub_pd
#define D_SQRT _mm256_sqrt_pd
#define D_XOR _mm256_xor_pd
#define I_ADD _mm256_add_epi64
#define I_SUB _mm256_sub_epi64
#define I_AND _mm256_and_si256
#define I_OR _mm256_or_si256
#define I_XOR _mm256_xor_si256
#define I_SRLI _mm256_srli_epi64
#define I_SLLI _mm256_slli_epi64
#define AS_I _mm256_castpd_si256
#define AS_D _mm256_castsi256_pd
#define GATHER(table, index) _mm256_i64gather_pd((table), (index), 8)
#define MUL64 mul64
#define I_SELECT_GT(a, b, t, f) _mm256_blendv_epi8((f), (t), _mm256_cmpgt_epi64((a), (b)))
#define D_SELECT_ODD(q, t, f)                                                                      \
    _mm256_blendv_pd((f), (t),                                                                     \
                     _mm256_castsi256_pd(_mm256_cmpeq_epi64(                                       \
                         _mm256_and_si256((q), _mm256_set1_epi64x(1)), _mm256_set1_epi64x(1))))
#define LOAD_I(p) _mm256_loadu_si256((const __m256i *)(p))
#define STORE_D _mm256_storeu_pd
#define D_ABS(x) _mm256_andnot_pd(_mm256_set1_pd(-0.0), (x))
#define HI __m128i
#define TO_FLOAT_BITS(x) _mm_castps_si128(_mm256_cvtpd_ps(x))
#define H_SET1 _mm_set1_epi32
#define H_ADD _mm_add_epi32
#define H_SRLI _mm_srli_epi32
#define H_AND _mm_and_si128
#define H_SUB _mm_sub_epi32
#define H_OR _mm_or_si128
#define H_GT _mm_cmpgt_epi32
#define H_BLEND(m, t, f) _mm_blendv_epi8((f), (t), (m))
#define H_UNITS(x)                                                                                 \
    _mm_cvttps_epi32(_mm_sub_ps(                                                                   \
        _mm_add_ps(_mm_mul_ps(_mm_castsi128_ps(x), _mm_set1_ps(512.0f)), _mm_set1_ps(0x1.0p23f)),  \
        _mm_set1_ps(0x1.0p23f)))
#define H_STORE8(p, x) store8((p), (x))
#define H_FP16(x) _mm_cvtepu16_epi32(_mm_cvtps_ph(_mm_castsi128_ps(x), 0))
#define H_DIFFER(a, b)                                                                             \
    ((unsigned)~_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32((a), (b)))) & 0xfu)
#define H_STORE16(p, x) _mm_storel_epi64((__m128i *)(p), _mm_packus_epi32((x), (x)))
#define H_STORE32(p, x) _mm_storeu_si128((__m128i *)(p), (x))
#define SIMD_ROW tpb_rng_approx_row_avx2
#define SIMD_BITS tpb_rng_approx_bits_avx2
#define SIMD_ENCODE tpb_rng_encode_avx2
#define SIMD_CONVERT tpb_rng_convert_avx2
#define LOAD_H(p) _mm_loadu_si128((const __m128i *)(p))
#include "base/rng_simd_impl.h"
#endif
