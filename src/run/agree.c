/* agree.c - agreeing on an error across ranks. */
#include "run/agree.h"

#include <stdio.h>
#include <string.h>

tpb_status_t tpb_agree(MPI_Comm comm, tpb_status_t local)
{
    int rank, size, first;
    TPB_MPI_RET(MPI_Comm_rank(comm, &rank), "error agreement");
    TPB_MPI_RET(MPI_Comm_size(comm, &size), "error agreement");
    int mine = local != TPB_OK ? rank : size;
    if (MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
        return tpb_err_call(TPB_ERR_MPI, "MPI_Allreduce", "error agreement", __FILE__, __LINE__);
    if (first == size)
        return TPB_OK;
    char msg[1024];
    int st = (int)local;
    snprintf(msg, sizeof(msg), "%s", tpb_err_msg());
    if (MPI_Bcast(&st, 1, MPI_INT, first, comm) != MPI_SUCCESS ||
        MPI_Bcast(msg, sizeof(msg), MPI_CHAR, first, comm) != MPI_SUCCESS)
        return tpb_err_call(TPB_ERR_MPI, "MPI_Bcast", "error agreement", __FILE__, __LINE__);
    if (!msg[0])
        snprintf(msg, sizeof(msg), "rank %d failed: %s", first, tpb_status_str(st));
    return tpb_err_set((tpb_status_t)st, "%s", msg);
}
