/* host_rate.c - a rank's BLAS GEMM rate, measured (host_peak.h). */
#include <cblas.h>
#include <stdlib.h>

#include "backend/host/host_peak.h"
#include "base/clock.h"
#include "base/stats.h"

double tpb_host_gemm_gflops(tpb_dtype_t dt, int n, int tries)
{
    int fp64 = dt == TPB_DTYPE_FP64;
    size_t es = fp64 ? sizeof(double) : sizeof(float), nn = (size_t)n * (size_t)n;
    char *a = calloc(3 * nn, es);
    if (!a || (dt != TPB_DTYPE_FP32 && !fp64)) {
        free(a);
        return -1.0;
    }
    for (size_t i = 0; i < 2 * nn; i++) /* small values, no denormals */
        if (fp64)
            ((double *)a)[i] = 1.0 / (1.0 + (double)(i % 13));
        else
            ((float *)a)[i] = 1.0f / (1.0f + (float)(i % 13));
    double g[tries > 0 ? tries : 1];
    int k = 0;
    for (int t = 0; t <= tries; t++) { /* the first a warm-up */
        double t0 = tpb_clock_now_us(NULL);
        if (fp64)
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, (double *)a, n,
                        (double *)a + nn, n, 0.0, (double *)a + 2 * nn, n);
        else
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, (float *)a, n,
                        (float *)a + nn, n, 0.0f, (float *)a + 2 * nn, n);
        double us = tpb_clock_now_us(NULL) - t0;
        if (t > 0 && us > 0.0)
            g[k++] = 2.0 * n * (double)n * n / (us * 1e3);
    }
    free(a);
    return k ? tpb_stats_median(g, (size_t)k) : -1.0; /* the run reports medians too */
}
