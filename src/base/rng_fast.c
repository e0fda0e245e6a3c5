/*
 * rng_fast.c - the normal values encoded into a narrow dtype without glibc's log and cos where
 * the encoding does not depend on their last bits: 3x faster with AVX2, more with AVX-512
 * (doc/METRICS.md, "Host time"), bit for bit the same inputs.
 *
 * The approximation of sqrt(-2 log u1) cos(2 pi u2): log from a table of log(i/256) (193
 * entries) and log1p(r) to r^6 on |r| <= 2^-9 / 0.75 (truncation < 4e-17 relative; no
 * cancellation near u1 = 1, whose entry is log 1 = 0); cos from u2's quadrant (its top two
 * bits: exact), a table of cos and sin of pi/2 k/128 and Taylor's cos d to d^4 and sin d to
 * d^5 on |d| <= pi/512 (truncation < 7e-17). Against glibc's value (log and cos within 1 ulp;
 * 2 pi u2 rounded, an argument error < 7e-16, which at cos's zeros is an absolute error of up
 * to 8.6 * 7e-16) the difference stays below ~1e-15 relative plus ~1e-14 absolute; the bound
 * used, 2^-40 (9e-13) of each, leaves two orders of magnitude. tests/test_rng.c measures the
 * largest difference over random and edge inputs against it, on both paths.
 *
 * An element is encoded from both ends of its interval; where the two encodings agree, every
 * value between them (glibc's among them) encodes the same, as each dtype's conversion is
 * monotone. Where they differ, glibc's value is drawn: ~2e-4 of fp32 elements, fewer for
 * fp16, bf16 and fp8. fp64 has no such interval: rng.c draws it with glibc's functions. With
 * AVX2 or AVX-512, every dtype (each from a float) is encoded and compared inside the vector
 * code (rng_simd_impl.h's SIMD_ENCODE); here, a row's last elements, fewer than the vector.
 */
#include <pthread.h>
#include <string.h>

#include "base/rng_internal.h"

#if TPB_RNG_HAVE_VECTOR
#include <cpuid.h>
#endif

enum { LOG_LO = TPB_RNG_LOG_LO, LOG_HI = TPB_RNG_LOG_HI, TRIG_N = TPB_RNG_TRIG_N };

static tpb_rng_tables_t tables;
static double *const log_c = tables.log_c, *const inv_c = tables.inv_c, *const cos_k = tables.cos_k,
                     *const sin_k = tables.sin_k;
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static int avx2_ok;   /* this CPU runs approx_row_avx2 */
static int avx512_ok; /* and approx_row_avx512 */

static void tables_init(void)
{
#if TPB_RNG_HAVE_VECTOR
    unsigned a, b, c = 0, d; /* F16C by CPUID (clang 14's __builtin_cpu_supports lacks it) */
    int f16c = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C);
    avx2_ok = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && f16c;
    avx512_ok = avx2_ok && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
#endif
    for (int i = LOG_LO; i <= LOG_HI; i++) {
        log_c[i] = log(i / 256.0);
        inv_c[i] = 256.0 / i;
    }
    for (int k = 0; k <= TRIG_N; k++) {
        cos_k[k] = k == TRIG_N ? 0.0 : cos(M_PI / 2 * k / TRIG_N);
        sin_k[k] = k == 0 ? 0.0 : k == TRIG_N ? 1.0 : sin(M_PI / 2 * k / TRIG_N);
    }
}

static const double LN2 = 0x1.62e42fefa39efp-1, PI_2 = 0x1.921fb54442d18p+0;

/* log(x), x in [2^-53, 1]: x = 2^e m with m in [0.75, 1.5), m = c (1 + r) with c = i/256,
 * |r| <= 2^-9 / 0.75, log1p(r) to r^6 (relative error < 3e-17). Branch-free: the values are
 * random, a branch on them is mispredicted half the time. */
static double approx_log(double x)
{
    uint64_t bits;
    memcpy(&bits, &x, sizeof(bits));
    uint64_t mant = bits & 0x000fffffffffffffULL, up = mant >= (1ULL << 51); /* m >= 1.5 */
    int e = (int)(bits >> 52) - 1023 + (int)up;
    bits = mant | ((0x3ffULL - up) << 52);
    double m;
    memcpy(&m, &bits, sizeof(m));
    int i = (int)(m * 256.0 + 0.5);
    double r = (m - i * 0x1.0p-8) * inv_c[i]; /* m - c is exact (Sterbenz) */
    double r2 = r * r;
    /* r - r^2/2 + r^3/3 - r^4/4 + r^5/5 - r^6/6, in pairs (a shorter chain than Horner's) */
    double p =
        r + r2 * ((-1.0 / 2 + r * (1.0 / 3)) + r2 * ((-1.0 / 4 + r * (1.0 / 5)) + r2 * (-1.0 / 6)));
    return (e * LN2 + log_c[i]) + p;
}

