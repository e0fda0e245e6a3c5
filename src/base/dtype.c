/* dtype.c - element type names, sizes and conversions. */
#include "base/dtype.h"

#include <math.h>
#include <string.h>

/* The registry: one entry per row of TPB_DTYPES, indexed by the enum. */
static const struct {
    const char *name;
    size_t in_size;
    tpb_dtype_t out;
    long align;
    double tolerance;
} dtypes[] = {
#define ROW_(id, nm, in, o, al, tol) [TPB_DTYPE_##id] = {nm, in, TPB_DTYPE_##o, al, tol},
    TPB_DTYPES(ROW_)
#undef ROW_
};
_Static_assert(sizeof dtypes / sizeof dtypes[0] == TPB_DTYPE_COUNT, "one entry per dtype");

static int known(tpb_dtype_t dt)
{
    return (unsigned)dt < TPB_DTYPE_COUNT;
}

const char *tpb_dtype_name(tpb_dtype_t dt)
{
    return known(dt) ? dtypes[dt].name : "?";
}

tpb_status_t tpb_dtype_parse(const char *s, tpb_dtype_t *dt)
{
    for (int i = 0; i < TPB_DTYPE_COUNT; i++) {
        if (strcmp(s, dtypes[i].name) == 0) {
            *dt = (tpb_dtype_t)i;
            return TPB_OK;
        }
    }
#define LIST_(id, nm, in, o, al, tol) ", " nm
    /* ", fp32, fp64, ...": the list without its first separator */
    return tpb_err_set(TPB_ERR_INVALID, "--dtype '%s': expected one of %s", s,
                       &TPB_DTYPES(LIST_)[2]);
#undef LIST_
}

size_t tpb_dtype_in_size(tpb_dtype_t dt)
{
    return known(dt) ? dtypes[dt].in_size : 4;
}

tpb_dtype_t tpb_dtype_out(tpb_dtype_t dt)
{
    return known(dt) ? dtypes[dt].out : dt;
}

size_t tpb_dtype_out_size(tpb_dtype_t dt)
{
    return tpb_dtype_in_size(tpb_dtype_out(dt));
}

long tpb_dtype_align(tpb_dtype_t dt)
{
    return known(dt) ? dtypes[dt].align : 1;
}

double tpb_dtype_tolerance(tpb_dtype_t dt)
{
    return known(dt) ? dtypes[dt].tolerance : 1e-4;
}

static uint32_t float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof(u));
    return u;
}

static float bits_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof(f));
    return f;
}

uint16_t tpb_float_to_bf16(float f)
{
    uint32_t u = float_bits(f);
    if (isnan(f))
        return (uint16_t)((u >> 16) | 0x40);
    u += 0x7fff + ((u >> 16) & 1);
    return (uint16_t)(u >> 16);
}

float tpb_bf16_to_float(uint16_t b)
{
    return bits_float((uint32_t)b << 16);
}

uint16_t tpb_float_to_half(float f)
{
    uint32_t u = float_bits(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
    float a = fabsf(f);
    if (isnan(f))
        return sign | 0x7e00;
    if (a >= 65520.0f)
        return sign | 0x7c00;
    if (a < 6.103515625e-05f) /* subnormal: units of 2^-24 */
        return sign | (uint16_t)lrintf(a * 16777216.0f);
    uint32_t au = float_bits(a);
    au += 0xfff + ((au >> 13) & 1); /* round mantissa to 10 bits, nearest even */
    return sign | (uint16_t)((au >> 13) - ((127 - 15) << 10));
}

float tpb_half_to_float(uint16_t h)
{
    float sign = (h & 0x8000) ? -1.0f : 1.0f;
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    if (e == 0)
        return sign * ldexpf((float)m, -24);
    if (e == 31)
        return m ? NAN : sign * INFINITY;
    return sign * ldexpf((float)(m | 0x400), e - 25);
}

/* On the float's bits (no frexpf or lrintf: the draw encodes each element twice); the same
 * bytes as the frexpf form on all 2^32 floats (tests/test_dtype.c keeps that form). */
uint8_t tpb_float_to_e4m3(float f)
{
    uint32_t u = float_bits(f), au = u & 0x7fffffffu;
    uint8_t sign = (uint8_t)((u >> 24) & 0x80);
    if (au > 0x7f800000u) /* NaN */
        return 0x7f;
    if (au >= 0x43e00000u) /* >= 448: saturate to the largest finite value */
        return sign | 0x7e;
    if (au < 0x3c800000u) { /* < 2^-6, subnormal: units of 2^-9, nearest even */
        float units = (bits_float(au) * 512.0f + 0x1.0p23f) - 0x1.0p23f;
        return sign | (uint8_t)units;
    }
    au += 0x7ffffu + ((au >> 20) & 1u);    /* the mantissa to 3 bits, nearest even */
    uint32_t v = (au >> 20) - (120u << 3); /* float's exponent bias 127, e4m3's 7 */
    return sign | (uint8_t)(v > 0x7e ? 0x7e : v);
}

float tpb_e4m3_to_float(uint8_t v)
{
    float sign = (v & 0x80) ? -1.0f : 1.0f;
    int e = (v >> 3) & 0xf, m = v & 7;
    if (e == 15 && m == 7)
        return NAN;
    if (e == 0)
        return sign * ldexpf((float)m, -9);
    return sign * ldexpf((float)(m | 8), e - 10);
}

/* One loop per dtype (not a switch per element): the draw encodes every element twice. */
void tpb_dtype_encode(tpb_dtype_t dt, const double *src, void *dst, size_t n)
{
    switch (dt) {
    case TPB_DTYPE_FP64: memcpy(dst, src, n * sizeof(double)); break;
    case TPB_DTYPE_FP16:
        for (size_t i = 0; i < n; i++)
            ((uint16_t *)dst)[i] = tpb_float_to_half((float)src[i]);
        break;
    case TPB_DTYPE_BF16:
        for (size_t i = 0; i < n; i++)
            ((uint16_t *)dst)[i] = tpb_float_to_bf16((float)src[i]);
        break;
    case TPB_DTYPE_FP8:
        for (size_t i = 0; i < n; i++)
            ((uint8_t *)dst)[i] = tpb_float_to_e4m3((float)src[i]);
        break;
    case TPB_DTYPE_FP32:
    case TPB_DTYPE_TF32:
        for (size_t i = 0; i < n; i++)
            ((float *)dst)[i] = (float)src[i];
        break;
    }
}

void tpb_dtype_decode(tpb_dtype_t dt, const void *src, double *dst, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        switch (dt) {
        case TPB_DTYPE_FP64: dst[i] = ((const double *)src)[i]; break;
        case TPB_DTYPE_FP16: dst[i] = tpb_half_to_float(((const uint16_t *)src)[i]); break;
        case TPB_DTYPE_BF16: dst[i] = tpb_bf16_to_float(((const uint16_t *)src)[i]); break;
        case TPB_DTYPE_FP8: dst[i] = tpb_e4m3_to_float(((const uint8_t *)src)[i]); break;
        case TPB_DTYPE_FP32:
        case TPB_DTYPE_TF32: dst[i] = ((const float *)src)[i]; break;
        }
    }
}
