/*
 * signals.h - SIGTERM, SIGINT and SIGUSR1 (Slurm's time limit and --signal,
 * scancel, Ctrl-C) ask the run to stop at the next safe point: the handler
 * only records the signal; the sweep checks it, agreed by every rank, before
 * each config and before each calibration, and a calibration ends at its next
 * lock-step round. A timed loop is never interrupted: a config that outlasts
 * the launcher's grace period (mpirun: 1 s before SIGKILL) is lost.
 */
#ifndef TPB_SIGNALS_H
#define TPB_SIGNALS_H

#include <mpi.h>

#include "base/tpb_status.h"

/** Install the handlers (once, in main, after MPI_Init). */
void tpb_signals_install(void);

/** The signal received (0 if none). Async-signal-safe to read. */
int tpb_signal_received(void);

/**
 * Collective over comm: TPB_ERR_INTERRUPTED on every rank if any rank has
 * received a signal (message naming it), else TPB_OK.
 */
tpb_status_t tpb_signal_agree(MPI_Comm comm);

#endif /* TPB_SIGNALS_H */
