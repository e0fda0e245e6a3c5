/*
 * cuda_marks.c - timer marks of the CUDA backend: CUDA events on the GEMM and
 * comm streams, placed on the host clock by two anchors per stream (one when
 * the marks are prepared, one when they are read) and the GPU timer's drift
 * between them.
 */
#include <stdlib.h>

#include "backend/cuda/cuda_internal.h"

/* Grow both event pools to n (the GEMM stream's pool in its own context). */
static tpb_status_t grow_events(tpb_cuda_t *be, size_t n)
{
    for (int p = 0; p < 2; p++) {
        cudaEvent_t *ev = realloc(be->ev[p], n * sizeof(*ev));
        if (!ev)
            return tpb_err_set(TPB_ERR_NOMEM, "cuda backend: no memory for %zu marks", n);
        be->ev[p] = ev;
    }
    unsigned char *es = realloc(be->event_stream, n);
    if (!es)
        return tpb_err_set(TPB_ERR_NOMEM, "cuda backend: no memory for %zu marks", n);
    be->event_stream = es;
    for (; be->nevents < n; be->nevents++) {
        es[be->nevents] = 0; /* a mark never recorded reads as an error, not a wild pool */
        TPB_CHECK_RET(tpb_cuda_gemm_event(be, &be->ev[0][be->nevents], cudaEventDefault));
        TPB_CUDA_RET(cudaEventCreate(&be->ev[1][be->nevents]));
    }
    return TPB_OK;
}

/* Anchor a of both streams: an event recorded on the idle stream, its host time the
 * midpoint of host reads before the record and after the wait (the wait's wake-up latency
 * would otherwise make every mark late). */
static tpb_status_t take_anchor(tpb_cuda_t *be, int a)
{
    cudaStream_t s[2] = {be->gemm_stream, be->comm_stream};
    for (int i = 0; i < 2; i++) {
        if (i == 0)
            tpb_cuda_green_enter(be);
        double before = tpb_clock_now_us(be->args.clock);
        cudaError_t e = cudaEventRecord(be->anchor[a][i], s[i]);
        if (e == cudaSuccess)
            e = cudaEventSynchronize(be->anchor[a][i]);
        double after = tpb_clock_now_us(be->args.clock);
        if (i == 0)
            tpb_cuda_green_leave(be);
        if (e != cudaSuccess)
            return tpb_cuda_err(e, "cudaEventRecord(anchor)", __FILE__, __LINE__);
        be->anchor_us[a][i] = 0.5 * (before + after);
    }
    return TPB_OK;
}

tpb_status_t tpb_cuda_marks_prepare(tpb_cuda_t *be, size_t n)
{
    TPB_CHECK_RET(tpb_cuda_wait(be, 0));
    if (n > be->nevents)
        TPB_CHECK_RET(grow_events(be, n));
    return take_anchor(be, 0);
}

/* Compute marks (c0, c1) on the GEMM stream, collective marks (x1) on the comm stream: with
 * emulation the two differ, and c0 must be ordered before the GEMM, not after the last
 * collective. */
tpb_status_t tpb_cuda_mark(tpb_cuda_t *be, size_t slot, tpb_mark_phase_t phase)
{
    int s = phase == TPB_MARK_COMM && be->comm_stream != be->gemm_stream;
    cudaStream_t stream = s ? be->comm_stream : be->gemm_stream;
    if (phase == TPB_MARK_COMPUTE_BEGIN) /* c0 on an idle stream: held until the GEMM is queued */
        TPB_CHECK_RET(tpb_cuda_gate_arm(be));
    /* x1 is the end of the iteration: after its GEMMs too, also where no collective ordered
     * the comm stream after them (TP 1, emulating or chunked: an x1 before its c0 was seen) */
    if (s == 1)
        TPB_CHECK_RET(tpb_cuda_comm_after_gemm(be));
    be->event_stream[slot] = (unsigned char)s;
    if (s == 0)
        tpb_cuda_green_enter(be);
    if (s == 0 && be->comm_pending) { /* c0 after the collective the GEMM waits for */
        TPB_CUDA_RET(cudaStreamWaitEvent(be->gemm_stream, be->comm_done, 0));
        be->comm_pending = 0;
    }
    cudaError_t e = cudaEventRecord(be->ev[s][slot], stream);
    if (s == 0)
        tpb_cuda_green_leave(be);
    if (e != cudaSuccess)
        return tpb_cuda_err(e, "cudaEventRecord(mark)", __FILE__, __LINE__);
    return TPB_OK;
}

/* Marks on the host clock: the GPU's elapsed time from the first anchor, scaled by the
 * drift of the GPU timer against the host clock between the two anchors. */
tpb_status_t tpb_cuda_marks_read(tpb_cuda_t *be, size_t n, double *us)
{
    TPB_CHECK_RET(tpb_cuda_wait(be, 1));
    TPB_CHECK_RET(take_anchor(be, 1)); /* the streams are idle now */
    double scale[2];
    for (int s = 0; s < 2; s++) {
        float span = 0.0f;
        TPB_CUDA_RET(cudaEventElapsedTime(&span, be->anchor[0][s], be->anchor[1][s]));
        double host = be->anchor_us[1][s] - be->anchor_us[0][s];
        scale[s] = span > 0.0f && host > 0.0 ? host / (1e3 * (double)span) : 1.0;
    }
    for (size_t i = 0; i < n; i++) {
        float ms = 0.0f;
        int s = be->event_stream[i];
        TPB_CUDA_RET(cudaEventElapsedTime(&ms, be->anchor[0][s], be->ev[s][i]));
        us[i] = be->anchor_us[0][s] + 1e3 * (double)ms * scale[s];
    }
    return TPB_OK;
}
