/* coll.c - which collective a layer runs. */
#include "run/coll.h"

const tpb_coll_ops_t *tpb_coll_of(tpb_split_t split, tpb_coll_t col_collective, tpb_seqpar_t sp)
{
    if (split == TPB_SPLIT_ROW)
        return sp == TPB_SEQPAR_ON ? &tpb_coll_reduce_scatter : &tpb_coll_allreduce;
    if (sp == TPB_SEQPAR_ON)
        return &tpb_coll_allgather_x;
    return col_collective == TPB_COLL_ALLREDUCE ? &tpb_coll_allreduce : &tpb_coll_allgather;
}
