/* stamp.c - this rank's progress as a few atomics (stamp.h). */
#include "base/stamp.h"

#include <stdatomic.h>
#include <stdio.h>

#include "base/clock.h"

static _Atomic double at_us;
static atomic_int phase, peers, config = -1;
static atomic_long iter = -1;
static const char *_Atomic call;

const char *tpb_phase_name(tpb_phase_t p)
{
    static const char *const names[] = {
        [TPB_PHASE_START] = "start-up",
        [TPB_PHASE_PLAN] = "planning",
        [TPB_PHASE_CALIBRATE] = "the calibration's GEMMs",
        [TPB_PHASE_INPUTS] = "generating inputs",
        [TPB_PHASE_SETUP] = "a config's set-up",
        [TPB_PHASE_PROBE] = "the emulation probe",
        [TPB_PHASE_WARMUP] = "the warm-up iterations",
        [TPB_PHASE_MEASURE] = "the measured iterations",
        [TPB_PHASE_CHECK] = "--check",
        [TPB_PHASE_GATHER] = "gathering the timelines",
        [TPB_PHASE_RECORD] = "writing the records",
        [TPB_PHASE_FLEET] = "the --fleet qualification",
        [TPB_PHASE_CLOSE] = "closing (communicators, buffers, the device)",
    };
    _Static_assert(sizeof(names) / sizeof(names[0]) == TPB_PHASE_COUNT, "a phase without a name");
    return p >= 0 && p < TPB_PHASE_COUNT ? names[p] : "an unknown phase";
}

static void now(void)
{
    atomic_store_explicit(&at_us, tpb_clock_now_us(NULL), memory_order_release);
}

void tpb_stamp(tpb_phase_t p)
{
    atomic_store_explicit(&phase, (int)p, memory_order_relaxed);
    atomic_store_explicit(&iter, -1L, memory_order_relaxed);
    atomic_store_explicit(&peers, 0, memory_order_relaxed);
    atomic_store_explicit(&call, NULL, memory_order_relaxed);
    now();
}

void tpb_stamp_progress(void)
{
    now();
}

void tpb_stamp_iter(long i)
{
    atomic_store_explicit(&iter, i, memory_order_relaxed);
    now();
}

void tpb_stamp_config(int id)
{
    atomic_store_explicit(&config, id, memory_order_relaxed);
    now();
}

void tpb_stamp_peers(int waiting)
{
    atomic_store_explicit(&peers, waiting, memory_order_relaxed);
    now();
}

void tpb_stamp_call(const char *c)
{
    atomic_store_explicit(&call, c, memory_order_relaxed);
    if (c)
        now();
}

static char first_error[512];
static atomic_int has_error;

void tpb_stamp_failed(const char *msg)
{
    int none = 0;
    if (msg && msg[0] && atomic_load(&has_error) == 0) {
        snprintf(first_error, sizeof(first_error), "%s", msg);
        atomic_compare_exchange_strong(&has_error, &none, 1);
    }
    tpb_stamp(TPB_PHASE_CLOSE);
}

const char *tpb_stamp_error(void)
{
    return atomic_load(&has_error) ? first_error : "";
}

void tpb_stamp_read(tpb_stamp_t *out)
{
    out->at_us = atomic_load_explicit(&at_us, memory_order_acquire);
    out->phase = (tpb_phase_t)atomic_load_explicit(&phase, memory_order_relaxed);
    out->peers = atomic_load_explicit(&peers, memory_order_relaxed);
    out->config = atomic_load_explicit(&config, memory_order_relaxed);
    out->iter = atomic_load_explicit(&iter, memory_order_relaxed);
    out->call = atomic_load_explicit(&call, memory_order_relaxed);
}

void tpb_stamp_describe(const tpb_stamp_t *s, char *out, unsigned long cap)
{
    int len = snprintf(out, cap, "%s", tpb_phase_name(s->phase));
    if (s->config >= 0 && len >= 0 && (unsigned long)len < cap)
        len += snprintf(out + len, cap - (unsigned long)len, " (config %d", s->config);
    if (s->config >= 0 && s->iter >= 0 && len >= 0 && (unsigned long)len < cap)
        len += snprintf(out + len, cap - (unsigned long)len, ", iteration %ld", s->iter);
    if (s->config >= 0 && len >= 0 && (unsigned long)len < cap)
        len += snprintf(out + len, cap - (unsigned long)len, ")");
    if (s->peers && len >= 0 && (unsigned long)len < cap)
        len += snprintf(out + len, cap - (unsigned long)len, ", waiting for the other ranks");
    if (s->call && len >= 0 && (unsigned long)len < cap)
        snprintf(out + len, cap - (unsigned long)len, ", inside %s", s->call);
}
