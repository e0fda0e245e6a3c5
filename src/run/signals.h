/*
 * signals.h - a stop asked for from outside: SIGTERM, SIGINT, SIGHUP and SIGUSR1 (Slurm's
 * time limit and --signal, scancel, Ctrl-C, a closed terminal), and SIGPIPE (the table's
 * reader went away: tpb_signal_broken_pipe).
 *
 * They are blocked in every thread and taken by one thread of their own (sigwait), which
 * records the signal and, once, runs the stop action main registered: rank 0 writes the
 * run's record as "interrupted" at once and removes its lock, so that a launcher's SIGKILL
 * (mpirun: about a second after it forwards the signal) finds the run marked whatever the
 * ranks were doing. The sweep itself stops at its next safe point, agreed by every rank:
 * before each config and each calibration round, and between the iterations of a timed
 * loop every ~0.1 s (run/sweep_measure.c; the config in flight is dropped), a fleet's at
 * the end of each phase.
 * SIGPIPE and SIGXFSZ are ignored so that a write fails with EPIPE or EFBIG (a file larger
 * than ulimit -f), handled like a full disk, instead of killing the process mid-write.
 */
#ifndef TPB_SIGNALS_H
#define TPB_SIGNALS_H

#include <mpi.h>

#include "base/tpb_status.h"

/** Block the stop signals and ignore SIGPIPE and SIGXFSZ: in main, before MPI_Init, so that
 *  every thread MPI starts inherits the mask. */
void tpb_signals_block(void);

/** Start the thread that takes the signals (after MPI_Init). TPB_ERR_NOMEM if it cannot. */
tpb_status_t tpb_signals_start(void);

/** The action run once, in the signal thread, when the first stop signal arrives (NULL:
 *  none). It must only take the locks it documents and never call MPI. Setting it waits for
 *  a running action to end: after tpb_signals_on_stop(NULL, NULL) none runs. */
void tpb_signals_on_stop(void (*fn)(int sig, void *ctx), void *ctx);

/** A write to the table failed with EPIPE: a stop as SIGPIPE (the action runs here). */
void tpb_signal_broken_pipe(void);

/** The signal received (0 if none). */
int tpb_signal_received(void);

/** The ranks agreed that signal `any` was received somewhere (0: none): TPB_ERR_INTERRUPTED
 *  with the message tpb_signal_agree gives (and `any` taken as this rank's signal), or
 *  TPB_OK. For a caller that agreed by its own collective. */
tpb_status_t tpb_signal_stopped(int any);

/**
 * Collective over comm: TPB_ERR_INTERRUPTED on every rank if any rank has
 * received a signal (message naming it), else TPB_OK.
 */
tpb_status_t tpb_signal_agree(MPI_Comm comm);

#endif /* TPB_SIGNALS_H */
