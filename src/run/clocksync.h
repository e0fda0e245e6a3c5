/*
 * clocksync.h - every rank's clock offset to rank 0 by min-RTT ping-pong (collective); the
 * offsets are applied with tpb_clock_correct (base/clock.h).
 *
 * tpb_clock_sync measures pairs down a binomial tree (base/clocktree.h): ceil(log2 P)
 * rounds of ping-pongs on any rank's critical path, the pairs of a round at once, and one
 * gather of the pairs to rank 0, which composes them (offsets and uncertainties added
 * along each path). tpb_clock_sync_serial is the algorithm it replaced, rank 0 pinging
 * every rank in turn (P - 1 pairs on its path), kept as the reference it is checked
 * against (tests/test_clock.c, bench/clocksync.c).
 */
#ifndef TPB_CLOCKSYNC_H
#define TPB_CLOCKSYNC_H

#include <mpi.h>

#include "base/clock.h"

/** A re-sync sample is kept only if its RTT is at most this many times the start's (+20 us). */
#define TPB_CLOCK_RTT_SLACK 4.0

/** Ping-pongs per pair and synchronisation. */
#define TPB_CLOCK_EXCHANGES 50

/**
 * Estimate every rank's offset to rank 0 with `exchanges` ping-pongs per pair of the tree
 * (rank 0's own sample is zero; a sample's rtt_us is the sum of its path's, its offset
 * within rtt/2 of the truth). Collective over comm; on rank 0 samples[size] receives all
 * samples, other ranks may pass NULL.
 */
tpb_status_t tpb_clock_sync(MPI_Comm comm, const tpb_clock_t *c, int exchanges,
                            tpb_clock_sample_t *samples);

/** The same by rank 0 pinging each other rank in turn (the reference). */
tpb_status_t tpb_clock_sync_serial(MPI_Comm comm, const tpb_clock_t *c, int exchanges,
                                   tpb_clock_sample_t *samples);

#endif /* TPB_CLOCKSYNC_H */
