/*
 * driver.c - the driver entry points tpbal reaches through cudaGetDriverEntryPoint[ByVersion]
 * (CUDA Runtime API, "Driver Entry Point Access"): each symbol is found only when asked at or
 * above the version that introduced it (cudaTypedefs.h's PFN_..._vNNNNN); green contexts
 * (CUDA Driver API, "Green Contexts": an SM resource split into a partition, a descriptor,
 * a green context, its non-blocking streams) and cuStreamWaitValue32 ("Stream Memory
 * Operations") can be switched off to stand for a driver without them.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "rt.h"

#define DESC_MAGIC 0x44455343u
#define MIN_SMS 8   /* compute capability 9.0: a partition of at least 8 SMs, */
#define ALIGN_SMS 8 /* in multiples of 8 (cuDevSmResourceSplitByCount, CUDA 12.4) */

typedef struct desc {
    unsigned magic;
    unsigned sms;
    struct desc *next; /* kept: the driver owns descriptors */
} desc_t;

static desc_t *descs;

static CUresult device_get(CUdevice *device, int ordinal)
{
    if (!device || ordinal < 0 || ordinal >= tpbsi_visible_count())
        return CUDA_ERROR_INVALID_DEVICE;
    *device = ordinal;
    return CUDA_SUCCESS;
}

static CUresult get_dev_resource(CUdevice dev, CUdevResource *res, CUdevResourceType type)
{
    if (!res || type != CU_DEV_RESOURCE_TYPE_SM)
        return CUDA_ERROR_INVALID_VALUE;
    if (dev < 0 || dev >= tpbsi_visible_count())
        return CUDA_ERROR_INVALID_DEVICE;
    memset(res, 0, sizeof(*res));
    res->type = CU_DEV_RESOURCE_TYPE_SM;
    res->sm.smCount = TPBSI_SMS;
    res->sm.minSmPartitionSize = MIN_SMS;
    res->sm.smCoscheduledAlignment = ALIGN_SMS;
    return CUDA_SUCCESS;
}

static CUresult split_by_count(CUdevResource *result, unsigned *nb, const CUdevResource *input,
                               CUdevResource *remaining, unsigned flags, unsigned min_count)
{
    if (!nb || !input || input->type != CU_DEV_RESOURCE_TYPE_SM || min_count > input->sm.smCount)
        return CUDA_ERROR_INVALID_VALUE;
    unsigned part = tpbsi_sm_split(input->sm.smCount, min_count, MIN_SMS, ALIGN_SMS);
    unsigned fit = part ? input->sm.smCount / part : 0;
    if (!result) { /* a simulated split: how many groups it would make */
        *nb = fit;
        return CUDA_SUCCESS;
    }
    unsigned made = *nb < fit ? *nb : fit;
    for (unsigned i = 0; i < made; i++) {
        result[i] = *input;
        result[i].sm.smCount = part;
    }
    if (remaining) {
        *remaining = *input;
        remaining->sm.smCount = input->sm.smCount - made * part;
    }
    *nb = made;
    return made ? CUDA_SUCCESS : CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION;
}

static CUresult generate_desc(CUdevResourceDesc *out, CUdevResource *res, unsigned n)
{
    if (!out || !res || n < 1)
        return CUDA_ERROR_INVALID_VALUE;
    desc_t *d = calloc(1, sizeof(*d));
    if (!d)
        return CUDA_ERROR_OUT_OF_MEMORY;
    d->magic = DESC_MAGIC;
    for (unsigned i = 0; i < n; i++)
        d->sms += res[i].sm.smCount;
    d->next = descs;
    descs = d;
    *out = (CUdevResourceDesc)d;
    return CUDA_SUCCESS;
}

static CUresult green_create(CUgreenCtx *out, CUdevResourceDesc desc, CUdevice dev, unsigned flags)
{
    desc_t *d = (desc_t *)desc;
    if (!out || !d || d->magic != DESC_MAGIC || !(flags & CU_GREEN_CTX_DEFAULT_STREAM))
        return CUDA_ERROR_INVALID_VALUE; /* the flag is required */
    if (dev < 0 || dev >= tpbsi_visible_count())
        return CUDA_ERROR_INVALID_DEVICE;
    tpbsi_ctx_t *p, *g;
    if (tpbsi_ctx_primary(dev, &p) != cudaSuccess)
        return CUDA_ERROR_INVALID_DEVICE;
    if (!(g = calloc(1, sizeof(*g))))
        return CUDA_ERROR_OUT_OF_MEMORY;
    *g = *p;
    g->green = 1;
    g->sms = d->sms;
    g->legacy = NULL;
    *out = (CUgreenCtx)g;
    return CUDA_SUCCESS;
}

static CUresult green_stream(CUstream *out, CUgreenCtx g, unsigned flags, int priority)
{
    tpbsi_ctx_t *c = (tpbsi_ctx_t *)g;
    if (!out || !c || !c->green || flags != CU_STREAM_NON_BLOCKING) /* required */
        return CUDA_ERROR_INVALID_VALUE;
    tpbsi_stream_t *s;
    if (tpbsi_stream_create(c, cudaStreamNonBlocking, 0, &s) != cudaSuccess)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *out = (CUstream)s;
    return CUDA_SUCCESS;
}

static CUresult green_destroy(CUgreenCtx g)
{
    tpbsi_ctx_t *c = (tpbsi_ctx_t *)g;
    if (!c || !c->green)
        return CUDA_ERROR_INVALID_HANDLE;
    c->magic = 0; /* its streams keep the memory: it is never freed */
    return CUDA_SUCCESS;
}

