/*
 * agree.h - every rank reaches the same verdict. A status seen on some ranks
 * is turned into the same status on every rank, with the message of the
 * lowest failing rank, so that rank 0 can print one line and all ranks exit
 * alike without anyone hanging in a collective.
 */
#ifndef TPB_AGREE_H
#define TPB_AGREE_H

#include <mpi.h>

#include "base/stamp.h"
#include "base/tpb_status.h"

/**
 * Collective over comm. Returns TPB_OK if local is TPB_OK everywhere; else
 * the status of the lowest failing rank, whose message becomes every rank's
 * recorded message (tpb_err_msg()).
 */
tpb_status_t tpb_agree(MPI_Comm comm, tpb_status_t local);

/**
 * Return TPB_ERR_MPI from the enclosing function when an MPI call (evaluated
 * once) does not return MPI_SUCCESS, with "<call> failed: <what> (file:line,
 * rank, host)" as the message. For every MPI call in run/.
 */
#define TPB_MPI_RET(call, what)                                                                    \
    do {                                                                                           \
        tpb_stamp_peers(1); /* a wait for the other ranks (the watchdog's stamp) */                \
        int tpb_mpi_rc_ = (call);                                                                  \
        tpb_stamp_peers(0);                                                                        \
        if (tpb_mpi_rc_ != MPI_SUCCESS)                                                            \
            return tpb_err_call(TPB_ERR_MPI, #call, what, __FILE__, __LINE__);                     \
    } while (0)

#endif /* TPB_AGREE_H */
