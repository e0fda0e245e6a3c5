/*
 * dtype.h - element types of the layer: names, sizes, conversions between
 * double and the stored formats, and the --check tolerance of each.
 */
#ifndef TPB_DTYPE_H
#define TPB_DTYPE_H

#include <stddef.h>
#include <stdint.h>

#include "base/tpb_status.h"

typedef enum {
    TPB_DTYPE_FP32 = 0,
    TPB_DTYPE_FP64,
    TPB_DTYPE_TF32, /**< fp32 storage, tensor-float-32 math (CUDA) */
    TPB_DTYPE_FP16,
    TPB_DTYPE_BF16,
    TPB_DTYPE_FP8, /**< e4m3 inputs, bf16 output (CUDA, Hopper and newer) */
    TPB_DTYPE_COUNT
} tpb_dtype_t;

/** Name as used on the command line and in results ("fp32", ...). */
const char *tpb_dtype_name(tpb_dtype_t dt);

/** Parse a dtype name; TPB_ERR_INVALID with a message listing the names otherwise. */
tpb_status_t tpb_dtype_parse(const char *s, tpb_dtype_t *dt);

/** Bytes of one input element (X, W). */
size_t tpb_dtype_in_size(tpb_dtype_t dt);

/** Output (Y, and the collective's) element type: fp8 -> bf16, tf32 -> fp32, else itself. */
tpb_dtype_t tpb_dtype_out(tpb_dtype_t dt);

/** Bytes of one output element. */
size_t tpb_dtype_out_size(tpb_dtype_t dt);

/** The multiple a GEMM width of dt must be (a shard along N or K): 16 for fp8, whose
 *  GEMMs need widths in multiples of 16 (cuBLASLt), else 1. */
long tpb_dtype_align(tpb_dtype_t dt);

/** Maximum relative error (max |y - ref| / max |ref|) accepted by --check. */
double tpb_dtype_tolerance(tpb_dtype_t dt);

/** Convert n doubles to the storage format of dt (as its input type). */
void tpb_dtype_encode(tpb_dtype_t dt, const double *src, void *dst, size_t n);

/** Convert n stored elements of dt (tf32 as fp32) back to double. */
void tpb_dtype_decode(tpb_dtype_t dt, const void *src, double *dst, size_t n);

/** Round-to-nearest-even conversions of one value (exposed for the tests). */
uint16_t tpb_float_to_half(float f);
float tpb_half_to_float(uint16_t h);
uint16_t tpb_float_to_bf16(float f);
float tpb_bf16_to_float(uint16_t b);
uint8_t tpb_float_to_e4m3(float f);
float tpb_e4m3_to_float(uint8_t v);

#endif /* TPB_DTYPE_H */
