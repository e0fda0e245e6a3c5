/*
 * dtype.h - element types of the layer: names, sizes, conversions between
 * double and the stored formats, and the --check tolerance of each.
 */
#ifndef TPB_DTYPE_H
#define TPB_DTYPE_H

#include <stddef.h>
#include <stdint.h>

#include "base/tpb_status.h"

/** The element types, one row each: X(ID, name, input bytes, output type, width multiple,
 *  --check tolerance). The enum and the registry (dtype.c) are made from these rows, so a
 *  new type is one row here plus a case in every switch over tpb_dtype_t (-Wswitch-enum
 *  names each, in every build). tf32: fp32 storage, tensor-float-32 math (CUDA); fp8: e4m3
 *  inputs, bf16 output (CUDA, Hopper and newer), GEMM widths in multiples of 16 (cuBLASLt);
 *  fp8's inputs are compared after quantisation. */
#define TPB_DTYPES(X)                                                                              \
    X(FP32, "fp32", 4, FP32, 1, 1e-4)                                                              \
    X(FP64, "fp64", 8, FP64, 1, 1e-10)                                                             \
    X(TF32, "tf32", 4, FP32, 1, 5e-3)                                                              \
    X(FP16, "fp16", 2, FP16, 1, 1e-2)                                                              \
    X(BF16, "bf16", 2, BF16, 1, 2e-2)                                                              \
    X(FP8, "fp8", 1, BF16, 16, 2e-2)

typedef enum {
#define TPB_DTYPE_ENUM_(id, name, in, out, align, tol) TPB_DTYPE_##id,
    TPB_DTYPES(TPB_DTYPE_ENUM_)
#undef TPB_DTYPE_ENUM_
} tpb_dtype_t;
/** How many element types there are (not a tpb_dtype_t: switches need no case for it). */
#define TPB_DTYPE_COUNT (0 TPB_DTYPES(TPB_DTYPE_ONE_))
#define TPB_DTYPE_ONE_(id, name, in, out, align, tol) +1

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
