/*
 * dryrun.h - --dry-run: the configs a command line would measure, resolved for
 * its backend (no device opened, nothing written), so that a command prepared
 * for a GPU machine can be checked on any machine: bench/gpu-check.sh --dry-run
 * runs every step's command through it.
 */
#ifndef TPB_DRYRUN_H
#define TPB_DRYRUN_H

#include <mpi.h>
#include <stdio.h>

#include "base/topo.h"
#include "cli/options.h"

/**
 * Build the plans of o on topo (as a run would) and, when out is not NULL (rank 0),
 * print one line per config and closing lines naming the backend and the count, and the
 * whole run's time estimate (run/estimate.h) at the backend's rate guess, taken on every
 * rank of world at once (the host's is measured: ranks that share cores slow each other
 * as in the run) and the slowest kept (collective). TPB_ERR_NOMEM only.
 */
tpb_status_t tpb_dry_run(MPI_Comm world, const tpb_options_t *o, const tpb_topo_t *topo, FILE *out);

#endif /* TPB_DRYRUN_H */
