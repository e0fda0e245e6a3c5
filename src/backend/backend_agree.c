/* backend_agree.c - a backend open's outcome agreed over the world (backend.h:
 * tpb_backend_agree), apart from the registry: the backends use it, the registry uses them. */
#include <stdio.h>

#include "backend/backend.h"

tpb_status_t tpb_backend_agree(MPI_Comm world, tpb_status_t st)
{
    int rank = 0, size = 1, first;
    if (world == MPI_COMM_NULL)
        return st;
    MPI_Comm_rank(world, &rank);
    MPI_Comm_size(world, &size);
    int mine = st != TPB_OK ? rank : size, code = (int)st;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, world);
    if (first == size)
        return TPB_OK;
    char msg[1024];
    snprintf(msg, sizeof(msg), "%s", tpb_err_msg());
    MPI_Bcast(&code, 1, MPI_INT, first, world);
    MPI_Bcast(msg, sizeof(msg), MPI_CHAR, first, world);
    return tpb_err_set((tpb_status_t)code, "%s", msg);
}
