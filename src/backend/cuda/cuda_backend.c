/*
 * cuda_backend.c - one GPU per rank: its class, opening it, memory, copies and the ops
 * table. Which device and whether it can run are in cuda_device.c, GEMMs in cuda_gemm.c,
 * NCCL in cuda_comm.c, SM partitions in cuda_green.c, the runtime's calls behind the
 * generic GPU layer (marks, watchdog, staging, plan cache: src/backend/gpu/) in
 * cuda_vendor.c; device-free decisions in cuda_plan.c.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/gpu/gpu_device.h"
#include "backend/bind.h"
#include "backend/cuda/cuda_defaults.h"
#include "backend/cuda/cuda_internal.h"
#include "backend/cuda/cuda_plan.h"

static const tpb_gpu_class_t tpb_cuda_gpu_class;

/* Before a device is chosen: every dtype of the table is a GPU dtype; what the dtype
 * needs of the collectives' path and the host-only features are known without one. */
static tpb_status_t cuda_check_config(const tpb_backend_cfg_t *cfg)
{
    TPB_CHECK_RET(tpb_cuda_check_comm_dtype(cfg->dtype, cfg->comm));
    return tpb_gpu_check_config(&tpb_cuda_gpu_class, cfg);
}

static tpb_status_t setup_streams(tpb_cuda_t *be)
{
    TPB_CUDA_RET(cudaStreamCreateWithFlags(&be->comm_stream, cudaStreamNonBlocking));
    be->gemm_stream = be->comm_stream;
    TPB_CHECK_RET(tpb_cuda_emulation_init(be, be->gpu.args.emulate_factor));
    if (be->gpu.args.cfg.overlap && be->gemm_stream == be->comm_stream) { /* chunks overlap */
        TPB_CUDA_RET(cudaStreamCreateWithFlags(&be->own_gemm, cudaStreamNonBlocking));
        be->gemm_stream = be->own_gemm;
    }
    be->gpu.apart = be->gemm_stream != be->comm_stream;
    TPB_CHECK_RET(tpb_gpu_init(&be->gpu));
    TPB_CHECK_RET(tpb_cuda_blas_load()); /* loaded here, not at start: a clear refusal */
    TPB_CUBLAS_RET(cublasLtCreate(&be->lt));
    TPB_CUDA_RET(cudaMalloc(&be->workspace, TPB_CUDA_WORKSPACE));
    tpb_cuda_gate_init(be);
    return TPB_OK;
}

static const tpb_device_ops_t cuda_device_ops;

/* Its state for device dev, opened (*g set once allocated: released on any failure). */
static tpb_status_t cuda_create(const tpb_backend_args_t *args, int dev, tpb_gpu_t **g)
{
    tpb_cuda_t *be = calloc(1, sizeof(*be));
    if (!be)
        return tpb_err_set(TPB_ERR_NOMEM, "cuda backend: out of memory");
    be->gpu.base.ops = &cuda_device_ops;
    be->gpu.v = &tpb_cuda_vendor;
    be->gpu.args = *args;
    tpb_gpu_plans_init(&be->gpu.plans, sizeof(tpb_cuda_plan_t));
    be->gpu.device = dev;
    *g = &be->gpu;
    return tpb_cuda_open_device(be, dev);
}

static tpb_status_t cuda_check(tpb_gpu_t *g)
{
    return tpb_cuda_check_device(tpb_cuda_of(g));
}

static tpb_status_t cuda_setup(tpb_gpu_t *g)
{
    return setup_streams(tpb_cuda_of(g));
}

static void release(tpb_gpu_t *g);

static const tpb_gpu_class_t tpb_cuda_gpu_class = {
    .backend = "cuda",
    .visible_env = "CUDA_VISIBLE_DEVICES",
    .count = tpb_cuda_device_count,
    .driver_problem = tpb_cuda_driver_problem,
    .create = cuda_create,
    .check = cuda_check,
    .bind_near = tpb_cuda_bind_near_gpu,
    .setup = cuda_setup,
    .release = release,
};

static tpb_status_t cuda_open(const tpb_backend_args_t *args, tpb_device_t **out)
{
    return tpb_gpu_open(args, &tpb_cuda_gpu_class, out);
}

