/* clock.c - local clock readings and offset correction (pure). */
#include "base/clock.h"

#include <math.h>
#include <time.h>

double tpb_clock_now_us(const tpb_clock_t *c)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3 + (c ? c->inject_offset_us : 0.0);
}

void tpb_spin_us(double us)
{
    if (!(us > 0.0))
        return;
    double end = tpb_clock_now_us(NULL) + us;
    while (tpb_clock_now_us(NULL) < end)
        ;
}

void tpb_stall_us(double us)
{
    if (!(us > 0.0))
        return;
    double end = tpb_clock_now_us(NULL) + us;
    if (us > 100.0) {
        double sleep_us = us - 50.0;
        struct timespec ts = {(time_t)(sleep_us / 1e6), (long)(fmod(sleep_us, 1e6) * 1e3)};
        nanosleep(&ts, NULL);
    }
    while (tpb_clock_now_us(NULL) < end)
        ;
}

double tpb_clock_correct(const tpb_clock_sample_t *a, const tpb_clock_sample_t *b, double t)
{
    if (!b || b->at_us == a->at_us)
        return t - a->offset_us;
    /* Both samples as seen on this rank's clock; interpolate the offset in t. */
    double ta = a->at_us + a->offset_us, tb = b->at_us + b->offset_us;
    double off = a->offset_us + (b->offset_us - a->offset_us) * (t - ta) / (tb - ta);
    return t - off;
}
