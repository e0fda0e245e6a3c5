/*
 * gpu_marks.c - timer marks of a GPU backend: device events on the GEMM and
 * comm streams, placed on the host clock by two anchors per stream (one when
 * the marks are prepared, one when they are read) and the GPU timer's drift
 * between them. Also the set-up and release of what the generic layer holds.
 */
#include <stdlib.h>

#include "backend/gpu/gpu.h"
#include "base/stamp.h"

tpb_status_t tpb_gpu_init(tpb_gpu_t *g)
{
    TPB_CHECK_RET(g->v->event_create(g, TPB_GPU_GEMM, 0, &g->gemm_done));
    TPB_CHECK_RET(g->v->event_create(g, TPB_GPU_COMM, 0, &g->comm_done));
    for (int s = 0; s < 2; s++) {
        for (int a = 0; a < 2; a++)
            TPB_CHECK_RET(g->v->event_create(g, s, 1, &g->anchor[a][s]));
        TPB_CHECK_RET(g->v->event_create(g, s, 1, &g->anchor_spare[s]));
    }
    return TPB_OK;
}

void tpb_gpu_free(tpb_gpu_t *g, void (*plan)(void *))
{
    tpb_gpu_plans_free(&g->plans, plan);
    for (size_t i = 0; i < g->nevents; i++) {
        g->v->event_destroy(g->ev[0][i]);
        g->v->event_destroy(g->ev[1][i]);
    }
    free(g->ev[0]);
    free(g->ev[1]);
    free(g->event_stream);
    void *ev[8] = {g->gemm_done,    g->comm_done,    g->anchor[0][0],    g->anchor[0][1],
                   g->anchor[1][0], g->anchor[1][1], g->anchor_spare[0], g->anchor_spare[1]};
    for (int i = 0; i < 8; i++)
        if (ev[i])
            g->v->event_destroy(ev[i]);
    g->v->host_free(g->host_send);
    g->v->host_free(g->host_recv_base);
}

/* Grow both event pools to n (each in its stream's context). */
static tpb_status_t grow_events(tpb_gpu_t *g, size_t n)
{
    for (int p = 0; p < 2; p++) {
        void **ev = realloc(g->ev[p], n * sizeof(*ev));
        if (!ev)
            return tpb_err_set(TPB_ERR_NOMEM, "gpu backend: no memory for %zu marks", n);
        g->ev[p] = ev;
    }
    unsigned char *es = realloc(g->event_stream, n);
    if (!es)
        return tpb_err_set(TPB_ERR_NOMEM, "gpu backend: no memory for %zu marks", n);
    g->event_stream = es;
    for (; g->nevents < n; g->nevents++) {
        es[g->nevents] = 0; /* a mark never recorded reads as an error, not a wild pool */
        g->ev[1][g->nevents] = NULL;
        TPB_CHECK_RET(g->v->event_create(g, TPB_GPU_GEMM, 1, &g->ev[0][g->nevents]));
        tpb_status_t st = g->v->event_create(g, TPB_GPU_COMM, 1, &g->ev[1][g->nevents]);
        if (st != TPB_OK) {
            g->v->event_destroy(g->ev[0][g->nevents]);
            return st;
        }
    }
    return TPB_OK;
}

/* One try at stream s's anchor (its context current): ev recorded on the idle stream and waited
 * for; its host time the midpoint of host reads before the record and after the wait (the
 * wait's wake-up latency would otherwise make every mark late), which lies within half the
 * reads' distance (width) of the event. */
static tpb_status_t anchor_try(tpb_gpu_t *g, void *ev, int s, double *mid, double *width)
{
    double before = tpb_clock_now_us(g->args.clock);
    tpb_status_t st = g->v->event_record(g, ev, s);
    tpb_stamp_call("an event synchronize (an anchor on an idle stream)");
    if (st == TPB_OK)
        st = g->v->event_sync(ev);
    tpb_stamp_call(NULL);
    double after = tpb_clock_now_us(g->args.clock);
    *mid = 0.5 * (before + after);
    *width = after - before;
    return st;
}

/* Anchor a of both streams: of ANCHOR_TRIES tries, the one whose host reads lie closest
 * together. A host thread preempted between its reads (a loaded host) puts them far apart and
 * the midpoint off by up to half of that, and the two streams' anchors, hence their marks,
 * out of step (x1 before c1: run/sweep_measure.c); tests/standin's TPBAL_STANDIN_PREEMPT_US
 * shows it. Each try is recorded on the spare event, which the anchor takes where it is the
 * better one. */
static tpb_status_t take_anchor(tpb_gpu_t *g, int a)
{
    enum { ANCHOR_TRIES = 3 };
    for (int s = 0; s < 2; s++) {
        tpb_status_t st = TPB_OK;
        double best = -1.0, mid, width;
        g->v->enter(g, s);
        for (int t = 0; t < ANCHOR_TRIES && st == TPB_OK; t++) {
            st = anchor_try(g, g->anchor_spare[s], s, &mid, &width);
            if (st == TPB_OK && (best < 0.0 || width < best)) {
                void *ev = g->anchor[a][s];
                g->anchor[a][s] = g->anchor_spare[s];
                g->anchor_spare[s] = ev;
                g->anchor_us[a][s] = mid;
                g->anchor_half_us[a][s] = 0.5 * width;
                best = width;
            }
        }
        g->v->leave(g, s);
        TPB_CHECK_RET(st);
    }
    return TPB_OK;
}

