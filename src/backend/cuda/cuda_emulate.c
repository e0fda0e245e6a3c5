/*
 * cuda_emulate.c - an emulated slower GPU that hits the factor asked. A green context's share
 * of the SMs does not slow a GEMM in proportion (on the H200 96/132 SMs ran at 0.85, 32/132 at
 * 0.29-0.43 of full speed: memory traffic and the tail of waves do not shrink with it), so the
 * partition is a floor (at least the share asked: cuda_green.c) and the rest is padding on the
 * device: more of the same GEMM's work (whole repeats and a part of its columns) on the green
 * stream, inside the compute phase. The probe, run per config outside the timed loops, times
 * the GEMM with events (10 samples, the median) at full speed and emulated, and corrects the
 * padding until the factor measured is within 2 % of the one asked (at most 4 rounds); the
 * padding is kept per GEMM shape, and shapes never probed (chunk pieces, a block's other
 * GEMMs) take the latest one's.
 */
#include <math.h>

#include "backend/cuda/cuda_internal.h"
#include "base/stamp.h"
#include "base/stats.h"
#include "base/testfault.h"

#define TPB_PROBE_SAMPLES 10 /* event-timed GEMMs a median */
#define TPB_PROBE_ROUNDS 4   /* padding corrections at most */
#define TPB_PROBE_CLOSE 0.02 /* stop once within 2 % of the factor asked */

/* One GEMM as the compute phase runs it (emulated: the green context's stream with its
 * padding) or on every SM (the primary context's comm stream), between events a and b, all
 * three queued behind the start gate (as the timed loop's): b is never recorded after a short
 * GEMM has ended. */
static tpb_status_t gemm_between(tpb_cuda_t *be, const tpb_gemm_t *g, int emulated, cudaEvent_t a,
                                 cudaEvent_t b)
{
    cudaStream_t s = emulated ? be->gemm_stream : be->comm_stream;
    TPB_CHECK_RET(tpb_cuda_gate_arm_on(be, s));
    cudaError_t e = cudaEventRecord(a, s);
    tpb_status_t st = e == cudaSuccess
                          ? (emulated ? tpb_cuda_gemm(be, g) : tpb_cuda_gemm_on(be, g, 0, s))
                          : tpb_cuda_err(e, "cudaEventRecord", __FILE__, __LINE__);
    if (st == TPB_OK && (e = cudaEventRecord(b, s)) != cudaSuccess)
        st = tpb_cuda_err(e, "cudaEventRecord", __FILE__, __LINE__);
    tpb_cuda_gate_release(be);
    return st;
}

/* The median of TPB_PROBE_SAMPLES GEMMs timed with events (after one untimed, waited for: its
 * plans built and loaded outside the gate), in microseconds. */
static tpb_status_t time_gemm(tpb_cuda_t *be, const tpb_gemm_t *g, int emulated, double *us)
{
    cudaEvent_t a = NULL, b = NULL;
    double t[TPB_PROBE_SAMPLES];
    if (emulated)
        tpb_cuda_green_enter(be); /* the events and the GEMMs in the green context */
    cudaStream_t s = emulated ? be->gemm_stream : be->comm_stream;
    tpb_status_t st = emulated ? tpb_cuda_gemm(be, g) : tpb_cuda_gemm_on(be, g, 0, s);
    cudaError_t w = cudaStreamSynchronize(s); /* the untimed one: plans built and loaded */
    if (st == TPB_OK && w != cudaSuccess)
        st = tpb_cuda_err(w, "cudaStreamSynchronize", __FILE__, __LINE__);
    if (st == TPB_OK && (cudaEventCreate(&a) != cudaSuccess || cudaEventCreate(&b) != cudaSuccess))
        st = tpb_err_set(TPB_ERR_BACKEND, "emulation probe: cannot create its events");
    for (int i = 0; st == TPB_OK && i < TPB_PROBE_SAMPLES; i++) {
        float ms = 0.0f;
        st = gemm_between(be, g, emulated, a, b);
        tpb_stamp_call("cudaEventSynchronize (the emulation probe)");
        cudaError_t e = st == TPB_OK ? cudaEventSynchronize(b) : cudaSuccess;
        tpb_stamp_call(NULL);
        if (st == TPB_OK && e == cudaSuccess)
            e = cudaEventElapsedTime(&ms, a, b);
        if (st == TPB_OK && e != cudaSuccess)
            st = tpb_cuda_err(e, "cudaEventElapsedTime", __FILE__, __LINE__);
        t[i] = 1e3 * (double)ms;
    }
    if (a)
        cudaEventDestroy(a);
    if (b)
        cudaEventDestroy(b);
    if (emulated)
        tpb_cuda_green_leave(be);
    if (st == TPB_OK)
        *us = tpb_stats_median(t, TPB_PROBE_SAMPLES);
    return st;
}

tpb_status_t tpb_cuda_emulation_probe(tpb_cuda_t *be, const tpb_gemm_t *g, double *achieved)
{
    double f = be->gpu.args.emulate_factor, ref = 0.0, emu = 0.0, bare = 0.0, pad = 0.0;
    if (!be->green.ctx && be->repeat_full <= 1 && be->repeat_frac <= 0.0) {
        *achieved = 1.0;
        return TPB_OK;
    }
    tpb_cuda_gate_release(be);
    TPB_CHECK_RET(tpb_gpu_wait(&be->gpu, 0)); /* nothing else on the device while timing */
    TPB_CHECK_RET(time_gemm(be, g, 0, &ref));
    if (be->green.ctx && !g->accumulate)
        tpb_cuda_pad_set(&be->pads, g, 0.0); /* the partition alone first */
    TPB_CHECK_RET(time_gemm(be, g, 1, &emu));
    bare = emu;
    /* the padding: the green GEMM's time grows with its work (a part of its columns more),
     * so each round moves it by the time still missing over the partition's own time
     * (TPBAL_TEST_FAULT=no-padding, tests only: none, the partition alone, which gpu-check's
     * rehearsal must call a miss) */
    int rounds = tpb_test_fault("no-padding") ? 0 : TPB_PROBE_ROUNDS;
    for (int r = 0; be->green.ctx && !g->accumulate && r < rounds && emu > 0.0; r++) {
        if (fabs(ref / emu / f - 1.0) <= TPB_PROBE_CLOSE || ref / emu < f)
            break; /* hit, or already slower than asked (no padding makes it faster) */
        pad += (ref / f - emu) / bare;
        pad = pad < 0.0 ? 0.0 : pad;
        tpb_cuda_pad_set(&be->pads, g, pad);
        TPB_CHECK_RET(time_gemm(be, g, 1, &emu));
    }
    *achieved = emu > 0.0 ? ref / emu : 1.0;
    return TPB_OK;
}
