/*
 * clock.h - one clock for every rank: local readings, and each rank's offset
 * to rank 0 estimated by min-RTT ping-pong (at the start and again later, for
 * a linear drift correction).
 */
#ifndef TPB_CLOCK_H
#define TPB_CLOCK_H

#include "base/tpb_status.h"

/** A rank's clock: CLOCK_MONOTONIC plus an injected offset (testing only). */
typedef struct {
    double inject_offset_us;
} tpb_clock_t;

/** Current time of clock c in microseconds. */
double tpb_clock_now_us(const tpb_clock_t *c);

/** Spin (busy-wait) for us microseconds: a deterministic, CPU-bound delay. */
void tpb_spin_us(double us);

/** Stall for us microseconds without holding the CPU (sleep, then spin the last
 *  50 us for precision): an injected delay that leaves the core to others. */
void tpb_stall_us(double us);

/** One rank's offset to rank 0, as estimated by the ping-pong exchange of least RTT. */
typedef struct {
    double offset_us; /**< this rank's clock minus rank 0's clock */
    double rtt_us;    /**< round-trip time of the exchange used (uncertainty: rtt/2) */
    double at_us;     /**< rank 0's clock at the middle of that exchange */
} tpb_clock_sample_t;

/**
 * A time t read on a rank's clock, moved onto rank 0's clock. The offset is
 * interpolated linearly between the samples a and b (b may be NULL or taken at
 * the same time as a: a constant offset).
 */
double tpb_clock_correct(const tpb_clock_sample_t *a, const tpb_clock_sample_t *b, double t);

#endif /* TPB_CLOCK_H */
