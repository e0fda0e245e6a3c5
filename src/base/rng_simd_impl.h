/*
 * rng_simd_impl.h - rng_fast.c's approximation, W elements at a time, written once for every vector
 * width: rng_avx2.c (W 4) and rng_avx512.c (W 8) define the operations below and include it,
 * so both run the same operations lane by lane and give the same values bit for bit
 * (tests/test_rng.c compares them). Each lane computes what the scalar code does but for FMA's
 * single rounding and round-half-even table indices (either index keeps |r| and |d| within the
 * scalar code's bounds). Private to those two files: it defines functions.
 *
 * The includer defines: VD, VI (vectors of W doubles and W 64-bit integers), ATTR (the target
 * attribute), D_SET1, I_SET1, I_LANES (0 .. W-1), D_ADD, D_SUB, D_MUL, D_FMADD (a b + c),
 * D_FNMADD (-a b + c), D_FMSUB (a b - c), D_SQRT, D_XOR, I_ADD, I_SUB, I_AND, I_OR, I_XOR,
 * I_SRLI, I_SLLI, AS_I, AS_D (bit casts), GATHER (table, index), MUL64 (x c mod 2^64),
 * I_SELECT_GT (a > b ? t : f, lane by lane), D_SELECT_ODD (q odd ? t : f), LOAD_I, STORE_D,
 * D_ABS; for the encodings, W floats' bits as a vector of 32-bit integers, HI: TO_FLOAT_BITS
 * (doubles rounded to floats, as C's cast), H_SET1, H_ADD, H_SUB, H_SRLI, H_AND, H_OR, H_GT
 * (signed, a lane mask), H_BLEND (m ? t : f), H_FP16 (floats' bits to fp16's,
 * rounded to nearest even, in the low 16 bits), H_UNITS (floats' bits to the float rounded to
 * a whole number of 2^-9, as an integer: |f| < 2^-6 only), H_DIFFER (a bit mask of the lanes
 * where a and b differ), LOAD_H, H_STORE8, H_STORE16 and H_STORE32 (the lanes' low 8, 16 or
 * 32 bits); and SIMD_ROW, SIMD_BITS, SIMD_ENCODE and SIMD_CONVERT, the functions it defines.
 */
#ifndef TPB_RNG_SIMD_IMPL_H
#define TPB_RNG_SIMD_IMPL_H

ATTR static inline VI mix(VI x)
{
    x = I_ADD(x, I_SET1((long long)0x9e3779b97f4a7c15ULL));
    x = MUL64(I_XOR(x, I_SRLI(x, 30)), 0xbf58476d1ce4e5b9ULL);
    x = MUL64(I_XOR(x, I_SRLI(x, 27)), 0x94d049bb133111ebULL);
    return I_XOR(x, I_SRLI(x, 31));
}

/* Non-negative integers below 2^52 to doubles, exactly (the exponent of 2^52 laid over). */
ATTR static inline VD small_to_double(VI x)
{
    const VI magic = I_SET1(0x4330000000000000LL);
    return D_SUB(AS_D(I_OR(x, magic)), AS_D(magic));
}

/* Small signed integers (|x| < 2^51) to doubles. */
ATTR static inline VD signed_to_double(VI x)
{
    const VI magic = I_SET1(0x4338000000000000LL);
    return D_SUB(AS_D(I_ADD(x, magic)), AS_D(magic));
}

/* x rounded to the nearest integer (ties to even), 0 <= x < 2^51, as a double and as a 64-bit
 * index: adding 1.5 * 2^52 leaves the integer in the low bits of the sum. */
ATTR static inline VD round_index(VD x, VI *index)
{
    const VD magic = D_SET1(0x1.8p52);
    VD t = D_ADD(x, magic);
    *index = I_SUB(AS_I(t), AS_I(magic));
    return D_SUB(t, magic);
}

