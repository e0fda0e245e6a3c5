/*
 * clocksync.h - every rank's clock offset to rank 0 by min-RTT ping-pong
 * (collective); the offsets are applied with tpb_clock_correct (base/clock.h).
 */
#ifndef TPB_CLOCKSYNC_H
#define TPB_CLOCKSYNC_H

#include <mpi.h>

#include "base/clock.h"

/** A re-sync sample is kept only if its RTT is at most this many times the start's (+20 us). */
#define TPB_CLOCK_RTT_SLACK 4.0

/** Ping-pongs per rank and synchronisation. */
#define TPB_CLOCK_EXCHANGES 50

/**
 * Estimate every rank's offset with `exchanges` ping-pongs between rank 0 and
 * each other rank in turn (rank 0's own sample is zero). Collective over comm;
 * on rank 0 samples[size] receives all samples, other ranks may pass NULL.
 */
tpb_status_t tpb_clock_sync(MPI_Comm comm, const tpb_clock_t *c, int exchanges,
                            tpb_clock_sample_t *samples);

#endif /* TPB_CLOCKSYNC_H */
