/*
 * answer_model.h - the closing answer as data: what the run decided, built once from the
 * finished configs (answer.c) and rendered from the same values to the terminal's '#' lines
 * (answer_text.c) and the JSON summary's answer items (answer_json.c). Per shape, its
 * (TP degree, placement) groups with the fastest config, each policy's verdict over even
 * and the stragglers its configs named; per TP degree the run's persistent straggler; the
 * calibration's worst spread; per shape the two use lines (latency, throughput) with how
 * sure each pick is. The configs are pointed at, not copied: the model lives no longer
 * than the history it was built from.
 */
#ifndef TPB_ANSWER_MODEL_H
#define TPB_ANSWER_MODEL_H

#include "record/answer.h"

/** A policy other than even, and its verdict over its group's even config. */
typedef struct {
    const tpb_history_t *h;
    tpb_policy_verdict_t v;
} tpb_answer_policy_t;

/** How a straggler one config named stands over the run's blocks at its TP degree. */
typedef enum {
    TPB_LATE_PERSISTENT, /**< the run's persistent straggler: slower over the whole run */
    TPB_LATE_TRANSIENT,  /**< the blocks could have named it and did not: a passing slowdown */
    TPB_LATE_UNDECIDED   /**< the blocks could not have named anyone: not enough data */
} tpb_late_t;

/** A config whose straggler stood out from noise (its straggler_world >= 0). */
typedef struct {
    const tpb_history_t *h;
    tpb_late_t late;
} tpb_answer_straggler_t;

/** One (shape, sizes, TP degree, placement) group: its items are pol[pol0, pol0 + npol)
 *  and str[str0, str0 + nstr) of the answer, in the order measured. */
typedef struct {
    const tpb_history_t *first; /**< the group's first config (its key names the group) */
    const tpb_history_t *best;  /**< its fastest config */
    const tpb_history_t *pick;  /**< its fastest config the answer may recommend */
    int pol0, npol, str0, nstr;
    tpb_persistent_t run; /**< the run's straggler test at its TP degree (rank -1 at tp 1) */
    int advice_iters;     /**< --iters that would give enough blocks at its TP degree (0: none) */
} tpb_answer_group_t;

/** A shape: its groups groups[g0, g1) and its two use lines. */
typedef struct {
    int g0, g1;
    const tpb_history_t *best; /**< the shortest step the answer may recommend (latency) */
    const tpb_history_t *thr;  /**< the highest layer rate it may recommend (throughput) */
    tpb_pick_t lat, tput;      /**< each against its runner-up */
    const tpb_history_t *even; /**< best's even config where it is another (NULL: none) */
    tpb_policy_verdict_t even_v;
    const tpb_history_t *kept; /**< a config faster than best kept out (verdict not better) */
    tpb_policy_verdict_t kept_v;
} tpb_answer_shape_t;

/** The persistent-straggler question at one TP degree > 1 over the run. */
typedef struct {
    const tpb_history_t *first; /**< the first config at that degree with blocks */
    tpb_persistent_t p;
    int advice_iters; /**< as in tpb_answer_group_t */
} tpb_answer_tp_t;

/** The answer of a run. */
typedef struct {
    int parts;  /**< a --block run's GEMMs, each timed alone: "part" use lines */
    int budget; /**< --budget took looks: intervals at their look's level */
    const char *const *hosts;
    double target;               /**< the calibration's goal (relative IQR) */
    const tpb_history_t *calib;  /**< the config with the worst calibration spread (or NULL) */
    tpb_answer_group_t *groups;  /**< in the order written, shape by shape */
    tpb_answer_shape_t *shapes;  /**< in the order measured; none: nothing to answer */
    tpb_answer_tp_t *tps;        /**< per TP degree > 1 with blocks, in the order measured */
    tpb_answer_policy_t *pol;    /**< the groups' policy items */
    tpb_answer_straggler_t *str; /**< the groups' straggler items */
    int ngroups, nshapes, ntps, npol, nstr;
} tpb_answer_t;

/** Builds the answer of hist[n] (comm-only configs left out; see tpb_answer_write) into *a.
 *  0, or -1 where memory ran out (*a then empty). Pure but for reading the configs'
 *  per-rank arrays back (record/spill.h). */
int tpb_answer_build(tpb_answer_t *a, const tpb_history_t *hist, int n, const char *const *hosts,
                     double target_spread, int parts);
void tpb_answer_free(tpb_answer_t *a);

/** The answer's '#' lines (nothing where it has no shape). */
void tpb_answer_text(tpb_buf_t *txt, const tpb_answer_t *a);
/** Its JSON objects as array items (the caller opens and closes the array). */
void tpb_answer_json(tpb_buf_t *js, const tpb_answer_t *a);