ATTR static inline VD poly_log(VD x, const double *log_c, const double *inv_c)
{
    VI bits = AS_I(x);
    VI mant = I_AND(bits, I_SET1(0x000fffffffffffffLL));
    VI half = I_SET1((1LL << 51) - 1); /* m >= 1.5: the exponent one up, m halved */
    VI e =
        I_ADD(I_SUB(I_SRLI(bits, 52), I_SET1(1023)), I_SELECT_GT(mant, half, I_SET1(1), I_SET1(0)));
    VI expo = I_SELECT_GT(mant, half, I_SET1(0x3feLL << 52), I_SET1(0x3ffLL << 52));
    VD m = AS_D(I_OR(mant, expo));
    VI i;
    VD id = round_index(D_MUL(m, D_SET1(256.0)), &i);
    VD c = D_MUL(id, D_SET1(0x1.0p-8));
    VD r = D_MUL(D_SUB(m, c), GATHER(inv_c, i));
    VD r2 = D_MUL(r, r);
    VD p01 = D_FMADD(r, D_SET1(1.0 / 3), D_SET1(-1.0 / 2));
    VD p23 = D_FMADD(r, D_SET1(1.0 / 5), D_SET1(-1.0 / 4));
    VD p = D_FMADD(r2, D_SET1(-1.0 / 6), p23);
    p = D_FMADD(r2, p, p01);
    p = D_FMADD(r2, p, r);
    VD base = D_FMADD(signed_to_double(e), D_SET1(0x1.62e42fefa39efp-1), GATHER(log_c, i));
    return D_ADD(base, p);
}

ATTR static inline VD poly_cos(VI b, const double *cos_k, const double *sin_k)
{
    VI q = I_SRLI(b, 51);
    VD f = D_MUL(small_to_double(I_AND(b, I_SET1((1LL << 51) - 1))), D_SET1(0x1.0p-51));
    VI k;
    VD kd = round_index(D_MUL(f, D_SET1(128.0)), &k);
    VD d = D_MUL(D_FNMADD(kd, D_SET1(1.0 / 128), f), D_SET1(0x1.921fb54442d18p+0));
    VD d2 = D_MUL(d, d);
    VD cd = D_FMADD(d2, D_FMADD(d2, D_SET1(1.0 / 24), D_SET1(-1.0 / 2)), D_SET1(1.0));
    VD sd = D_FMADD(D_MUL(d, d2), D_FMADD(d2, D_SET1(1.0 / 120), D_SET1(-1.0 / 6)), d);
    VD ck = GATHER(cos_k, k), sk = GATHER(sin_k, k);
    VD cosv = D_FMSUB(ck, cd, D_MUL(sk, sd));
    VD sinv = D_FMADD(sk, cd, D_MUL(ck, sd));
    /* q 0: cos, 1: -sin, 2: -cos, 3: sin */
    VD v = D_SELECT_ODD(q, sinv, cosv);
    VI neg = I_SLLI(I_AND(I_SRLI(I_ADD(q, I_SET1(1)), 1), I_SET1(1)), 63);
    return D_XOR(v, AS_D(neg));
}

/* sqrt(-2 log u1) cos(2 pi u2) of W elements from a + 1 and b. */
ATTR static inline VD normal(VI a1, VI b, const tpb_rng_tables_t *t)
{
    /* a + 1 <= 2^53: its two halves exactly, then their sum exactly */
    VD hi = small_to_double(I_SRLI(a1, 32));
    VD lo = small_to_double(I_AND(a1, I_SET1(0xffffffffLL)));
    VD u1 = D_MUL(D_FMADD(hi, D_SET1(0x1.0p32), lo), D_SET1(0x1.0p-53));
    VD lg = poly_log(u1, t->log_c, t->inv_c);
    VD s = D_SQRT(D_MUL(lg, D_SET1(-2.0)));
    return D_MUL(s, poly_cos(b, t->cos_k, t->sin_k));
}

/* The values of elements j .. j + W - 1 of a row (its part of the hash vrow, the seed vseed). */
ATTR static inline VD row_values(uint64_t j, VI vseed, VI vrow, const tpb_rng_tables_t *t)
{
    VI h = mix(I_XOR(vrow, I_SLLI(I_ADD(I_SET1((long long)j), I_LANES), 1)));
    h = mix(I_XOR(vseed, h));
    return normal(I_ADD(I_SRLI(h, 11), I_SET1(1)), I_SRLI(mix(h), 11), t);
}

ATTR long SIMD_ROW(double *v, long n, uint64_t seed, uint64_t row_part, uint64_t j0,
                   const tpb_rng_tables_t *t)
{
    const VI vseed = I_SET1((long long)seed), vrow = I_SET1((long long)row_part);
    long c = 0;
    for (; c + W <= n; c += W)
        STORE_D(v + c, row_values(j0 + (uint64_t)c, vseed, vrow, t));
    return c;
}

ATTR long SIMD_BITS(double *v, const uint64_t *a, const uint64_t *b, long n,
                    const tpb_rng_tables_t *t)
{
    long c = 0;
    for (; c + W <= n; c += W)
        STORE_D(v + c, normal(I_ADD(LOAD_I(a + c), I_SET1(1)), LOAD_I(b + c), t));
    return c;
}

