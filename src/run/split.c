/* split.c - the table of split orientations. */
#include "run/split.h"

const tpb_split_ops_t *tpb_split_ops(tpb_split_t split, tpb_coll_t col_collective)
{
    if (split == TPB_SPLIT_ROW)
        return &tpb_split_row;
    return col_collective == TPB_COLL_ALLREDUCE ? &tpb_split_col_allreduce
                                                : &tpb_split_col_allgather;
}
