/*
 * gpu_plans.c - the GEMM plan cache of a GPU backend: the vendor's plans, opaque
 * here, in one array, found through an open-addressing index on their keys' hash
 * kept at most half full. No device calls: always built and unit-tested.
 */
#include <stdlib.h>
#include <string.h>

#include "backend/gpu/gpu.h"

void tpb_gpu_plans_init(tpb_gpu_plans_t *p, size_t size)
{
    memset(p, 0, sizeof(*p));
    p->size = size;
}

/* The index slot of key: the one holding its plan, or the empty one where it would go. */
static size_t index_slot(const tpb_gpu_plans_t *p, const tpb_gpu_plan_key_t *key)
{
    size_t i = (size_t)tpb_gpu_plan_hash(key) & (p->nindex - 1);
    while (p->index[i] >= 0 && !tpb_gpu_plan_key_equal(&p->keys[p->index[i]], key))
        i = (i + 1) & (p->nindex - 1);
    return i;
}

void *tpb_gpu_plans_find(const tpb_gpu_plans_t *p, const tpb_gpu_plan_key_t *key)
{
    if (!p->nindex)
        return NULL;
    int at = p->index[index_slot(p, key)];
    return at >= 0 ? p->plans + (size_t)at * p->size : NULL;
}

/* The arrays of plans and keys for cap of each. */
static tpb_status_t grow(tpb_gpu_plans_t *p, size_t cap)
{
    unsigned char *plans = realloc(p->plans, cap * p->size);
    if (plans)
        p->plans = plans;
    tpb_gpu_plan_key_t *keys = plans ? realloc(p->keys, cap * sizeof(*keys)) : NULL;
    if (!keys)
        return tpb_err_set(TPB_ERR_NOMEM, "gpu backend: no memory for %zu GEMM plans", cap);
    p->keys = keys;
    p->cap = cap;
    return TPB_OK;
}

tpb_status_t tpb_gpu_plans_reserve(tpb_gpu_plans_t *p, void **slot)
{
    if (p->n == p->cap)
        TPB_CHECK_RET(grow(p, p->cap ? 2 * p->cap : 64));
    if (2 * (p->n + 1) > p->nindex) {
        size_t n = p->nindex ? 2 * p->nindex : 128;
        int *idx = malloc(n * sizeof(int));
        if (!idx)
            return tpb_err_set(TPB_ERR_NOMEM, "gpu backend: no memory for the GEMM plan index");
        for (size_t i = 0; i < n; i++)
            idx[i] = -1;
        free(p->index);
        p->index = idx;
        p->nindex = n;
        for (size_t i = 0; i < p->n; i++)
            p->index[index_slot(p, &p->keys[i])] = (int)i;
    }
    *slot = p->plans + p->n * p->size;
    memset(*slot, 0, p->size);
    return TPB_OK;
}

void tpb_gpu_plans_add(tpb_gpu_plans_t *p, const tpb_gpu_plan_key_t *key)
{
    p->keys[p->n] = *key;
    p->index[index_slot(p, key)] = (int)p->n++;
}

void tpb_gpu_plans_free(tpb_gpu_plans_t *p, void (*destroy)(void *plan))
{
    for (size_t i = 0; destroy && i < p->n; i++)
        destroy(p->plans + i * p->size);
    free(p->plans);
    free(p->keys);
    free(p->index);
    tpb_gpu_plans_init(p, p->size);
}