/* bf16's bits of floats (f's bits as integers): round to nearest even at bit 16 (not NaN). */
ATTR static inline HI bf16_bits(HI f)
{
    HI odd = H_AND(H_SRLI(f, 16), H_SET1(1));
    return H_SRLI(H_ADD(f, H_ADD(H_SET1(0x7fff), odd)), 16);
}

/* e4m3's bits of floats (dtype.c's tpb_float_to_e4m3, not NaN): saturated at 448, subnormal
 * below 2^-6 in units of 2^-9, else the mantissa rounded to 3 bits, nearest even. */
ATTR static inline HI e4m3_bits(HI f)
{
    HI sign = H_AND(H_SRLI(f, 24), H_SET1(0x80)), au = H_AND(f, H_SET1(0x7fffffff));
    HI r = H_ADD(au, H_ADD(H_SET1(0x7ffff), H_AND(H_SRLI(au, 20), H_SET1(1))));
    HI v = H_SUB(H_SRLI(r, 20), H_SET1(120 << 3)); /* below 448: at most 0x7e, 448 itself */
    v = H_BLEND(H_GT(H_SET1(0x3c800000), au), H_UNITS(au), v);
    v = H_BLEND(H_GT(au, H_SET1(0x43dfffff)), H_SET1(0x7e), v);
    return H_OR(sign, v);
}

/* Floats' bits encoded as `kind` says (TPB_RNG_FUSED_*), in the lanes' low bits. */
ATTR static inline HI encode(HI f, int kind)
{
    switch (kind) {
    case TPB_RNG_FUSED_BF16: return bf16_bits(f);
    case TPB_RNG_FUSED_FP16: return H_FP16(f);
    case TPB_RNG_FUSED_FP8: return e4m3_bits(f);
    default: return f;
    }
}

/* The encodings x of W elements from dst + W c's bytes on. */
ATTR static inline void store(void *dst, long c, HI x, int kind)
{
    switch (kind) {
    case TPB_RNG_FUSED_BF16:
    case TPB_RNG_FUSED_FP16: H_STORE16((uint16_t *)dst + c, x); break;
    case TPB_RNG_FUSED_FP8: H_STORE8((uint8_t *)dst + c, x); break;
    default: H_STORE32((uint32_t *)dst + c, x);
    }
}

/* rng_fast.c's encoding from both ends of each element's interval, fused: elements (i, j0) ..
 * (i, j0 + n - 1), scaled, encoded as `kind` says into dst from the low end, differ[c] 1 where
 * the high end encodes otherwise (glibc's value to be drawn there). What rng_fast.c does
 * element by element: the same interval, the same conversions. Returns the elements done, a
 * multiple of W. */
ATTR long SIMD_ENCODE(void *dst, unsigned char *differ, long n, uint64_t seed, uint64_t row_part,
                      uint64_t j0, double scale, int kind, const tpb_rng_tables_t *t)
{
    const VI vseed = I_SET1((long long)seed), vrow = I_SET1((long long)row_part);
    const VD vscale = D_SET1(scale), rel = D_SET1(TPB_RNG_REL_BOUND);
    const VD abs_e = D_SET1(fabs(scale) * TPB_RNG_ABS_BOUND);
    long c = 0;
    for (; c + W <= n; c += W) {
        VD v = D_MUL(vscale, row_values(j0 + (uint64_t)c, vseed, vrow, t));
        VD e = D_ADD(D_MUL(D_ABS(v), rel), abs_e);
        HI lo = encode(TO_FLOAT_BITS(D_SUB(v, e)), kind);
        HI hi = encode(TO_FLOAT_BITS(D_ADD(v, e)), kind);
        store(dst, c, lo, kind);
        unsigned m = H_DIFFER(lo, hi);
        for (int l = 0; l < W; l++)
            differ[c + l] = (unsigned char)((m >> l) & 1);
    }
    return c;
}

/* The conversions alone, of floats' bits (not NaN) to `kind` (tests hold them to dtype.c's);
 * the elements done, a multiple of W. */
ATTR long SIMD_CONVERT(void *dst, const uint32_t *bits, long n, int kind)
{
    long c = 0;
    for (; c + W <= n; c += W)
        store(dst, c, encode(LOAD_H(bits + c), kind), kind);
    return c;
}

#endif /* TPB_RNG_SIMD_IMPL_H */
