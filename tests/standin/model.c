/*
 * model.c - the stand-in's pure parts: the device time model and the number formats a GPU
 * computes in, written from their definitions (IEEE 754 binary16; bfloat16 as the upper half
 * of binary32; the OCP 8-bit floating point specification for e4m3 and e5m2; TF32 as
 * binary32 with 10 mantissa bits). Independent of tpbal's own dtype code on purpose: a
 * mistake in one is caught by the other through --check.
 */
#include <math.h>
#include <pthread.h>
#include <string.h>

#include "standin.h"

double tpbsi_gemm_us(double flops, double gflops, double speed)
{
    if (!(gflops > 0.0) || !(speed > 0.0))
        return 0.0;
    return flops / (gflops * speed * 1e3);
}

double tpbsi_bus_bytes(tpbsi_coll_t kind, double bytes, int nranks)
{
    double n = nranks > 0 ? nranks : 1;
    switch (kind) {
    case TPBSI_ALLREDUCE: return bytes * 2.0 * (n - 1.0) / n;
    case TPBSI_ALLGATHER:
    case TPBSI_REDUCESCATTER: return bytes * (n - 1.0) / n;
    case TPBSI_BROADCAST: return nranks > 1 ? bytes : 0.0;
    }
    return bytes;
}

double tpbsi_coll_us(double bus_bytes, double alpha_us, double gbs)
{
    return alpha_us + (gbs > 0.0 ? bus_bytes / (gbs * 1e3) : 0.0);
}

unsigned tpbsi_sm_split(unsigned total, unsigned want, unsigned min, unsigned align)
{
    if (align < 1)
        align = 1;
    unsigned n = (want + align - 1) / align * align;
    if (n < min)
        n = (min + align - 1) / align * align;
    if (n > total)
        n = total / align * align;
    return n;
}

static uint32_t bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof(u));
    return u;
}

static float float_of(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof(f));
    return f;
}

static float half_of(uint16_t h)
{
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    float v;
    if (e == 0)
        v = ldexpf((float)m, -24);
    else if (e == 31)
        v = m ? NAN : INFINITY;
    else
        v = ldexpf((float)(1024 + m), e - 25);
    return (h & 0x8000) ? -v : v;
}

uint16_t tpbsi_float_to_half(float f)
{
    uint32_t x = bits_of(f), ax = x & 0x7fffffffu;
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    if (ax > 0x7f800000u)
        return sign | 0x7e00u; /* NaN */
    if (ax >= 0x477ff000u)     /* 65520 and above round to infinity */
        return sign | 0x7c00u;
    if (ax < 0x38800000u) /* below 2^-14: a subnormal half, steps of 2^-24 */
        return sign | (uint16_t)rintf(fabsf(f) * 16777216.0f);
    uint32_t h = ((((ax >> 23) - 127u + 15u) << 10) | ((ax & 0x7fffffu) >> 13));
    uint32_t rest = ax & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
        h++; /* to nearest, ties to even; a carry moves into the exponent */
    return sign | (uint16_t)h;
}

float tpbsi_bf16_to_float(uint16_t h)
{
    return float_of((uint32_t)h << 16);
}

uint16_t tpbsi_float_to_bf16(float f)
{
    uint32_t u = bits_of(f);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((u >> 16) | 0x40u); /* a quiet NaN */
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

static float e4m3_of(uint8_t v)
{
    int e = (v >> 3) & 15, m = v & 7;
    if (e == 15 && m == 7)
        return NAN; /* e4m3 has no infinities: S.1111.111 is its only NaN */
    float r = e ? ldexpf(1.0f + (float)m / 8.0f, e - 7) : ldexpf((float)m / 8.0f, -6);
    return (v & 0x80) ? -r : r;
}

uint8_t tpbsi_float_to_e4m3(float f)
{
    uint8_t sign = (bits_of(f) >> 24) & 0x80;
    if (isnan(f))
        return 0x7f;
    float a = fabsf(f);
    if (a >= 464.0f) /* past the midpoint of 448 and the next step: saturated (satfinite) */
        return sign | 0x7e;
    int e;
    (void)frexpf(a, &e);
    e -= 1; /* a = 1.x * 2^e */
    if (a == 0.0f || e < -6) {
        int m = (int)rintf(a * 512.0f); /* subnormal steps of 2^-9; 8 is the smallest normal */
        return sign | (uint8_t)m;
    }
    int m = (int)rintf((ldexpf(a, -e) - 1.0f) * 8.0f);
    if (m == 8) {
        m = 0;
        e++;
    }
    if (e > 8 || (e == 8 && m == 7))
        return sign | 0x7e;
    return sign | (uint8_t)(((e + 7) << 3) | m);
}

/* Decoding tables, made once from the definitions above (a GEMM decodes every input). */
static float half_table[65536], e4m3_table[256];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static void make_tables(void)
{
    for (unsigned i = 0; i < 65536; i++)
        half_table[i] = half_of((uint16_t)i);
    for (unsigned i = 0; i < 256; i++)
        e4m3_table[i] = e4m3_of((uint8_t)i);
}

float tpbsi_half_to_float(uint16_t h)
{
    pthread_once(&tables_once, make_tables);
    return half_table[h];
}

float tpbsi_e4m3_to_float(uint8_t v)
{
    pthread_once(&tables_once, make_tables);
    return e4m3_table[v];
}

float tpbsi_e5m2_to_float(uint8_t v)
{
    return tpbsi_half_to_float((uint16_t)(v << 8)); /* e5m2 is binary16's upper byte */
}

uint8_t tpbsi_float_to_e5m2(float f)
{
    uint16_t h = tpbsi_float_to_half(f);
    if ((h & 0x7c00u) == 0x7c00u)
        return (uint8_t)((h >> 8) | ((h & 0x3ffu) ? 0x02 : 0)); /* infinity, or a NaN */
    uint16_t r = h + 0x7fu + ((h >> 8) & 1u);
    return (uint8_t)(r >> 8);
}

float tpbsi_round_tf32(float f)
{
    uint32_t u = bits_of(f);
    if ((u & 0x7f800000u) == 0x7f800000u)
        return f;
    u += 0xfffu + ((u >> 13) & 1u);
    return float_of(u & ~0x1fffu);
}
