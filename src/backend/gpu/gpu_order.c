/*
 * gpu_order.c - the order of a GPU backend's two streams (the collective after
 * the GEMMs it reduces, the next GEMM after the collective that reads its
 * output), and the device ops that wait for both: copy and sync.
 */
#include "backend/gpu/gpu.h"

tpb_status_t tpb_gpu_comm_after_gemm(tpb_gpu_t *g)
{
    if (!g->apart)
        return TPB_OK;
    g->v->enter(g, TPB_GPU_GEMM);
    tpb_status_t st = g->v->event_record(g, g->gemm_done, TPB_GPU_GEMM);
    g->v->leave(g, TPB_GPU_GEMM);
    TPB_CHECK_RET(st);
    return g->v->stream_wait(g, TPB_GPU_COMM, g->gemm_done);
}

tpb_status_t tpb_gpu_comm_end(tpb_gpu_t *g)
{
    if (!g->apart)
        return TPB_OK;
    TPB_CHECK_RET(g->v->event_record(g, g->comm_done, TPB_GPU_COMM));
    g->comm_pending = 1;
    return TPB_OK;
}

tpb_status_t tpb_gpu_gemm_after_comm(tpb_gpu_t *g)
{
    if (!g->comm_pending)
        return TPB_OK;
    g->v->enter(g, TPB_GPU_GEMM);
    tpb_status_t st = g->v->stream_wait(g, TPB_GPU_GEMM, g->comm_done);
    g->v->leave(g, TPB_GPU_GEMM);
    TPB_CHECK_RET(st);
    g->comm_pending = 0;
    return TPB_OK;
}

tpb_status_t tpb_gpu_copy(tpb_device_t *dev, void *dst, const void *src, size_t bytes,
                          tpb_copy_dir_t dir)
{
    tpb_gpu_t *g = (tpb_gpu_t *)dev;
    TPB_CHECK_RET(tpb_gpu_wait(g, 0));
    /* on the comm stream, then waited for: a pageable copy may return before its DMA
     * ends, and non-blocking streams are not ordered after it */
    TPB_CHECK_RET(g->v->copy_async(g, dst, src, bytes,
                                   dir == TPB_COPY_TO_HOST ? TPB_GPU_TO_HOST : TPB_GPU_TO_DEVICE));
    return g->v->stream_sync(g, TPB_GPU_COMM);
}

tpb_status_t tpb_gpu_sync(tpb_device_t *dev)
{
    return tpb_gpu_wait((tpb_gpu_t *)dev, 1);
}
