/* gpu_plan.c - the key of a GEMM plan (no device calls). */
#include "backend/gpu/gpu_plan.h"

#include <string.h>

/* The largest power of two (up to 256) dividing a pointer: the library's alignment of it. */
static int alignment(const void *ptr)
{
    uintptr_t v = (uintptr_t)ptr;
    int a = 1;
    while (a < 256 && v % (uintptr_t)(2 * a) == 0)
        a *= 2;
    return a;
}

tpb_gpu_plan_key_t tpb_gpu_plan_key(const tpb_gemm_t *g, int sm_target)
{
    tpb_gpu_plan_key_t k = {
        g->m,     g->n,
        g->k,     g->lda,
        g->ldb,   g->ldc,
        g->dtype, {alignment(g->b), alignment(g->a), alignment(g->c), alignment(g->c)},
        sm_target};
    return k;
}

int tpb_gpu_plan_key_equal(const tpb_gpu_plan_key_t *a, const tpb_gpu_plan_key_t *b)
{
    return a->m == b->m && a->n == b->n && a->k == b->k && a->lda == b->lda && a->ldb == b->ldb &&
           a->ldc == b->ldc && a->dtype == b->dtype && a->sm_target == b->sm_target &&
           memcmp(a->align, b->align, sizeof(a->align)) == 0;
}

uint64_t tpb_gpu_plan_hash(const tpb_gpu_plan_key_t *k)
{
    const long v[] = {k->m,     k->n,        k->k,        k->lda,      k->ldb,      k->ldc,
                      k->dtype, k->align[0], k->align[1], k->align[2], k->align[3], k->sm_target};
    uint64_t h = 1469598103934665603ull; /* FNV-1a over the fields, then a final mix */
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
        h = (h ^ (uint64_t)v[i]) * 1099511628211ull;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    return h ^ (h >> 33);
}
