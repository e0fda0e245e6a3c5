/* plan_share.c - a --shards-from plan read and parsed by rank 0 alone and passed to the
 * others packed (plan.h: tpb_plan_share_shards): one rank's memory and time for a plan,
 * not every rank's. */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/infile.h"
#include "run/agree.h"
#include "run/plan.h"

tpb_status_t tpb_plan_share_shards(MPI_Comm world, int rank, int size, const char *path,
                                   tpb_shardplan_t *out)
{
    char *buf = NULL;
    size_t len = 0;
    tpb_status_t st = TPB_OK;
    memset(out, 0, sizeof(*out));
    if (rank == 0) {
        st = tpb_shardplan_load(path, tpb_shardplan_max_bytes(size), out);
        if (st == TPB_OK)
            st = tpb_shardplan_pack(out, &buf, &len);
        if (st == TPB_OK && len > INT_MAX)
            st = tpb_err_set(TPB_ERR_INVALID,
                             "--shards-from %s: %zu bytes packed, more than "
                             "one message takes",
                             path, len);
    }
    st = tpb_agree(world, st);
    uint64_t n = len;
    if (st == TPB_OK && MPI_Bcast(&n, 1, MPI_UINT64_T, 0, world) != MPI_SUCCESS)
        st = tpb_err_call(TPB_ERR_MPI, "MPI_Bcast", "--shards-from", __FILE__, __LINE__);
    if (st == TPB_OK && rank != 0 && !(buf = malloc(n ? n : 1)))
        st = tpb_err_set(TPB_ERR_NOMEM, "out of memory for a shard plan of %llu bytes",
                         (unsigned long long)n);
    st = tpb_agree(world, st);
    if (st == TPB_OK && MPI_Bcast(buf, (int)n, MPI_BYTE, 0, world) != MPI_SUCCESS)
        st = tpb_err_call(TPB_ERR_MPI, "MPI_Bcast", "--shards-from", __FILE__, __LINE__);
    if (st == TPB_OK && rank != 0)
        st = tpb_shardplan_unpack(buf, (size_t)n, out);
    free(buf);
    st = tpb_agree(world, st);
    if (st != TPB_OK)
        tpb_shardplan_free(out);
    return st;
}