tpb_status_t tpb_gpu_marks_prepare(tpb_device_t *dev, size_t n)
{
    tpb_gpu_t *g = (tpb_gpu_t *)dev;
    TPB_CHECK_RET(tpb_gpu_wait(g, 0));
    if (n > g->nevents)
        TPB_CHECK_RET(grow_events(g, n));
    return take_anchor(g, 0);
}

/* Record mark slot on stream s, in its pool (its context current). */
static tpb_status_t record(tpb_gpu_t *g, size_t slot, int s)
{
    g->event_stream[slot] = (unsigned char)s;
    g->v->enter(g, s);
    tpb_status_t st = g->v->event_record(g, g->ev[s][slot], s);
    g->v->leave(g, s);
    return st;
}

tpb_status_t tpb_gpu_mark_comm(tpb_gpu_t *g, size_t slot)
{
    return record(g, slot, g->apart ? TPB_GPU_COMM : TPB_GPU_GEMM);
}

/* The start gate lets go once the events that close the queued GEMMs are queued too (c1, a
 * chunk's end, and x1, the iteration's end): let go earlier, a short GEMM can finish before the
 * host records them, which then stamp the host's latency (bf16 1024^3 on the H200: 7.9 us a
 * step against the bare loop's 6.1; tests/standin's TPBAL_STANDIN_RECORD_LAG_US shows it). A
 * compute phase closed by c1 alone (no x1: the overlap parts) lets go at the next c0, and every
 * wait for the GPU lets go first. */
static void gate_let_go(tpb_gpu_t *g)
{
    if (g->release_due || g->gemm_queued)
        g->v->gate_release(g);
    g->release_due = g->gemm_queued = 0;
}

/* Compute marks (c0, c1) on the GEMM stream, collective marks (x1) on the comm stream: with
 * emulation the two differ, and c0 must be ordered before the GEMM, not after the last
 * collective. */
tpb_status_t tpb_gpu_mark(tpb_device_t *dev, size_t slot, tpb_mark_phase_t phase)
{
    tpb_gpu_t *g = (tpb_gpu_t *)dev;
    if (phase == TPB_MARK_COMPUTE_BEGIN) { /* c0 on an idle stream: held until it is closed */
        gate_let_go(g);                    /* the previous compute phase's, if no x1 followed it */
        TPB_CHECK_RET(g->v->gate_arm(g, TPB_GPU_GEMM));
    }
    if (phase == TPB_MARK_COMM_BEGIN) { /* a collective alone: its stream held until its end */
        gate_let_go(g);
        TPB_CHECK_RET(g->v->gate_arm(g, g->apart ? TPB_GPU_COMM : TPB_GPU_GEMM));
        g->release_due = 1; /* its end mark (TPB_MARK_COMM) lets go */
        return record(g, slot, g->apart ? TPB_GPU_COMM : TPB_GPU_GEMM);
    }
    if (phase == TPB_MARK_COMM && g->apart) {
        /* x1 is the end of the iteration: after its GEMMs too, also where no collective
         * ordered the comm stream after them (TP 1, emulating or chunked: an x1 before its
         * c0 was seen) */
        TPB_CHECK_RET(tpb_gpu_comm_after_gemm(g));
        tpb_status_t st = record(g, slot, TPB_GPU_COMM);
        gate_let_go(g); /* the iteration's marks are queued */
        return st;
    }
    TPB_CHECK_RET(tpb_gpu_gemm_after_comm(g)); /* c0 after the collective the GEMM waits for */
    tpb_status_t st = record(g, slot, TPB_GPU_GEMM);
    if (phase == TPB_MARK_COMPUTE_END && g->gemm_queued)
        g->release_due = 1; /* closed: let go at x1 (TP 1's follows on this stream) */
    if (phase == TPB_MARK_COMM)
        gate_let_go(g);
    return st;
}

/* Marks on the host clock: the GPU's elapsed time from the first anchor, scaled by the
 * drift of the GPU timer against the host clock between the two anchors. */
tpb_status_t tpb_gpu_marks_read(tpb_device_t *dev, size_t n, double *us)
{
    tpb_gpu_t *g = (tpb_gpu_t *)dev;
    TPB_CHECK_RET(tpb_gpu_wait(g, 1));
    TPB_CHECK_RET(take_anchor(g, 1)); /* the streams are idle now */
    double scale[2];
    for (int s = 0; s < 2; s++) {
        float span = 0.0f;
        TPB_CHECK_RET(g->v->event_elapsed_ms(g->anchor[0][s], g->anchor[1][s], &span));
        double host = g->anchor_us[1][s] - g->anchor_us[0][s];
        scale[s] = span > 0.0f && host > 0.0 ? host / (1e3 * (double)span) : 1.0;
    }
    for (size_t i = 0; i < n; i++) {
        float ms = 0.0f;
        int s = g->event_stream[i];
        TPB_CHECK_RET(g->v->event_elapsed_ms(g->anchor[0][s], g->ev[s][i], &ms));
        us[i] = g->anchor_us[0][s] + 1e3 * (double)ms * scale[s];
    }
    return TPB_OK;
}

/* A mark lies on the line through its stream's two anchors, each within half its bracket of
 * its event: between them, within the larger half of that stream's; the streams the marks were
 * recorded on, both where they are apart. */
double tpb_gpu_marks_within(tpb_device_t *dev)
{
    tpb_gpu_t *g = (tpb_gpu_t *)dev;
    double w = 0.0;
    for (int s = 0; s < (g->apart ? 2 : 1); s++)
        for (int a = 0; a < 2; a++)
            w = g->anchor_half_us[a][s] > w ? g->anchor_half_us[a][s] : w;
    return w;
}
