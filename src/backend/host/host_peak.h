/*
 * host_peak.h - the theoretical peak of CPU cores for a dtype, from the
 * CPU's SIMD flags and clock, and whether OpenBLAS runs kernels below what
 * the CPU supports. Pure functions (the facts are read by host_backend.c).
 */
#ifndef TPB_HOST_PEAK_H
#define TPB_HOST_PEAK_H

#include <stddef.h>

#include "base/dtype.h"

/** What decides a core's floating-point peak. */
typedef struct {
    int avx512, avx2, fma, avx; /**< SIMD flags (1 if present) */
    double ghz;                 /**< clock; 0 if unknown */
    const char *ghz_from;       /**< "max" (cpufreq), "nominal", "measured"; NULL: unsaid */
} tpb_cpu_t;

/** The flags of a /proc/cpuinfo "flags" line into c (ghz untouched). */
void tpb_cpu_parse_flags(const char *flags, tpb_cpu_t *c);

/**
 * FLOP per cycle of one core for dt: SIMD lanes x 2 (FMA) x 2 units for
 * AVX-512 and AVX2+FMA (Intel server cores and Zen have two), add + multiply
 * ports for AVX and SSE. 0 for a dtype the host does not compute.
 */
int tpb_cpu_flop_per_cycle(const tpb_cpu_t *c, tpb_dtype_t dt);

/** cores x ghz x FLOP per cycle in GFLOP/s; basis says how ("2 cores x 2.30 GHz x 64").
 *  cores may be a fraction: the share of cores a rank uses when ranks share them. */
double tpb_cpu_peak_gflops(const tpb_cpu_t *c, double cores, tpb_dtype_t dt, char *basis,
                           size_t cap);

/** SIMD class of an OpenBLAS core name: 1 SSE, 2 AVX, 3 AVX2, 4 AVX-512; 0 unknown. */
int tpb_openblas_core_class(const char *core);

/**
 * If OpenBLAS's core is of a lower SIMD class than the CPU supports, a
 * one-line advice naming both and the variable to set; "" otherwise.
 */
void tpb_openblas_advice(const tpb_cpu_t *c, const char *core, char *out, size_t cap);

/** This process's BLAS GEMM rate in GFLOP/s: an n^3 GEMM of dt (fp32, fp64), the median of
 *  tries after a warm-up; -1 where it cannot be measured (no memory, another dtype). */
double tpb_host_gemm_gflops(tpb_dtype_t dt, int n, int tries);

#endif /* TPB_HOST_PEAK_H */
