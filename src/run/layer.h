/*
 * layer.h - one tensor-parallel linear layer on one rank: its buffers, one
 * timed iteration (compute, collective, three marks) and the --check.
 *
 *   W is stored transposed (N x K, [out, in] as in torch.nn.Linear).
 *   col: W split along N. Rank r computes Y_r = X W[:, n_r] (M x n_r), then the
 *        group all-gathers the Y_r (blocks in rank order) - or, with
 *        --col-collective allreduce, writes its columns into a zeroed M x N
 *        buffer that the group all-reduces.
 *   comm-only: the same collectives on seeded buffers, without the GEMM.
 *   row: W split along K and X along its columns. Rank r computes the partial
 *        P_r = X[:, k_r] W[k_r, :] (M x N) and the group all-reduces the sum.
 *   --overlap chunked: M cut into C chunks (rows of X, the partial and Y); chunk i's
 *        collective runs while chunk i+1 computes.
 *   --cost-profile: W is block-sparse along the split dimension; a rank runs one
 *        GEMM per block of its shard over the block's non-zero part only (col:
 *        the first kept K entries; row: the first kept N columns, accumulated).
 */
#ifndef TPB_LAYER_H
#define TPB_LAYER_H

#include "backend/backend.h"
#include "base/costprofile.h"

/** A split orientation and its collective (run/split.h). */
typedef struct tpb_split_ops tpb_split_ops_t;

/** What one rank needs to know to run its part of a config. */
typedef struct {
    const tpb_split_ops_t *split; /**< orientation and collective (a tpb_split_ops() entry) */
    long m, n, k;
    tpb_dtype_t dtype;
    int tp;             /**< group size t */
    int group_rank;     /**< this rank's index in its group */
    const long *shards; /**< t shard sizes along N (col) or K (row) */
    uint64_t seed;
    int comm_only; /**< --comm-only: no X, W or GEMM; the collective's input is seeded data
                        (a 1 x n message split along n for both splits) */
    const tpb_cost_profile_t *profile; /**< --cost-profile: W block-sparse along the split
                                            dimension (base/costprofile.h); NULL: dense */
    long granularity;                  /**< the shard unit (the profile's block edges) */
    int chunks;         /**< --overlap chunked: M cut into this many chunks, each chunk's
                             collective beside the next one's GEMM; 0: serial */
    int polls;          /**< pieces of a chunk's GEMM, a progress call after each */
    size_t chunk_marks; /**< first mark slot of the chunks' marks (3 per chunk and slot:
                             GEMM begin, GEMM end, collective end) */
} tpb_layer_desc_t;

typedef struct tpb_layer tpb_layer_t;

/** Bytes this rank needs on the backend for the config. Pure. */
double tpb_layer_bytes(const tpb_layer_desc_t *d);

/** FLOPs of this rank's GEMM (2 M N k_r or 2 M n_r K; block-sparse: the blocks' non-zero
 *  parts only). Pure. */
double tpb_layer_rank_flop(const tpb_layer_desc_t *d);

/** FLOPs of the whole layer over the group: the sum of every group rank's. Pure. */
double tpb_layer_flop(const tpb_layer_desc_t *d);

/**
 * Allocate and fill this rank's buffers (random normal inputs from d->seed).
 * Fails with TPB_ERR_NOMEM naming the shape and the bytes needed and free if
 * the config does not fit. comm is the group's backend communicator (borrowed).
 * *out is set only on success.
 */
tpb_status_t tpb_layer_create(const tpb_backend_ops_t *ops, tpb_backend_t *be, tpb_comm_t *comm,
                              const tpb_layer_desc_t *d, tpb_layer_t **out);

void tpb_layer_destroy(tpb_layer_t *l);

/** The layer's GEMM, as the backend runs it (for the emulation probe; borrowed); a
 *  block-sparse layer's first block GEMM, which leaves the layer's result as it is. */
const tpb_gemm_t *tpb_layer_gemm(const tpb_layer_t *l);

/**
 * One iteration: mark 3*slot, GEMM (plus delay_us of injected delay), mark
 * 3*slot+1, collective, mark 3*slot+2. With record == 0 no marks are taken
 * (--timeline off). The marks must be prepared by the caller.
 */
tpb_status_t tpb_layer_iter(tpb_layer_t *l, size_t slot, double delay_us, int record);

/** --overlap chunked, outside the timed loop: the whole shard's GEMM; the chunks' GEMMs
 *  without collectives; the chunks' collectives alone; the serial collective alone. */
tpb_status_t tpb_layer_gemm_whole(tpb_layer_t *l);
tpb_status_t tpb_layer_gemm_chunks(tpb_layer_t *l);
tpb_status_t tpb_layer_comm_chunks(tpb_layer_t *l);
tpb_status_t tpb_layer_comm_whole(tpb_layer_t *l);

/** Mark slot of chunk j's mark k (0 GEMM begin, 1 GEMM end, 2 collective end) in slot. */
static inline size_t tpb_layer_chunk_mark(const tpb_layer_desc_t *d, size_t slot, int j, int k)
{
    return d->chunk_marks + (slot * (size_t)d->chunks + (size_t)j) * 3 + (size_t)k;
}

/**
 * Compare Y (after an iteration) with a single-rank fp64 reference of the same
 * seeded (and dtype-quantised) inputs. *max_rel_err = max |Y - ref| / max |ref|.
 */
tpb_status_t tpb_layer_check(tpb_layer_t *l, double *max_rel_err);

#endif /* TPB_LAYER_H */