/* The SM partition is made once, at start: a schedule of speeds is a host feature. */
static tpb_status_t cuda_set_emulation(tpb_device_t *dev, double factor)
{
    tpb_cuda_t *be = (tpb_cuda_t *)dev;
    if (factor == be->gpu.args.emulate_factor)
        return TPB_OK;
    return tpb_gpu_refuse_schedule(&tpb_cuda_gpu_class);
}

/* Everything of the device, but the watchdog (whose end is collective: tpb_gpu_close). */
static void release(tpb_gpu_t *g)
{
    tpb_cuda_t *be = tpb_cuda_of(g);
    tpb_cuda_gate_release(be);
    if (be->comm_stream)
        cudaStreamSynchronize(be->comm_stream);
    tpb_gpu_free(&be->gpu, tpb_cuda_plan_destroy); /* plans, events, staging */
    if (be->lt)
        cublasLtDestroy(be->lt);
    cudaFree(be->workspace);
    if (be->gate_host)
        cudaFreeHost((void *)be->gate_host);
    tpb_cuda_emulation_free(be);
    if (be->comm_stream)
        cudaStreamDestroy(be->comm_stream);
    if (be->own_gemm)
        cudaStreamDestroy(be->own_gemm);
    free(be);
}

static void cuda_finalize(tpb_device_t *dev)
{
    tpb_gpu_close((tpb_gpu_t *)dev, &tpb_cuda_gpu_class);
}

static void cuda_info(tpb_device_t *dev, tpb_device_info_t *info)
{
    tpb_cuda_t *be = (tpb_cuda_t *)dev;
    memset(info, 0, sizeof(*info));
    snprintf(info->name, sizeof(info->name), "%.127s", be->prop.name);
    cudaDeviceGetPCIBusId(info->bus_id, sizeof(info->bus_id), be->gpu.device);
    snprintf(info->uuid, sizeof(info->uuid), "%.47s", be->gpu.id);
    info->index = be->gpu.device;
    info->gpu_numa = tpb_cuda_gpu_numa_node(info->bus_id);
    info->sm_total = be->prop.multiProcessorCount;
    info->sm_count = be->green.sm_granted ? be->green.sm_granted : info->sm_total;
    info->ranks_on_device = be->gpu.ranks_on_device;
    info->host_waits = be->gpu.args.cfg.comm == TPB_COMM_MPI; /* staged, blocking */
    info->mem_bytes = (double)be->prop.totalGlobalMem;
    snprintf(info->emulation, sizeof(info->emulation), "%s", be->green.how);
    int rt = 0, drv = 0, nccl = 0;
    cudaRuntimeGetVersion(&rt);
    cudaDriverGetVersion(&drv);
    ncclGetVersion(&nccl);
    snprintf(
        info->versions, sizeof(info->versions),
        "CUDA runtime %d.%d, driver %d.%d, cuBLASLt %zu, NCCL %d.%d.%d, sm_%d%d; all-gather-v: "
        "grouped ncclBroadcast",
        rt / 1000, rt % 1000 / 10, drv / 1000, drv % 1000 / 10, cublasLtGetVersion(), nccl / 10000,
        nccl / 100 % 100, nccl % 100, be->prop.major, be->prop.minor);
    tpb_bind_report(info);
    int khz = 0; /* the maximum SM clock */
    if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, be->gpu.device) != cudaSuccess)
        khz = 0;
    info->peak_gflops =
        tpb_cuda_peak_gflops(be->prop.major, be->prop.minor, info->sm_total, be->prop.name, khz,
                             be->gpu.args.cfg.dtype, info->peak_basis, sizeof(info->peak_basis));
    if (be->gpu.ranks_on_device > 1)
        snprintf(info->advice, sizeof(info->advice),
                 "%d ranks share this GPU: they take turns on it, so its results are for "
                 "correctness, not speed",
                 be->gpu.ranks_on_device);
    else if (be->gpu.isolated)
        snprintf(info->advice, sizeof(info->advice),
                 "each rank sees only its own GPU (per-task CUDA_VISIBLE_DEVICES, "
                 "--gpus-per-task): NCCL cannot use P2P/NVLink between the ranks of a node; "
                 "request --gpus-per-node instead");
    else if (be->gpu.args.cfg.comm == TPB_COMM_MPI)
        snprintf(info->advice, sizeof(info->advice),
                 "--comm mpi stages every collective through host memory and waits for the "
                 "stream inside it: comm times include that round trip");
}

