/* agree.c - agreeing on an error across ranks. */
#include "run/agree.h"

#include "backend/backend.h"

tpb_status_t tpb_agree(MPI_Comm comm, tpb_status_t local)
{
    return tpb_backend_agree(comm, local); /* one implementation, below the backends */
}
