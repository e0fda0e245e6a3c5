/* dtype.c - element type names, sizes and conversions. */
#include "base/dtype.h"

#include <math.h>
#include <string.h>

static const char *const dtype_names[TPB_DTYPE_COUNT] = {"fp32", "fp64", "tf32",
                                                         "fp16", "bf16", "fp8"};

const char *tpb_dtype_name(tpb_dtype_t dt)
{
    return dt < TPB_DTYPE_COUNT ? dtype_names[dt] : "?";
}

tpb_status_t tpb_dtype_parse(const char *s, tpb_dtype_t *dt)
{
    for (int i = 0; i < TPB_DTYPE_COUNT; i++) {
        if (strcmp(s, dtype_names[i]) == 0) {
            *dt = (tpb_dtype_t)i;
            return TPB_OK;
        }
    }
    return tpb_err_set(TPB_ERR_INVALID,
                       "--dtype '%s': expected one of fp32, fp64, tf32, fp16, bf16, fp8", s);
}

size_t tpb_dtype_in_size(tpb_dtype_t dt)
{
    switch (dt) {
    case TPB_DTYPE_FP64: return 8;
    case TPB_DTYPE_FP16:
    case TPB_DTYPE_BF16: return 2;
    case TPB_DTYPE_FP8: return 1;
    default: return 4;
    }
}

tpb_dtype_t tpb_dtype_out(tpb_dtype_t dt)
{
    switch (dt) {
    case TPB_DTYPE_FP8: return TPB_DTYPE_BF16;
    case TPB_DTYPE_TF32: return TPB_DTYPE_FP32;
    default: return dt;
    }
}

size_t tpb_dtype_out_size(tpb_dtype_t dt)
{
    return tpb_dtype_in_size(tpb_dtype_out(dt));
}

long tpb_dtype_align(tpb_dtype_t dt)
{
    return dt == TPB_DTYPE_FP8 ? 16 : 1;
}

double tpb_dtype_tolerance(tpb_dtype_t dt)
{
    switch (dt) {
    case TPB_DTYPE_FP64: return 1e-10;
    case TPB_DTYPE_FP32: return 1e-4;
    case TPB_DTYPE_TF32: return 5e-3;
    case TPB_DTYPE_FP16: return 1e-2;
    case TPB_DTYPE_BF16: return 2e-2;
    case TPB_DTYPE_FP8: return 2e-2; /* inputs are compared after quantisation */
    default: return 1e-4;
    }
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

uint8_t tpb_float_to_e4m3(float f)
{
    uint8_t sign = signbit(f) ? 0x80 : 0;
    float a = fabsf(f);
    if (isnan(f))
        return 0x7f;
    if (a >= 448.0f)
        return sign | 0x7e; /* saturate to the largest finite value */
    if (a < 0.015625f)      /* subnormal: units of 2^-9 */
        return sign | (uint8_t)lrintf(a * 512.0f);
    int e;
    float m = frexpf(a, &e);    /* a = m * 2^e, m in [0.5, 1) */
    long q = lrintf(m * 16.0f); /* 1.xxx with 3 mantissa bits, nearest even */
    if (q == 16) {
        q = 8;
        e++;
    }
    int be = e - 1 + 7;
    if (be > 15 || (be == 15 && q - 8 > 6))
        return sign | 0x7e;
    return sign | (uint8_t)(be << 3) | (uint8_t)(q - 8);
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

void tpb_dtype_encode(tpb_dtype_t dt, const double *src, void *dst, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        switch (dt) {
        case TPB_DTYPE_FP64: ((double *)dst)[i] = src[i]; break;
        case TPB_DTYPE_FP16: ((uint16_t *)dst)[i] = tpb_float_to_half((float)src[i]); break;
        case TPB_DTYPE_BF16: ((uint16_t *)dst)[i] = tpb_float_to_bf16((float)src[i]); break;
        case TPB_DTYPE_FP8: ((uint8_t *)dst)[i] = tpb_float_to_e4m3((float)src[i]); break;
        default: ((float *)dst)[i] = (float)src[i]; break;
        }
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
        default: dst[i] = ((const float *)src)[i]; break;
        }
    }
}
