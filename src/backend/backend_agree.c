/* backend_agree.c - an error agreed over a communicator (backend.h: tpb_backend_agree): the
 * backends' opens and, through tpb_agree, every collective step of a run; apart from the
 * registry (the backends use it, the registry uses them). */
#include <stdio.h>

#include "backend/backend.h"
#include "base/stamp.h"

tpb_status_t tpb_backend_agree(MPI_Comm world, tpb_status_t st)
{
    int rank, size, first;
    if (world == MPI_COMM_NULL)
        return st;
    if (MPI_Comm_rank(world, &rank) != MPI_SUCCESS || MPI_Comm_size(world, &size) != MPI_SUCCESS)
        return tpb_err_call(TPB_ERR_MPI, "MPI_Comm_rank", "error agreement", __FILE__, __LINE__);
    int mine = st != TPB_OK ? rank : size, code = (int)st;
    tpb_stamp_peers(1);
    int rc = MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, world);
    tpb_stamp_peers(0);
    if (rc != MPI_SUCCESS)
        return tpb_err_call(TPB_ERR_MPI, "MPI_Allreduce", "error agreement", __FILE__, __LINE__);
    if (first == size)
        return TPB_OK;
    char msg[1024];
    snprintf(msg, sizeof(msg), "%s", tpb_err_msg());
    tpb_stamp_peers(1);
    rc = MPI_Bcast(&code, 1, MPI_INT, first, world);
    if (rc == MPI_SUCCESS)
        rc = MPI_Bcast(msg, sizeof(msg), MPI_CHAR, first, world);
    tpb_stamp_peers(0);
    if (rc != MPI_SUCCESS)
        return tpb_err_call(TPB_ERR_MPI, "MPI_Bcast", "error agreement", __FILE__, __LINE__);
    if (!msg[0])
        snprintf(msg, sizeof(msg), "rank %d failed: %s", first, tpb_status_str(code));
    tpb_err_set((tpb_status_t)code, "%s", msg);
    tpb_err_mark_agreed(); /* every rank holds it now */
    return (tpb_status_t)code;
}