static CUresult ctx_from_green(CUcontext *out, CUgreenCtx g)
{
    if (!out || !g)
        return CUDA_ERROR_INVALID_VALUE;
    *out = (CUcontext)g;
    return CUDA_SUCCESS;
}

static CUresult ctx_push(CUcontext c)
{
    return tpbsi_ctx_push((tpbsi_ctx_t *)c) == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

static CUresult ctx_pop(CUcontext *out)
{
    tpbsi_ctx_t *c = tpbsi_ctx_pop();
    if (out)
        *out = (CUcontext)c;
    return c ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

typedef struct {
    tpbsi_op_t op;
    volatile uint32_t *addr;
    uint32_t value;
    unsigned flags;
} wait_value_t;

static int reached(uint32_t v, uint32_t want, unsigned flags)
{
    switch (flags & 0xf) {
    case CU_STREAM_WAIT_VALUE_GEQ: return (int32_t)(v - want) >= 0;
    case CU_STREAM_WAIT_VALUE_EQ: return v == want;
    case CU_STREAM_WAIT_VALUE_AND: return (v & want) != 0;
    case CU_STREAM_WAIT_VALUE_NOR: return ~(v | want) != 0;
    default: return 1;
    }
}

static void wait_value_run(tpbsi_op_t *op, tpbsi_stream_t *s)
{
    wait_value_t *w = (wait_value_t *)op;
    struct timespec ts = {0, 2000};
    while (!reached(__atomic_load_n(w->addr, __ATOMIC_ACQUIRE), w->value, w->flags))
        nanosleep(&ts, NULL);
}

static void wait_value_done(tpbsi_op_t *op)
{
    free(op);
}

static int wait_value_parked(const tpbsi_op_t *op)
{
    const wait_value_t *w = (const wait_value_t *)op;
    return !reached(__atomic_load_n(w->addr, __ATOMIC_ACQUIRE), w->value, w->flags);
}

static CUresult wait_value32(CUstream stream, CUdeviceptr addr, cuuint32_t value, unsigned flags)
{
    tpbsi_stream_t *s = tpbsi_stream(stream, "cuStreamWaitValue32");
    if (!s)
        return CUDA_ERROR_INVALID_HANDLE;
    if ((flags & 0xf) > CU_STREAM_WAIT_VALUE_NOR || (addr & 3))
        return CUDA_ERROR_INVALID_VALUE;
    void *p = tpbsi_resolve((void *)(uintptr_t)addr, 4, TPBSI_DEVICE_OR_MAPPED,
                            "cuStreamWaitValue32", NULL);
    wait_value_t *w = p ? calloc(1, sizeof(*w)) : NULL;
    if (!w)
        return CUDA_ERROR_INVALID_VALUE;
    w->op.run = wait_value_run;
    w->op.done = wait_value_done;
    w->op.parked = wait_value_parked;
    w->addr = p;
    w->value = value;
    w->flags = flags;
    tpbsi_enqueue(s, &w->op);
    return CUDA_SUCCESS;
}

static const struct {
    const char *name;
    void *fn;
    int version; /* the version that introduced it */
    int group;   /* 1: green contexts, 2: stream memory operations */
} entries[] = {
    {"cuDeviceGet", (void *)device_get, 2000, 0},
    {"cuCtxPushCurrent", (void *)ctx_push, 4000, 0},
    {"cuCtxPopCurrent", (void *)ctx_pop, 4000, 0},
    {"cuStreamWaitValue32", (void *)wait_value32, 8000, 2},
    {"cuDeviceGetDevResource", (void *)get_dev_resource, 12040, 1},
    {"cuDevSmResourceSplitByCount", (void *)split_by_count, 12040, 1},
    {"cuDevResourceGenerateDesc", (void *)generate_desc, 12040, 1},
    {"cuGreenCtxCreate", (void *)green_create, 12040, 1},
    {"cuGreenCtxDestroy", (void *)green_destroy, 12040, 1},
    {"cuCtxFromGreenCtx", (void *)ctx_from_green, 12040, 1},
    {"cuGreenCtxStreamCreate", (void *)green_stream, 12050, 1},
};

cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **funcPtr,
                                             unsigned int cudaVersion, unsigned long long flags,
                                             enum cudaDriverEntryPointQueryResult *status)
{
    if (!symbol || !funcPtr || cudaVersion > 13000) /* above the driver's version: invalid */
        return tpbsi_ret(cudaErrorInvalidValue);
    const tpbsi_config_t *c = tpbsi_config();
    enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    *funcPtr = NULL;
    for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++) {
        if (strcmp(entries[i].name, symbol) != 0)
            continue;
        if ((entries[i].group == 1 && !c->green) || (entries[i].group == 2 && !c->wait_value))
            break; /* switched off: an older driver */
        if ((int)cudaVersion < entries[i].version) {
            q = cudaDriverEntryPointVersionNotSufficent;
            break;
        }
        *funcPtr = entries[i].fn;
        q = cudaDriverEntryPointSuccess;
    }
    if (status)
        *status = q;
    return cudaSuccess; /* the runtime reports a missing symbol in status, not as an error */
}

cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **funcPtr, unsigned long long flags,
                                    enum cudaDriverEntryPointQueryResult *status)
{
    return cudaGetDriverEntryPointByVersion(symbol, funcPtr, CUDART_VERSION, flags, status);
}