static tpb_status_t cuda_mem_free(tpb_device_t *dev, double *bytes)
{
    tpb_cuda_t *be = (tpb_cuda_t *)dev;
    size_t free_b = 0, total = 0;
    TPB_CUDA_RET(cudaMemGetInfo(&free_b, &total));
    *bytes = (double)free_b / be->gpu.ranks_on_device;
    return TPB_OK;
}

static tpb_status_t cuda_alloc(tpb_device_t *dev, size_t bytes, void **ptr)
{
    tpb_cuda_t *be = (tpb_cuda_t *)dev;
    void *p = NULL;
    TPB_CUDA_RET(cudaMalloc(&p, bytes ? bytes : 1));
    cudaError_t e = cudaMemsetAsync(p, 0, bytes, be->comm_stream);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(be->comm_stream);
    if (e != cudaSuccess) {
        cudaFree(p);
        return tpb_cuda_err(e, "cudaMemsetAsync", __FILE__, __LINE__);
    }
    *ptr = p;
    return TPB_OK;
}

static void cuda_free(tpb_device_t *dev, void *ptr)
{
    tpb_cuda_t *be = (tpb_cuda_t *)dev;
    tpb_cuda_gate_release(be); /* never wait on a stream held by the gate */
    cudaStreamSynchronize(be->comm_stream);
    cudaStreamSynchronize(be->gemm_stream);
    cudaFree(ptr);
}

/* An injected delay on the GEMM stream: a host function that stalls the stream. */
static void CUDART_CB stall_fn(void *arg)
{
    tpb_stall_us((double)(uintptr_t)arg);
}

static tpb_status_t gemm_phase(tpb_cuda_t *be, const tpb_gemm_t *g)
{
    if (!g->chunk) /* the next GEMM overwrites what the last collective reads */
        TPB_CHECK_RET(tpb_gpu_gemm_after_comm(&be->gpu));
    tpb_status_t st = tpb_cuda_gemm(be, g);
    be->gpu.gemm_queued = 1; /* the gate holds until the compute-end mark (gpu_marks.c) */
    TPB_CHECK_RET(st);
    if (g->delay_us > 0.0)
        TPB_CUDA_RET(cudaLaunchHostFunc(be->gemm_stream, stall_fn, (void *)(uintptr_t)g->delay_us));
    return TPB_OK;
}

static tpb_status_t cuda_gemm_phase(tpb_device_t *dev, const tpb_gemm_t *g)
{
    tpb_cuda_t *be = (tpb_cuda_t *)dev;
    tpb_cuda_green_enter(be);
    tpb_status_t st = gemm_phase(be, g);
    tpb_cuda_green_leave(be);
    return st;
}

static tpb_status_t cuda_probe(tpb_device_t *dev, const tpb_gemm_t *g, double *achieved)
{
    return tpb_cuda_emulation_probe((tpb_cuda_t *)dev, g, achieved);
}

static const tpb_device_ops_t cuda_device_ops = {
    .close = cuda_finalize,
    .info = cuda_info,
    .mem_free = cuda_mem_free,
    .alloc = cuda_alloc,
    .free = cuda_free,
    .copy = tpb_gpu_copy,
    .gemm = cuda_gemm_phase,
    .set_emulation = cuda_set_emulation,
    .emulation_probe = cuda_probe,
    .marks_prepare = tpb_gpu_marks_prepare,
    .mark = tpb_gpu_mark,
    .marks_read = tpb_gpu_marks_read,
    .marks_within = tpb_gpu_marks_within,
    .sync = tpb_gpu_sync,
    .comm_open = tpb_gpu_comm_open,
};

const tpb_backend_class_t tpb_backend_cuda = {
    .name = "cuda",
    .about = TPB_CUDA_ABOUT,
    .dtypes = TPB_CUDA_DTYPES,
    .built = 1,
    .defaults = TPB_CUDA_DEFAULTS,
    .device_count = tpb_cuda_device_count,
    .check_config = cuda_check_config,
    TPB_CUDA_CAPS,
    .rate_guess = tpb_cuda_rate_guess,
    .mem_guess = tpb_cuda_mem_guess,
    .open = cuda_open,
};