/* cos(2 pi b 2^-53): the quadrant q from b's top two bits, the rest a fraction f in [0, 1);
 * with k = round(128 f) and d = pi/2 (f - k/128) (|d| <= pi/512; f - k/128 exact), cos and
 * sin of pi/2 f from the table and Taylor's cos d to d^4 and sin d to d^5 (errors < 1e-16).
 * cos(q pi/2 + pi/2 f) is cos, -sin, -cos, sin of pi/2 f for q = 0..3. Branch-free. */
static double approx_cos(uint64_t b)
{
    unsigned q = (unsigned)(b >> 51);
    double f = (double)(b & ((1ULL << 51) - 1)) * 0x1.0p-51;
    int k = (int)(f * TRIG_N + 0.5);
    double d = (f - k * (1.0 / TRIG_N)) * PI_2, d2 = d * d;
    double cd = 1.0 + d2 * (-1.0 / 2 + d2 * (1.0 / 24));
    double sd = d + d * d2 * (-1.0 / 6 + d2 * (1.0 / 120));
    double both[2] = {cos_k[k] * cd - sin_k[k] * sd, sin_k[k] * cd + cos_k[k] * sd};
    double v = both[q & 1];
    uint64_t vb;
    memcpy(&vb, &v, sizeof(vb));
    vb ^= (uint64_t)(((q + 1) >> 1) & 1) << 63; /* q 1 and 2: negative */
    memcpy(&v, &vb, sizeof(v));
    return v;
}

static double approx_one(uint64_t a, uint64_t b)
{
    double u1 = ((double)a + 1.0) * 0x1.0p-53;
    return sqrt(-2.0 * approx_log(u1)) * approx_cos(b);
}

static void approx_row_scalar(double *v, long n, uint64_t seed, uint64_t row_part, uint64_t j0)
{
    for (long c = 0; c < n; c++) {
        uint64_t a, b;
        tpb_rng_bits(seed, row_part, j0 + (uint64_t)c, &a, &b);
        v[c] = approx_one(a, b);
    }
}

static void approx_bits_scalar(double *v, const uint64_t *a, const uint64_t *b, long n)
{
    for (long c = 0; c < n; c++)
        v[c] = approx_one(a[c], b[c]);
}

/* The vector code `path` runs here: 0 none, 1 AVX2, 2 AVX-512 (then AVX2 for what is left of
 * eight); -1: asked of a CPU without it. */
static int vector_path(int path)
{
    pthread_once(&tables_once, tables_init);
    switch (path) {
    case TPB_RNG_PATH_SCALAR: return 0;
    case TPB_RNG_PATH_AVX2: return avx2_ok ? 1 : -1;
    case TPB_RNG_PATH_AVX512: return avx512_ok ? 2 : -1;
    default: return avx512_ok ? 2 : avx2_ok;
    }
}

int tpb_rng_approx_row(double *v, long n, uint64_t seed, uint64_t row_part, uint64_t j0, int path)
{
    int vec = vector_path(path);
    if (vec < 0)
        return -1;
    long done = vec == 2 ? tpb_rng_approx_row_avx512(v, n, seed, row_part, j0, &tables) : 0;
    if (vec)
        done += tpb_rng_approx_row_avx2(v + done, n - done, seed, row_part, j0 + (uint64_t)done,
                                        &tables);
    approx_row_scalar(v + done, n - done, seed, row_part, j0 + (uint64_t)done);
    return 0;
}

int tpb_rng_approx_bits(double *v, const uint64_t *a, const uint64_t *b, long n, int path)
{
    int vec = vector_path(path);
    if (vec < 0)
        return -1;
    long done = vec == 2 ? tpb_rng_approx_bits_avx512(v, a, b, n, &tables) : 0;
    if (vec)
        done += tpb_rng_approx_bits_avx2(v + done, a + done, b + done, n - done, &tables);
    approx_bits_scalar(v + done, a + done, b + done, n - done);
    return 0;
}

/* Elements [c0, c1) of the row drawn with glibc's functions into out; how many. */
static long draw_exact(unsigned char *out, long c0, long c1, uint64_t seed, uint64_t row_part,
                       uint64_t j0, double scale, tpb_dtype_t dt)
{
    size_t esz = tpb_dtype_in_size(dt);
    for (long c = c0; c < c1; c++) {
        uint64_t a, b;
        tpb_rng_bits(seed, row_part, j0 + (uint64_t)c, &a, &b);
        double v = scale * tpb_rng_exact(a, b);
        tpb_dtype_encode(dt, &v, out + (size_t)c * esz, 1);
    }
    return c1 - c0;
}

/* Elements j0 .. j0 + n - 1 encoded from both ends of their intervals, element by element (the
 * approximation by `path`), glibc's value drawn where the ends differ; how many were. */
