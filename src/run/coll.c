/* coll.c - which collective a layer runs: the kind the split and sequence parallelism ask
 * for, then its ops table by a switch without a default (a new kind fails the build here
 * until it has one: tests/dispatch.sh). */
#include "run/coll.h"

const tpb_coll_ops_t *tpb_coll_of(tpb_split_t split, tpb_coll_t col_collective, tpb_seqpar_t sp)
{
    int seqpar = sp == TPB_SEQPAR_ON;
    tpb_coll_t kind = split == TPB_SPLIT_ROW
                          ? (seqpar ? TPB_COLL_REDUCE_SCATTER : TPB_COLL_ALLREDUCE)
                      : seqpar ? TPB_COLL_ALLGATHER
                               : col_collective;
    switch (kind) {
    case TPB_COLL_ALLGATHER: return seqpar ? &tpb_coll_allgather_x : &tpb_coll_allgather;
    case TPB_COLL_ALLREDUCE: return &tpb_coll_allreduce;
    case TPB_COLL_REDUCE_SCATTER: return &tpb_coll_reduce_scatter;
    }
    return &tpb_coll_allreduce; /* not a kind */
}
