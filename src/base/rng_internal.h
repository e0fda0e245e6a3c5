/*
 * rng_internal.h - the generator's parts that rng.c and rng_fast.c share (private to base/):
 * the hash, an element's two 53-bit uniforms, and glibc's exact normal value of them, which
 * the golden values pin.
 */
#ifndef TPB_RNG_INTERNAL_H
#define TPB_RNG_INTERNAL_H

#include <math.h>
#include <stdint.h>

#include "base/dtype.h"

static inline uint64_t tpb_splitmix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* A row's part of the hash: computed once a row. */
static inline uint64_t tpb_rng_row_part(uint32_t id, uint64_t i)
{
    return ((uint64_t)id << 48) ^ tpb_splitmix64(i);
}

/* Element j's two 53-bit integers: u1 = (a + 1) 2^-53 in (0, 1], u2 = b 2^-53 in [0, 1). */
static inline void tpb_rng_bits(uint64_t seed, uint64_t row_part, uint64_t j, uint64_t *a,
                                uint64_t *b)
{
    uint64_t h = tpb_splitmix64(seed ^ tpb_splitmix64(row_part ^ (j << 1)));
    *a = h >> 11;
    *b = tpb_splitmix64(h) >> 11;
}

/* Box-Muller through glibc's log and cos: the values as they have always been. */
static inline double tpb_rng_exact(uint64_t a, uint64_t b)
{
    double u1 = ((double)a + 1.0) * 0x1.0p-53;
    double u2 = (double)b * 0x1.0p-53;
    return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

/* tpb_rng_exact of elements (i, j0) .. (i, j0 + n - 1) into v[n], each to within the bound
 * below, without a libm call but sqrt: by the scalar code, the AVX2 code, the AVX-512 code
 * (eight at a time, the rest by AVX2 and the scalar code), or (AUTO) the widest the CPU has
 * (AVX2 with FMA; AVX-512 F and DQ). The vector codes give the same values bit for bit. -1
 * (nothing written) if a vector code was asked of a CPU without it. */
enum { TPB_RNG_PATH_AUTO, TPB_RNG_PATH_SCALAR, TPB_RNG_PATH_AVX2, TPB_RNG_PATH_AVX512 };
int tpb_rng_approx_row(double *v, long n, uint64_t seed, uint64_t row_part, uint64_t j0, int path);

/* The same of given bits: v[c] approximates tpb_rng_exact(a[c], b[c]) (tests' edge cases). */
int tpb_rng_approx_bits(double *v, const uint64_t *a, const uint64_t *b, long n, int path);

/* rng_fast.c's tables: log(i/256) and 256/i for i in [192, 384] (m in [0.75, 1.5)); cos and
 * sin of pi/2 k/128 for k in [0, 128], exactly 1 and 0 at both ends (no error at cos's zeros
 * but the argument's). */
enum { TPB_RNG_LOG_LO = 192, TPB_RNG_LOG_HI = 384, TPB_RNG_TRIG_N = 128 };
typedef struct {
    double log_c[TPB_RNG_LOG_HI + 1], inv_c[TPB_RNG_LOG_HI + 1];
    double cos_k[TPB_RNG_TRIG_N + 1], sin_k[TPB_RNG_TRIG_N + 1];
} tpb_rng_tables_t;

/* The vector code (rng_simd_impl.h) at one width w: avx2 (rng_avx2.c, 4 lanes) or avx512
 * (rng_avx512.c, 8). Each returns the elements it did, a multiple of its lanes; rng_fast.c does
 * the rest. approx_row and approx_bits: tpb_rng_approx_row's and _bits' part. encode: the
 * encoding from both ends fused with the approximation, for fp32 and tf32 (their float), bf16,
 * fp16 and fp8 (`kind`, TPB_RNG_FUSED_*): dst from the low end, differ[c] 1 where the high end
 * differs. convert: those conversions alone, of floats' bits (not NaN). Declared here (spec
 * empty, body ;), or where the machine has no vector code, defined doing nothing (rng_fast.c
 * never picks them there); one function a line, as clang-format would not keep them. */
enum { TPB_RNG_FUSED_FLOAT, TPB_RNG_FUSED_BF16, TPB_RNG_FUSED_FP16, TPB_RNG_FUSED_FP8 };
/* clang-format off */
#define TPB_RNG_VECTOR_CODE(w, spec, body)                                                         \
    spec long tpb_rng_approx_row_##w(double *v, long n, uint64_t seed, uint64_t row_part,          \
                                     uint64_t j0, const tpb_rng_tables_t *t) body                  \
    spec long tpb_rng_approx_bits_##w(double *v, const uint64_t *a, const uint64_t *b, long n,     \
                                      const tpb_rng_tables_t *t) body                              \
    spec long tpb_rng_encode_##w(void *dst, unsigned char *differ, long n, uint64_t seed,          \
                                 uint64_t row_part, uint64_t j0, double scale, int kind,           \
                                 const tpb_rng_tables_t *t) body                                   \
    spec long tpb_rng_convert_##w(void *dst, const uint32_t *bits, long n, int kind) body
/* clang-format on */
#if defined(__x86_64__) && defined(__GNUC__)
#define TPB_RNG_HAVE_VECTOR 1
TPB_RNG_VECTOR_CODE(avx2, , ;)
TPB_RNG_VECTOR_CODE(avx512, , ;)
#else
#define TPB_RNG_HAVE_VECTOR 0
TPB_RNG_VECTOR_CODE(avx2, static inline, { return 0; })
TPB_RNG_VECTOR_CODE(avx512, static inline, { return 0; })
#endif

/* The bound on |scale * tpb_rng_approx - scale * tpb_rng_exact| at value v: relative plus
 * absolute (in units of |scale|; the zeros of cos, where the argument's rounding is all). */
#define TPB_RNG_REL_BOUND 0x1.0p-40
#define TPB_RNG_ABS_BOUND 0x1.0p-40

/* Elements (i, j0) .. (i, j0 + n - 1), scaled, encoded as dt (not fp64) into dst: bit for bit
 * tpb_rng_row then tpb_dtype_encode, glibc's log and cos called only where the bound leaves
 * the encoding in doubt. `tmp` holds 3 * n doubles. Returns how many were drawn exactly. */
long tpb_rng_row_encode(void *dst, long n, uint64_t seed, uint64_t row_part, uint64_t j0,
                        double scale, tpb_dtype_t dt, double *tmp);
/* Floats' bits (not NaN) encoded as dt (not fp64) by the vector code of `path` (the rest, fewer
 * than its width, by dtype.c's tpb_dtype_encode): what the fused encoding converts, for the tests
 * to compare with dtype.c's. -1 if the CPU lacks the path. */
int tpb_rng_convert_path(void *dst, const uint32_t *bits, long n, tpb_dtype_t dt, int path);

/* The same by the code `path` (TPB_RNG_PATH_*; tests): a vector path fuses the encodings into
 * the vector code (every dtype but fp64). -1 if the CPU lacks the path. */
long tpb_rng_row_encode_path(void *dst, long n, uint64_t seed, uint64_t row_part, uint64_t j0,
                             double scale, tpb_dtype_t dt, double *tmp, int path);

#endif /* TPB_RNG_INTERNAL_H */
