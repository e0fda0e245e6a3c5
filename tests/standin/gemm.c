/*
 * gemm.c - what cublasLtMatmul computes, on the host: D = alpha * scaleA * scaleB *
 * op(A) op(B) + beta * C with column-major operands (cuBLASLt's "cublasLtMatmul()"), the
 * inputs decoded from their storage types, products accumulated in fp32 (fp64 for
 * CUBLAS_COMPUTE_64F) by the BLAS, TF32 compute rounding the inputs to 10 mantissa bits,
 * and the result rounded to D's type.
 */
#include <cblas.h>
#include <stdlib.h>
#include <string.h>

#include "lt.h"

static double load(cudaDataType_t t, const void *p, size_t i)
{
    switch (t) {
    case CUDA_R_64F: return ((const double *)p)[i];
    case CUDA_R_32F: return ((const float *)p)[i];
    case CUDA_R_16F: return tpbsi_half_to_float(((const uint16_t *)p)[i]);
    case CUDA_R_16BF: return tpbsi_bf16_to_float(((const uint16_t *)p)[i]);
    case CUDA_R_8F_E4M3: return tpbsi_e4m3_to_float(((const uint8_t *)p)[i]);
    case CUDA_R_8F_E5M2: return tpbsi_e5m2_to_float(((const uint8_t *)p)[i]);
    default: return 0.0;
    }
}

static void store(cudaDataType_t t, void *p, size_t i, double v)
{
    switch (t) {
    case CUDA_R_64F: ((double *)p)[i] = v; break;
    case CUDA_R_32F: ((float *)p)[i] = (float)v; break;
    case CUDA_R_16F: ((uint16_t *)p)[i] = tpbsi_float_to_half((float)v); break;
    case CUDA_R_16BF: ((uint16_t *)p)[i] = tpbsi_float_to_bf16((float)v); break;
    case CUDA_R_8F_E4M3: ((uint8_t *)p)[i] = tpbsi_float_to_e4m3((float)v); break;
    case CUDA_R_8F_E5M2: ((uint8_t *)p)[i] = tpbsi_float_to_e5m2((float)v); break;
    default: break;
    }
}

/* Column j of m decoded into out[rows] (one switch a column, tight loops). */
static void column(const tpbsi_mat_t *m, long j, float *out)
{
    size_t at = (size_t)j * (size_t)m->ld;
    long n = m->rows;
    switch (m->type) {
    case CUDA_R_32F: memcpy(out, (const float *)m->p + at, (size_t)n * sizeof(float)); break;
    case CUDA_R_16BF:
        for (long i = 0; i < n; i++)
            out[i] = tpbsi_bf16_to_float(((const uint16_t *)m->p)[at + (size_t)i]);
        break;
    default:
        for (long i = 0; i < n; i++)
            out[i] = (float)load(m->type, m->p, at + (size_t)i);
        break;
    }
}

/* The matrix as a dense column-major array (leading dimension rows) of doubles or floats. */
static void *dense(const tpbsi_mat_t *m, int f64, int tf32)
{
    size_t n = (size_t)m->rows * (size_t)m->cols;
    void *out = malloc((n ? n : 1) * (f64 ? sizeof(double) : sizeof(float)));
    if (!out)
        return NULL;
    for (long j = 0; j < m->cols; j++) {
        size_t at = (size_t)j * (size_t)m->rows;
        if (f64) {
            for (long i = 0; i < m->rows; i++)
                ((double *)out)[at + (size_t)i] =
                    load(m->type, m->p, (size_t)i + (size_t)j * (size_t)m->ld);
            continue;
        }
        float *col = (float *)out + at;
        column(m, j, col);
        for (long i = 0; tf32 && i < m->rows; i++)
            col[i] = tpbsi_round_tf32(col[i]);
    }
    return out;
}

int tpbsi_gemm_compute(const tpbsi_gemm_args_t *g)
{
    int f64 = g->compute == CUBLAS_COMPUTE_64F;
    int tf32 = g->compute == CUBLAS_COMPUTE_32F_FAST_TF32;
    void *a = dense(&g->a, f64, tf32), *b = dense(&g->b, f64, tf32);
    /* C is read only when beta is not 0 (it may be anything then) */
    void *c = g->beta != 0.0
                  ? dense(&g->c, f64, 0)
                  : calloc((size_t)g->m * (size_t)g->n + 1, f64 ? sizeof(double) : sizeof(float));
    int rc = -1;
    if (a && b && c) {
        enum CBLAS_TRANSPOSE ta = g->transa == CUBLAS_OP_N ? CblasNoTrans : CblasTrans;
        enum CBLAS_TRANSPOSE tb = g->transb == CUBLAS_OP_N ? CblasNoTrans : CblasTrans;
        double alpha = g->alpha * g->scale_a * g->scale_b;
        if (f64)
            cblas_dgemm(CblasColMajor, ta, tb, (int)g->m, (int)g->n, (int)g->k, alpha, a,
                        (int)(g->a.rows ? g->a.rows : 1), b, (int)(g->b.rows ? g->b.rows : 1),
                        g->beta, c, (int)(g->m ? g->m : 1));
        else
            cblas_sgemm(CblasColMajor, ta, tb, (int)g->m, (int)g->n, (int)g->k, (float)alpha, a,
                        (int)(g->a.rows ? g->a.rows : 1), b, (int)(g->b.rows ? g->b.rows : 1),
                        (float)g->beta, c, (int)(g->m ? g->m : 1));
        for (long j = 0; j < g->n; j++) {
            for (long i = 0; i < g->m; i++) {
                size_t at = (size_t)i + (size_t)j * (size_t)g->m;
                double v = f64 ? ((double *)c)[at] : ((float *)c)[at];
                store(g->d.type, g->d.p, (size_t)i + (size_t)j * (size_t)g->d.ld, v * g->scale_d);
            }
        }
        rc = 0;
    }
    free(a);
    free(b);
    free(c);
    return rc;
}