/** What would decide a straggler at a TP degree, in words, into out: "measure longer: at
 *  least --iters N" (iters > 0), or more configs where no --iters would do (answer_text.c). */
const char *tpb_answer_advice(char *out, size_t cap, int iters, int tp);

/** Layers per second over the whole world: world / tp groups each doing one per step. */
double tpb_answer_layer_rate(const tpb_history_t *h);

/** Whether the run's blocks could have named a persistent straggler at all: enough of them
 *  for some rank to be the slowest in the number the test needs. Pure. */
int tpb_answer_decidable(const tpb_persistent_t *p);

/** A block's use line: best against its runner-up next (NULL: none; v's figures NaN). */
typedef struct {
    const tpb_history_t *best, *next;
    int thr;                /**< 1: tokens/s per rank (throughput); 0: the step (latency) */
    tpb_policy_verdict_t v; /**< best over next (tpb_block_verdict) */
} tpb_block_use_t;

/** A block's TP degree: its pick (the fastest policy it may recommend) and the policies'
 *  verdicts over even there, pol[pol0, pol0 + npol) of the block answer. */
typedef struct {
    const tpb_history_t *pick;
    int pol0, npol;
} tpb_block_tp_t;

/** One block (name, tokens, sequence parallelism, placement): its TP degrees
 *  tps[tp0, tp0 + ntp) in the order measured, their picks ranked by tokens/s per rank
 *  rank[rank0, rank0 + nrank) best first, and the two use lines (where nrank > 0). */
typedef struct {
    const tpb_history_t *g;
    int tp0, ntp, rank0, nrank;
    tpb_block_use_t thr, lat;
} tpb_block_one_t;

/** The answer of a --block run's blocks (answer_block.c). */
typedef struct {
    tpb_block_one_t *blocks;
    tpb_block_tp_t *tps;
    tpb_answer_policy_t *pol;
    const tpb_history_t **rank;
    int nblocks, ntps, npol, nrank;
} tpb_block_answer_t;

/** Builds the answer of blocks[n] (see tpb_answer_block) into *a: 0, or -1 where memory ran
 *  out (*a then empty). Pure but for reading the blocks' arrays back. */
int tpb_block_answer_build(tpb_block_answer_t *a, const tpb_history_t *blocks, int n);
void tpb_block_answer_free(tpb_block_answer_t *a);
/** Its '#' lines (nothing without blocks) and its JSON objects as array items. */
void tpb_block_answer_text(tpb_buf_t *txt, const tpb_block_answer_t *a);
void tpb_block_answer_json(tpb_buf_t *js, const tpb_block_answer_t *a);
/** A block's tokens per second per rank: M / (tp x its median step). */
double tpb_block_tokens_rate(const tpb_history_t *h);

/** An overlap line's verdict: nothing could overlap (--comm mpi's staged collectives: the host
 *  waits), overlap pays, or why it does not (the largest of its costs). */
typedef enum {
    TPB_OVERLAP_HOST_WAITS,
    TPB_OVERLAP_PAYS,
    TPB_OVERLAP_NO_PROGRESS,  /**< the collectives were not hidden behind the GEMMs */
    TPB_OVERLAP_CHUNKING,     /**< the chunked GEMMs run slower than the whole */
    TPB_OVERLAP_INTERFERENCE, /**< the GEMM runs slower beside the collectives */
} tpb_overlap_why_t;

/** One (shape, TP degree, placement, split, policy) of the chunked configs: the chunk count
 *  with the best speed-up over serial. */
typedef struct {
    const tpb_history_t *best;
    double speedup; /**< over serial, in the same config */
    tpb_overlap_why_t verdict;
} tpb_overlap_line_t;

/** The overlap lines of a run (answer_overlap.c). */
typedef struct {
    tpb_overlap_line_t *lines;
    int nlines;
} tpb_overlap_answer_t;

/** Builds the overlap lines of the chunked configs ohist[n] (see tpb_answer_overlap): 0, or
 *  -1 where memory ran out. Pure. */
int tpb_overlap_answer_build(tpb_overlap_answer_t *a, const tpb_history_t *ohist, int n);
void tpb_overlap_answer_free(tpb_overlap_answer_t *a);
void tpb_overlap_answer_text(tpb_buf_t *txt, const tpb_overlap_answer_t *a);
void tpb_overlap_answer_json(tpb_buf_t *js, const tpb_overlap_answer_t *a);
/** Why a line's overlap does not pay, in words (NULL where it pays; answer_text.c). */
const char *tpb_overlap_why_text(tpb_overlap_why_t w);

#endif /* TPB_ANSWER_MODEL_H */
