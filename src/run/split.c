/* split.c - the table of split orientations. */
#include "run/split.h"

const tpb_split_ops_t *tpb_split_ops(tpb_split_t split, tpb_colcoll_t colcoll)
{
    if (split == TPB_SPLIT_ROW)
        return &tpb_split_row;
    return colcoll == TPB_COLCOLL_ALLREDUCE ? &tpb_split_col_allreduce : &tpb_split_col_allgather;
}

double tpb_split_output_bytes(const tpb_layer_desc_t *d)
{
    return (double)d->m * (double)d->n * (double)tpb_dtype_out_size(d->dtype);
}
