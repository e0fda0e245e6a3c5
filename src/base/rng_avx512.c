/*
 * rng_avx512.c - rng_fast.c's approximation eight elements at a time (AVX-512 F and DQ, chosen
 * at run time by the CPU's flags): rng_simd_impl.h's code over AVX-512's operations, the same
 * values as rng_avx2.c's bit for bit, with the hash's 64-bit multiplies in one instruction.
 */
#include "base/rng_internal.h"

#if TPB_RNG_HAVE_VECTOR
#include <immintrin.h>

#define ATTR __attribute__((target("avx512f,avx512dq,f16c")))

#define W 8
#define VD __m512d
#define VI __m512i
#define D_SET1 _mm512_set1_pd
#define I_SET1 _mm512_set1_epi64
#define I_LANES _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0)
#define D_ADD _mm512_add_pd
#define D_SUB _mm512_sub_pd
#define D_MUL _mm512_mul_pd
#define D_FMADD _mm512_fmadd_pd
#define D_FNMADD _mm512_fnmadd_pd
#define D_FMSUB _mm512_fmsub_pd
#define D_SQRT _mm512_sqrt_pd
#define D_XOR _mm512_xor_pd
#define I_ADD _mm512_add_epi64
#define I_SUB _mm512_sub_epi64
#define I_AND _mm512_and_si512
#define I_OR _mm512_or_si512
#define I_XOR _mm512_xor_si512
#define I_SRLI _mm512_srli_epi64
#define I_SLLI _mm512_slli_epi64
#define AS_I _mm512_castpd_si512
#define AS_D _mm512_castsi512_pd
#define GATHER(table, index) _mm512_i64gather_pd((index), (table), 8)
#define MUL64(x, c) _mm512_mullo_epi64((x), _mm512_set1_epi64((long long)(c)))
#define I_SELECT_GT(a, b, t, f) _mm512_mask_blend_epi64(_mm512_cmpgt_epi64_mask((a), (b)), (f), (t))
#define D_SELECT_ODD(q, t, f)                                                                      \
    _mm512_mask_blend_pd(_mm512_test_epi64_mask((q), _mm512_set1_epi64(1)), (f), (t))
#define LOAD_I _mm512_loadu_si512
#define STORE_D _mm512_storeu_pd
#define D_ABS _mm512_abs_pd
#define HI __m256i
#define TO_FLOAT_BITS(x) _mm256_castps_si256(_mm512_cvtpd_ps(x))
#define H_SET1 _mm256_set1_epi32
#define H_ADD _mm256_add_epi32
#define H_SRLI _mm256_srli_epi32
#define H_AND _mm256_and_si256
#define H_SUB _mm256_sub_epi32
#define H_OR _mm256_or_si256
#define H_GT _mm256_cmpgt_epi32
#define H_BLEND(m, t, f) _mm256_blendv_epi8((f), (t), (m))
#define H_UNITS(x)                                                                                 \
    _mm256_cvttps_epi32(                                                                           \
        _mm256_sub_ps(_mm256_add_ps(_mm256_mul_ps(_mm256_castsi256_ps(x), _mm256_set1_ps(512.0f)), \
                                    _mm256_set1_ps(0x1.0p23f)),                                    \
                      _mm256_set1_ps(0x1.0p23f)))
#define H_STORE8(p, x)                                                                             \
    _mm_storel_epi64((__m128i *)(p), _mm512_cvtepi32_epi8(_mm512_castsi256_si512(x)))
#define H_FP16(x) _mm256_cvtepu16_epi32(_mm256_cvtps_ph(_mm256_castsi256_ps(x), 0))
#define H_DIFFER(a, b)                                                                             \
    ((unsigned)~_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32((a), (b)))) & 0xffu)
#define H_STORE16(p, x)                                                                            \
    _mm_storeu_si128((__m128i *)(p),                                                               \
                     _mm256_castsi256_si128(_mm512_cvtepi32_epi16(_mm512_castsi256_si512(x))))
#define H_STORE32(p, x) _mm256_storeu_si256((__m256i *)(p), (x))
#define SIMD_ROW tpb_rng_approx_row_avx512
#define SIMD_BITS tpb_rng_approx_bits_avx512
#define SIMD_ENCODE tpb_rng_encode_avx512
#define SIMD_CONVERT tpb_rng_convert_avx512
#define LOAD_H(p) _mm256_loadu_si256((const __m256i *)(p))
#include "base/rng_simd_impl.h"
#endif