static long encode_ends(unsigned char *out, long n, uint64_t seed, uint64_t row_part, uint64_t j0,
                        double scale, tpb_dtype_t dt, double *tmp, int path)
{
    double *lo = tmp, *hi = tmp + n;
    unsigned char *hi_enc = (unsigned char *)(tmp + 2 * n);
    double abs_e = fabs(scale) * TPB_RNG_ABS_BOUND;
    tpb_rng_approx_row(lo, n, seed, row_part, j0, path);
    for (long c = 0; c < n; c++) {
        double v = scale * lo[c], e = fabs(v) * TPB_RNG_REL_BOUND + abs_e;
        lo[c] = v - e;
        hi[c] = v + e;
    }
    tpb_dtype_encode(dt, lo, out, (size_t)n);
    tpb_dtype_encode(dt, hi, hi_enc, (size_t)n);
    size_t esz = tpb_dtype_in_size(dt);
    if (memcmp(out, hi_enc, (size_t)n * esz) == 0)
        return 0;
    long exact = 0;
    for (long c0 = 0; c0 < n; c0 += 64) { /* the blocks that differ, then their elements */
        long k = n - c0 < 64 ? n - c0 : 64;
        if (memcmp(out + (size_t)c0 * esz, hi_enc + (size_t)c0 * esz, (size_t)k * esz) == 0)
            continue;
        for (long c = c0; c < c0 + k; c++)
            if (memcmp(out + (size_t)c * esz, hi_enc + (size_t)c * esz, esz) != 0)
                exact += draw_exact(out, c, c + 1, seed, row_part, j0, scale, dt);
    }
    return exact;
}

/* The vector code's name for dt's encoding (not fp64). */
static int fused_kind(tpb_dtype_t dt)
{
    return dt == TPB_DTYPE_BF16   ? TPB_RNG_FUSED_BF16
           : dt == TPB_DTYPE_FP16 ? TPB_RNG_FUSED_FP16
           : dt == TPB_DTYPE_FP8  ? TPB_RNG_FUSED_FP8
                                  : TPB_RNG_FUSED_FLOAT;
}

/* The same fused into the vector code (every dtype but fp64: their encodings come from a
 * float); the elements it did in *done. */
static long encode_fused(unsigned char *out, long n, uint64_t seed, uint64_t row_part, uint64_t j0,
                         double scale, tpb_dtype_t dt, unsigned char *differ, int vec, long *done)
{
    int kind = fused_kind(dt);
    size_t esz = tpb_dtype_in_size(dt);
    long d = vec == 2
                 ? tpb_rng_encode_avx512(out, differ, n, seed, row_part, j0, scale, kind, &tables)
                 : 0;
    d += tpb_rng_encode_avx2(out + (size_t)d * esz, differ + d, n - d, seed, row_part,
                             j0 + (uint64_t)d, scale, kind, &tables);
    long exact = 0;
    for (const unsigned char *p = differ; (p = memchr(p, 1, (size_t)(differ + d - p))); p++)
        exact += draw_exact(out, p - differ, p - differ + 1, seed, row_part, j0, scale, dt);
    *done = d;
    return exact;
}

int tpb_rng_convert_path(void *dst, const uint32_t *bits, long n, tpb_dtype_t dt, int path)
{
    int vec = vector_path(path), kind = fused_kind(dt);
    if (vec < 0)
        return -1;
    size_t esz = tpb_dtype_in_size(dt);
    long d = vec == 2 ? tpb_rng_convert_avx512(dst, bits, n, kind) : 0;
    if (vec)
        d += tpb_rng_convert_avx2((unsigned char *)dst + (size_t)d * esz, bits + d, n - d, kind);
    for (; d < n; d++) { /* a float is a double exactly: dtype.c's conversion of it */
        float f;
        memcpy(&f, &bits[d], sizeof(f));
        double v = f;
        tpb_dtype_encode(dt, &v, (unsigned char *)dst + (size_t)d * esz, 1);
    }
    return 0;
}

long tpb_rng_row_encode_path(void *dst, long n, uint64_t seed, uint64_t row_part, uint64_t j0,
                             double scale, tpb_dtype_t dt, double *tmp, int path)
{
    unsigned char *out = dst;
    /* a zero, tiny, huge or non-finite scale leaves no interval to decide by (a zero one:
     * the sign of a zero would be the approximation's) */
    if (!(fabs(scale) >= 0x1.0p-900 && fabs(scale) <= 0x1.0p900))
        return draw_exact(out, 0, n, seed, row_part, j0, scale, dt);
    int vec = vector_path(path);
    if (vec < 0)
        return -1;
    long done = 0, exact = 0;
    if (vec && dt != TPB_DTYPE_FP64) /* fp64: rng.c draws it exactly */
        exact =
            encode_fused(out, n, seed, row_part, j0, scale, dt, (unsigned char *)tmp, vec, &done);
    size_t esz = tpb_dtype_in_size(dt);
    return exact + encode_ends(out + (size_t)done * esz, n - done, seed, row_part,
                               j0 + (uint64_t)done, scale, dt, tmp, path);
}

long tpb_rng_row_encode(void *dst, long n, uint64_t seed, uint64_t row_part, uint64_t j0,
                        double scale, tpb_dtype_t dt, double *tmp)
{
    return tpb_rng_row_encode_path(dst, n, seed, row_part, j0, scale, dt, tmp, TPB_RNG_PATH_AUTO);
}
