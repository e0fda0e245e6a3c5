/*
 * cuda_green.c - --emulate-speed on a GPU: the GEMM stream is created in a
 * green context holding a fraction of the SMs (CUDA >= 12.4). Partitions come
 * in hardware-defined steps, so the SM count actually granted is reported.
 * The driver API is reached through cudaGetDriverEntryPointByVersion, so
 * libcuda is never linked (a stub of it sits on the build machines' path).
 * Where green contexts are unavailable, the GEMM is repeated instead.
 */
#include <stdio.h>
#include <string.h>

#include "backend/cuda/cuda_internal.h"
#include "backend/cuda/cuda_plan.h"
#include "base/partition.h"

typedef CUresult (*pfn_device_get)(CUdevice *, int);
typedef CUresult (*pfn_get_resource)(CUdevice, CUdevResource *, CUdevResourceType);
typedef CUresult (*pfn_split)(CUdevResource *, unsigned *, const CUdevResource *, CUdevResource *,
                              unsigned, unsigned);
typedef CUresult (*pfn_gen_desc)(CUdevResourceDesc *, CUdevResource *, unsigned);
typedef CUresult (*pfn_green_create)(CUgreenCtx *, CUdevResourceDesc, CUdevice, unsigned);
typedef CUresult (*pfn_green_stream)(CUstream *, CUgreenCtx, unsigned, int);
typedef CUresult (*pfn_green_destroy)(CUgreenCtx);
typedef CUresult (*pfn_from_green)(CUcontext *, CUgreenCtx);
typedef CUresult (*pfn_push)(CUcontext);
typedef CUresult (*pfn_pop)(CUcontext *);

/* Each driver symbol is asked for at the version that introduced it: the runtime returns
 * no pointer when asked below that version (cuGreenCtxStreamCreate is 12.5, not 12.4). */
static const struct {
    const char *name;
    int version;
} driver_syms[] = {
    {"cuDeviceGet", 2000},
    {"cuDeviceGetDevResource", 12040},
    {"cuDevSmResourceSplitByCount", 12040},
    {"cuDevResourceGenerateDesc", 12040},
    {"cuGreenCtxCreate", 12040},
    {"cuGreenCtxStreamCreate", 12050},
    {"cuGreenCtxDestroy", 12040},
    {"cuCtxFromGreenCtx", 12040},
    {"cuCtxPushCurrent", 4000},
    {"cuCtxPopCurrent", 4000},
    {"cuStreamWaitValue32", 11070},
};

/* The version a driver symbol is asked for at (0 if not in the table). */
int tpb_cuda_driver_symbol_version(const char *name)
{
    for (size_t i = 0; i < sizeof(driver_syms) / sizeof(driver_syms[0]); i++)
        if (strcmp(driver_syms[i].name, name) == 0)
            return driver_syms[i].version;
    return 0;
}

static const char *missing_sym; /* the first symbol not found, for the fallback's reason */

static void *driver_fn(const char *name)
{
    void *fn = NULL;
    enum cudaDriverEntryPointQueryResult q;
    int v = tpb_cuda_driver_symbol_version(name);
#if CUDART_VERSION >= 12050 /* the one place that knows toolkit versions */
    cudaError_t e = cudaGetDriverEntryPointByVersion(name, &fn, (unsigned)v, cudaEnableDefault, &q);
#else
    cudaError_t e = cudaGetDriverEntryPoint(name, &fn, cudaEnableDefault, &q);
    (void)v;
#endif
    if (e != cudaSuccess || q != cudaDriverEntryPointSuccess) {
        if (!missing_sym)
            missing_sym = name;
        return NULL;
    }
    return fn;
}

void *tpb_cuda_driver_symbol(const char *name)
{
    return driver_fn(name);
}

