/*
 * cuda_vendor.c - the CUDA runtime's calls behind the generic GPU layer
 * (gpu.h): events, streams, copies and page-locked memory, with NCCL's
 * communicators (cuda_comm.c) and the start gate (cuda_gemm.c). The GEMM
 * stream runs in the green context when emulating (cuda_green.c).
 */
#include "backend/cuda/cuda_internal.h"

static cudaStream_t stream_of(tpb_gpu_t *g, int s)
{
    tpb_cuda_t *be = tpb_cuda_of(g);
    return s == TPB_GPU_GEMM ? be->gemm_stream : be->comm_stream;
}

static void enter(tpb_gpu_t *g, int s)
{
    if (s == TPB_GPU_GEMM)
        tpb_cuda_green_enter(tpb_cuda_of(g));
}

static void leave(tpb_gpu_t *g, int s)
{
    if (s == TPB_GPU_GEMM)
        tpb_cuda_green_leave(tpb_cuda_of(g));
}

static tpb_status_t event_create(tpb_gpu_t *g, int s, int timing, void **ev)
{
    unsigned flags = timing ? cudaEventDefault : cudaEventDisableTiming;
    cudaEvent_t e = NULL;
    if (s == TPB_GPU_GEMM)
        TPB_CHECK_RET(tpb_cuda_gemm_event(tpb_cuda_of(g), &e, flags));
    else
        TPB_CUDA_RET(cudaEventCreateWithFlags(&e, flags));
    *ev = e;
    return TPB_OK;
}

static void event_destroy(void *ev)
{
    if (ev)
        cudaEventDestroy((cudaEvent_t)ev);
}

static tpb_status_t event_record(tpb_gpu_t *g, void *ev, int s)
{
    TPB_CUDA_RET(cudaEventRecord((cudaEvent_t)ev, stream_of(g, s)));
    return TPB_OK;
}

static tpb_status_t event_sync(void *ev)
{
    TPB_CUDA_RET(cudaEventSynchronize((cudaEvent_t)ev));
    return TPB_OK;
}

static tpb_status_t event_elapsed_ms(void *a, void *b, float *ms)
{
    TPB_CUDA_RET(cudaEventElapsedTime(ms, (cudaEvent_t)a, (cudaEvent_t)b));
    return TPB_OK;
}

static tpb_status_t stream_wait(tpb_gpu_t *g, int s, void *ev)
{
    TPB_CUDA_RET(cudaStreamWaitEvent(stream_of(g, s), (cudaEvent_t)ev, 0));
    return TPB_OK;
}

static tpb_status_t stream_query(tpb_gpu_t *g, int s, int *done)
{
    cudaError_t e = cudaStreamQuery(stream_of(g, s));
    *done = e == cudaSuccess;
    if (e != cudaSuccess && e != cudaErrorNotReady)
        return tpb_cuda_err(e, "cudaStreamQuery", __FILE__, __LINE__);
    return TPB_OK;
}

static tpb_status_t stream_sync(tpb_gpu_t *g, int s)
{
    TPB_CUDA_RET(cudaStreamSynchronize(stream_of(g, s)));
    return TPB_OK;
}

static tpb_status_t copy_async(tpb_gpu_t *g, void *dst, const void *src, size_t n,
                               tpb_gpu_copy_t dir)
{
    enum cudaMemcpyKind kind = dir == TPB_GPU_TO_HOST     ? cudaMemcpyDeviceToHost
                               : dir == TPB_GPU_TO_DEVICE ? cudaMemcpyHostToDevice
                                                          : cudaMemcpyDeviceToDevice;
    TPB_CUDA_RET(cudaMemcpyAsync(dst, src, n, kind, stream_of(g, TPB_GPU_COMM)));
    return TPB_OK;
}

static tpb_status_t host_alloc(size_t n, void **p)
{
    TPB_CUDA_RET(cudaMallocHost(p, n));
    return TPB_OK;
}

static void host_free(void *p)
{
    cudaFreeHost(p);
}

static tpb_status_t gate_arm(tpb_gpu_t *g, int s)
{
    tpb_cuda_t *be = tpb_cuda_of(g);
    return s == TPB_GPU_GEMM ? tpb_cuda_gate_arm(be) : tpb_cuda_gate_arm_on(be, be->comm_stream);
}

static void gate_release(tpb_gpu_t *g)
{
    tpb_cuda_gate_release(tpb_cuda_of(g));
}

const tpb_gpu_vendor_t tpb_cuda_vendor = {
    .name = "NCCL",
    .enter = enter,
    .leave = leave,
    .event_create = event_create,
    .event_destroy = event_destroy,
    .event_record = event_record,
    .event_sync = event_sync,
    .event_elapsed_ms = event_elapsed_ms,
    .stream_wait = stream_wait,
    .stream_query = stream_query,
    .stream_sync = stream_sync,
    .copy_async = copy_async,
    .host_alloc = host_alloc,
    .host_free = host_free,
    .gate_arm = gate_arm,
    .gate_release = gate_release,
    .ccl_open = tpb_cuda_ccl_open,
    .ccl_post = tpb_cuda_ccl_post,
    .ccl_close = tpb_cuda_ccl_close,
    .ccl_error = tpb_cuda_ccl_error,
    .ccl_abort = tpb_cuda_ccl_abort,
};
