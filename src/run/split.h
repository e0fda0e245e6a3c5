/*
 * split.h - split orientations as a table, in the spirit of nccl-tests'
 * struct testColl: one small file per orientation owns its collective and
 * that collective's bus-bandwidth factor (as all_gather.cu keeps
 * AllGatherGetBw beside its run function), its buffer sizes, FLOPs, bytes
 * moved, input layout and the collective call. Adding an orientation (row +
 * reduce-scatter for sequence parallelism, say) is one new file and one line
 * in split.c. The shard dimension of a split is tpb_split_total
 * (base/partition.h).
 */
#ifndef TPB_SPLIT_H
#define TPB_SPLIT_H

#include "run/layer.h"

struct tpb_split_ops {
    tpb_split_t split; /**< the dimension of W that is cut */
    tpb_coll_t coll;   /**< the collective it runs */
    /** nccl-tests' bus-bandwidth factor of that collective over t ranks:
     *  busbw = algbw x factor (0 for t = 1). Pure. */
    double (*busbw_factor)(int t);
    /** Elements of X, W and the partial output on a rank whose shard is len. Pure. */
    void (*sizes)(const tpb_layer_desc_t *d, long len, double *nx, double *nw, double *np);
    /** FLOPs of the GEMM of a rank whose shard is len. Pure. */
    double (*flop)(const tpb_layer_desc_t *d, long len);
    /** Bytes of the whole collective's result (nccl-tests' S). Pure. */
    double (*coll_bytes)(const tpb_layer_desc_t *d);
    /** Fill this rank's inputs (X, W shard) and set up its GEMM in l->gemm. */
    tpb_status_t (*setup)(tpb_layer_t *l);
    /** The group's collective from the partial output into Y. */
    tpb_status_t (*collect)(tpb_layer_t *l);
    /** Element (i, j) of Y as the collective lays it out (offs: shard offsets). */
    double (*y_at)(const tpb_layer_t *l, const double *y, long i, long j, const long *offs);
};

extern const tpb_split_ops_t tpb_split_row, tpb_split_col_allgather, tpb_split_col_allreduce;

/** The orientation of a split and --col-collective (row always all-reduces). */
const tpb_split_ops_t *tpb_split_ops(tpb_split_t split, tpb_coll_t col_collective);

#endif /* TPB_SPLIT_H */