/* Try the green context; 0 on success, else a reason for the fallback. */
static const char *green_try(tpb_cuda_t *be, double f)
{
    pfn_device_get dev_get = (pfn_device_get)driver_fn("cuDeviceGet");
    pfn_get_resource get_res = (pfn_get_resource)driver_fn("cuDeviceGetDevResource");
    pfn_split split = (pfn_split)driver_fn("cuDevSmResourceSplitByCount");
    pfn_gen_desc gen = (pfn_gen_desc)driver_fn("cuDevResourceGenerateDesc");
    pfn_green_create create = (pfn_green_create)driver_fn("cuGreenCtxCreate");
    pfn_green_stream mkstream = (pfn_green_stream)driver_fn("cuGreenCtxStreamCreate");
    if (!dev_get || !get_res || !split || !gen || !create || !mkstream) {
        static char why[96];
        snprintf(why, sizeof(why), "green contexts not available: the driver lacks %s (CUDA %d.%d)",
                 missing_sym ? missing_sym : "?",
                 tpb_cuda_driver_symbol_version(missing_sym ? missing_sym : "") / 1000,
                 tpb_cuda_driver_symbol_version(missing_sym ? missing_sym : "") % 1000 / 10);
        return why;
    }
    CUdevice dev;
    CUdevResource all, part, rest;
    CUdevResourceDesc desc;
    CUgreenCtx ctx;
    CUstream stream;
    unsigned groups = 1;
    if (dev_get(&dev, be->gpu.device) != CUDA_SUCCESS ||
        get_res(dev, &all, CU_DEV_RESOURCE_TYPE_SM) != CUDA_SUCCESS)
        return "cannot query the SM resource";
    int step = all.sm.smCoscheduledAlignment ? (int)all.sm.smCoscheduledAlignment : 1;
    int want = tpb_cuda_sm_request((int)all.sm.smCount, f, (int)all.sm.minSmPartitionSize, step);
    if (split(&part, &groups, &all, &rest, 0, (unsigned)want) != CUDA_SUCCESS || groups < 1)
        return "SM split refused";
    if (gen(&desc, &part, 1) != CUDA_SUCCESS ||
        create(&ctx, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM) != CUDA_SUCCESS)
        return "green context creation failed";
    if (mkstream(&stream, ctx, CU_STREAM_NON_BLOCKING, 0) != CUDA_SUCCESS) {
        pfn_green_destroy destroy = (pfn_green_destroy)driver_fn("cuGreenCtxDestroy");
        if (destroy)
            destroy(ctx);
        return "green stream creation failed";
    }
    pfn_from_green from_green = (pfn_from_green)driver_fn("cuCtxFromGreenCtx");
    CUcontext cu;
    be->green.push = driver_fn("cuCtxPushCurrent");
    be->green.pop = driver_fn("cuCtxPopCurrent");
    if (!from_green || !be->green.push || !be->green.pop || from_green(&cu, ctx) != CUDA_SUCCESS) {
        pfn_green_destroy destroy = (pfn_green_destroy)driver_fn("cuGreenCtxDestroy");
        cudaStreamDestroy((cudaStream_t)stream);
        if (destroy)
            destroy(ctx);
        return "cuCtxFromGreenCtx failed";
    }
    be->green.ctx = ctx;
    be->green.cu = cu;
    be->green.sm_granted = (int)part.sm.smCount;
    be->gemm_stream = (cudaStream_t)stream;
    snprintf(be->green.how, sizeof(be->green.how), "green-context %d/%d SMs + padding",
             (int)part.sm.smCount, (int)all.sm.smCount); /* padding: cuda_emulate.c */
    return NULL;
}

tpb_status_t tpb_cuda_emulation_init(tpb_cuda_t *be, double f)
{
    be->repeat_full = 1;
    be->repeat_frac = 0.0;
    snprintf(be->green.how, sizeof(be->green.how), "none");
    if (!(f < 1.0))
        return TPB_OK;
    const char *why = be->gpu.args.cfg.emulate_mode == TPB_EMULATE_WORK ? "--emulate-mode work"
                                                                        : green_try(be, f);
    if (!why)
        return TPB_OK;
    long extra;
    tpb_repeat_plan(f, 1000000, &be->repeat_full, &extra);
    be->repeat_frac = (double)extra / 1e6;
    snprintf(be->green.how, sizeof(be->green.how), "repeat x%.2f (%s)", 1.0 / f, why);
    return TPB_OK;
}

void tpb_cuda_emulation_free(tpb_cuda_t *be)
{
    if (!be->green.ctx)
        return;
    cudaStreamSynchronize(be->gemm_stream);
    cudaStreamDestroy(be->gemm_stream);
    pfn_green_destroy destroy = (pfn_green_destroy)driver_fn("cuGreenCtxDestroy");
    if (destroy)
        destroy((CUgreenCtx)be->green.ctx);
    be->green.ctx = NULL;
}

void tpb_cuda_green_enter(tpb_cuda_t *be)
{
    if (be->green.ctx)
        ((pfn_push)be->green.push)((CUcontext)be->green.cu);
}

void tpb_cuda_green_leave(tpb_cuda_t *be)
{
    CUcontext popped;
    if (be->green.ctx)
        ((pfn_pop)be->green.pop)(&popped);
}

tpb_status_t tpb_cuda_gemm_event(tpb_cuda_t *be, cudaEvent_t *ev, unsigned flags)
{
    tpb_cuda_green_enter(be);
    cudaError_t e = cudaEventCreateWithFlags(ev, flags);
    tpb_cuda_green_leave(be);
    if (e != cudaSuccess)
        return tpb_cuda_err(e, "cudaEventCreateWithFlags", __FILE__, __LINE__);
    return TPB_OK;
}
