/*
 * layer.h - one tensor-parallel linear layer on one rank: its buffers, one
 * timed iteration (compute, collective, three marks) and the --check.
 *
 *   W is stored transposed (N x K, [out, in] as in torch.nn.Linear).
 *   A layer is an orientation (run/orient.h: which dimension of W is cut, the GEMM)
 *   and a collective (run/coll.h: all-reduce, all-gather, reduce-scatter, or the
 *   all-gather of X of sequence parallelism).
 *   comm-only: the collective on seeded buffers, without the GEMM.
 *   --overlap chunked: M cut into C chunks (rows of X, the partial and Y); chunk i's
 *        collective runs while chunk i+1 computes.
 *   --cost-profile: W is block-sparse along the split dimension; a rank runs one
 *        GEMM per block of its shard over the block's non-zero part only (col:
 *        the first kept K entries; row: the first kept N columns, accumulated).
 */
#ifndef TPB_LAYER_H
#define TPB_LAYER_H

#include "backend/backend.h"
#include "base/config_key.h"
#include "base/costprofile.h"
#include "base/marks.h"
#include "run/inputs.h"

/** A split orientation (run/orient.h) and a collective (run/coll.h). */
typedef struct tpb_orient_ops tpb_orient_ops_t;
typedef struct tpb_coll_ops tpb_coll_ops_t;

/** What one rank needs to know to run its part of a config. */
typedef struct {
    /* the config's identity (base/config_key.h): m, n, k; tp, the group size t; chunks, M cut
     * into this many chunks (--overlap chunked), each chunk's collective beside the next
     * one's GEMM, 0 serial; comm_only, no X, W or GEMM (--comm-only: the collective's input
     * is seeded data, a 1 x n message split along n for both splits); the split, sequence
     * parallelism, policy and placement it was planned for */
    TPB_CONFIG_KEY;
    const tpb_orient_ops_t *orient; /**< which dimension of W is cut (tpb_orient_of) */
    const tpb_coll_ops_t *coll;     /**< the collective (tpb_coll_of) */
    tpb_dtype_t dtype;
    int group_rank;     /**< this rank's index in its group */
    const long *shards; /**< t shard sizes along N (col) or K (row) */
    uint64_t seed;
    const tpb_cost_profile_t *profile; /**< --cost-profile: W block-sparse along the split
                                            dimension (base/costprofile.h); NULL: dense */
    long granularity;                  /**< the shard unit (the profile's block edges) */
    int polls;                         /**< pieces of a chunk's GEMM, a progress call after each */
    tpb_marks_layout_t marks;          /**< where its marks go (base/marks.h) */
} tpb_layer_desc_t;

typedef struct tpb_layer tpb_layer_t;

/** The seeded matrices d's layer draws its shards from (X, then W; none for --comm-only),
 *  for tpb_inputs_prepare; their count. Pure. */
int tpb_layer_inputs(const tpb_layer_desc_t *d, tpb_inputs_block_t m[2]);

/** Bytes this rank needs on the backend for the config. Pure. */
double tpb_layer_bytes(const tpb_layer_desc_t *d);

/** FLOPs of this rank's GEMM (2 M N k_r or 2 M n_r K; block-sparse: the blocks' non-zero
 *  parts only). Pure. */
double tpb_layer_rank_flop(const tpb_layer_desc_t *d);

/** FLOPs of the whole layer over the group: the sum of every group rank's. Pure. */
double tpb_layer_flop(const tpb_layer_desc_t *d);

/**
 * Allocate and fill this rank's buffers (random normal inputs from d->seed), and run
 * one untimed iteration (a backend's per-shape set-up and its errors happen here, where
 * every rank agrees on them). Fails with TPB_ERR_NOMEM naming the shape and the bytes
 * needed and free if the config does not fit. dev and comm (the group's communicator)
 * are borrowed. *out is set only on success.
 */
tpb_status_t tpb_layer_create(tpb_device_t *dev, tpb_comm_t *comm, const tpb_layer_desc_t *d,
                              tpb_layer_t **out);

void tpb_layer_destroy(tpb_layer_t *l);

/** The layer's GEMM, as the backend runs it (for the emulation probe; borrowed); a
 *  block-sparse layer's first block GEMM, which leaves the layer's result as it is. */
const tpb_gemm_t *tpb_layer_gemm(const tpb_layer_t *l);

/**
 * Iteration `slot`: mark c0, GEMM (plus delay_us of injected delay), mark c1,
 * collective, mark x1 (slots of base/marks.h). With record == 0 no marks are taken
 * (--timeline off). The marks must be prepared by the caller.
 */
tpb_status_t tpb_layer_iter(tpb_layer_t *l, size_t slot, double delay_us, int record);

/** The layer's GEMMs once more, untimed and not waited for (its chunk pieces too): after the
 *  emulation probe has set a GPU's padding, whose GEMMs' plans are then built here, not in a
 *  loop. Not collective. */
tpb_status_t tpb_layer_warm(tpb_layer_t *l);

/** --overlap chunked, outside the timed loop: the whole shard's GEMM; the chunks' GEMMs
 *  without collectives; the chunks' collectives alone; the serial collective alone. */
tpb_status_t tpb_layer_gemm_whole(tpb_layer_t *l);
tpb_status_t tpb_layer_gemm_chunks(tpb_layer_t *l);
tpb_status_t tpb_layer_comm_chunks(tpb_layer_t *l);
tpb_status_t tpb_layer_comm_whole(tpb_layer_t *l);

/**
 * Compare what this rank holds of Y (after an iteration) with an fp64 reference at sampled
 * rows and columns (layer_check.c: every shard, chunk and row-block boundary, and seeded random
 * ones), computed from the generator's global indices and the dtype's quantisation, never from
 * what the device holds. all = 1: every sampled row it holds; 0: every tp-th of them from its
 * group rank's on (where every rank of the group holds the same Y, the group shares the work).
 * *max_rel_err = max |Y - ref| / max |ref| over what it compared. The chunked path is checked
 * as it ran: call it right after the measured loop. TPBAL_TEST_FAULT=chunk-offset (tests only)
 * moves the second chunk's collective by one row, and TPBAL_TEST_FAULT=shard-offset group rank
 * 1's W shard by one row or column: this check must catch both.
 */
tpb_status_t tpb_layer_check(tpb_layer_t *l, int all, double *max_rel_err);

/** --check's sampled rows and columns of config d (malloc'd, sorted, each once). Pure. */
tpb_status_t tpb_check_samples(const tpb_layer_desc_t *d, long **rows, int *nr, long **cols,
                               int *ncol);

/** The fp64 reference Y[rows[i]][cols[j]] into ref[nr x ncol], from the generator's global
 *  indices (quantised to d's dtype, the cost profile's zeros applied). Pure. */
tpb_status_t tpb_check_reference(const tpb_layer_desc_t *d, const long *rows, int nr,
                                 const long *cols, int ncol, double *ref);

/**
 * A 64-bit hash (FNV-1a) of the bytes of this rank's Y after an iteration: where the
 * collective leaves every rank of the group the same Y (an all-reduce, an all-gather), a
 * rank whose hash differs from group rank 0's is checked itself (tpb_layer_check).
 */
tpb_status_t tpb_layer_result_hash(tpb_layer_t *l, uint64_t *hash);

#endif /* TPB_LAYER_H */
