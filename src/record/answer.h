/*
 * answer.h - the closing answer of a run, from the finished configs alone: per shape and
 * TP degree the fastest config, what the weighted split bought over the even one
 * (measured beside predicted, a split that lost flagged), a straggler only where it stands
 * out from noise, the calibration's quality once, and one line per shape that says what
 * to use. Pure but for reading the configs' per-rank arrays back (record/spill.h): text and
 * JSON are appended to buffers, nothing is printed here.
 */
#ifndef TPB_ANSWER_H
#define TPB_ANSWER_H

#include "base/buf.h"
#include "base/detect.h"
#include "record/result.h"
#include "record/verdict.h"

/** A weighted split "lost" when it ran below this fraction of the even split's speed;
 *  between it and 1 it is a draw (the run-to-run noise of one config on a quiet node). */
#define TPB_ANSWER_LOST 0.95

/**
 * Appends the answer to txt ('#' lines) and one JSON object per (shape, TP degree,
 * placement) to js as array items (the caller opens and closes the array). hist: the
 * finished configs in order (comm-only configs are left out); hosts: host name per world
 * rank (NULL: none printed); target_spread: the calibration's goal (relative IQR). Nothing
 * is appended when no config has a GEMM.
 */
void tpb_answer_write(tpb_buf_t *txt, tpb_buf_t *js, const tpb_history_t *hist, int n,
                      const char *const *hosts, double target_spread);

/**
 * The same for a --block run's GEMMs, each timed alone: its use lines read "# part SHAPE
 * alone: ..." so that none reads as what to run (the block's answer is), the JSON as above.
 */
void tpb_answer_parts(tpb_buf_t *txt, tpb_buf_t *js, const tpb_history_t *hist, int n,
                      const char *const *hosts, double target_spread);

/** How sure a use line's pick is against its runner-up (answer_pick.c). */
typedef struct {
    const tpb_history_t *runner; /**< the next best for the question (NULL: none, no line) */
    double margin, lo, hi;       /**< the pick's figure over the runner-up's, its 95 % interval */
    int sure;                    /**< 1: the whole interval above 1; 0: not; -1: not enough data */
} tpb_pick_t;

/** pick against runner: the ratio of their steps (runner's over pick's) with its interval,
 *  for the layer rate (rate 1: scaled by their groups at once) or the step (rate 0). */
tpb_pick_t tpb_answer_pick(const tpb_history_t *pick, const tpb_history_t *runner, int rate);
/** The pick's "sure" / "not sure" line under its use line, and its JSON keys. */
void tpb_answer_pick_text(tpb_buf_t *txt, const tpb_pick_t *p, const char *question);
void tpb_answer_pick_json(tpb_buf_t *js, const tpb_pick_t *p);

/** Over the configs hist[n] at TP degree tp (their blocks, comm-only configs left out):
 *  who was the slowest of its group in how many blocks, and whether that persists
 *  (base/detect.h); rank -1 when no config at tp has blocks (answer_persist.c). Under
 *  --budget (a config with looks) the test is held to TPB_DETECT_ALPHA spent over the
 *  extensions at tp (base/sequential.h): look 1 + tpb_answer_extensions' share. */
tpb_persistent_t tpb_answer_persistent(const tpb_history_t *hist, int n, int tp);

/** tpb_answer_persistent with the test held to alpha. */
tpb_persistent_t tpb_answer_persistent_at(const tpb_history_t *hist, int n, int tp, double alpha);

/** The later looks --budget took of the sets at tp with blocks (each set once); *budget: 1
 *  where any config of hist took looks (--budget was on). */
int tpb_answer_extensions(const tpb_history_t *hist, int n, int tp, int *budget);

/** Overlap beyond this speed-up over serial pays; below it, it does not (a draw is noise). */
#define TPB_ANSWER_OVERLAP_PAYS 1.02

/**
 * --overlap chunked: per (shape, TP degree, placement, split, policy) of the chunked
 * configs ohist[n], the chunk count with the best speed-up over serial (the whole GEMM and
 * the serial collective timed alone in the same config; the serial config's own step is
 * shown beside it where it ran) and its share of the
 * communication hidden; or "overlap does not pay here" and why: the chunked GEMMs' cost
 * (chunking_cost), the GEMM slowed beside the collectives (interference), or little
 * hidden (no progress). Appends '#' lines to txt and one JSON object per line to js as
 * array items. Nothing without chunked configs.
 */
void tpb_answer_overlap(tpb_buf_t *txt, tpb_buf_t *js, const tpb_history_t *ohist, int n);

/**
 * --block: per block (name, tokens, sequence parallelism, placement) of blocks[n] and TP
 * degree, the fastest policy the answer may recommend (even, or one whose verdict over
 * even is better) with its step and tokens/s per rank, the other policies' verdicts over
 * even, the TP degrees ranked by tokens/s per rank, and two use lines (throughput:
 * tokens/s per rank; latency: the step), each against the runner-up TP degree with the
 * interval and verdict of the ratio (tpb_block_verdict) (answer_block.c). Nothing without
 * blocks.
 */
void tpb_answer_block(tpb_buf_t *txt, tpb_buf_t *js, const tpb_history_t *blocks, int n);

/**
 * Block a against block b (different TP degrees) by throughput (thr 1: tokens/s per rank,
 * higher is better) or latency (0: the step): a's advantage as a factor (speedup) with its
 * interval [lo, hi] and the verdict at the 5 % tolerance. Unpaired (measured in different
 * sets); the level is the later set's (the larger id): 95 %, or under --budget that of the
 * look it stopped at (tpb_verdict_conf), in conf and its looks in looks. The set measured
 * first is taken as it is: its own looks, which --budget took for its own questions or for
 * its precision, are not spent again (bench/ranksim measures the false verdicts this
 * gives, doc/METRICS.md). Pure.
 */
tpb_policy_verdict_t tpb_block_verdict(const tpb_history_t *a, const tpb_history_t *b, int thr);

/** The half-width (log) a block's own step interval keeps to under --budget where its TP
 *  degree is ranked against another: half the 5 % tolerance, so that two such blocks
 *  (their halves in quadrature, 3.4 %) decide a ratio beyond 1.087 or within 1.014. */
#define TPB_BLOCK_HALF (0.5 * 0.04879016416943205) /* log(1.05) / 2 */

/** What tpb_answer_block_open finds: a use line's question left open (thr: 1 throughput, 0
 *  latency; -1 none), its best TP degree and the runner-up, the best's advantage with its
 *  interval at the level conf; futile: the degree measured before keeps it open alone (its
 *  own interval at this ratio is inconclusive), so that more of the set cannot decide it;
 *  half: the widest of the set's own block intervals (log, each at its look's level), and
 *  imprecise: wider than TPB_BLOCK_HALF where the block has more than one TP degree. */
typedef struct {
    int thr, futile, tp, other_tp, imprecise;
    double speedup, lo, hi, conf, half;
} tpb_block_open_t;

/**
 * --budget, a block's set after a look: cur[k] are its units so far (one per policy, at one
 * TP degree, each with its steps, rounds and looks), blocks[n] the blocks recorded before,
 * degrees the TP degrees the block is measured at in the run. Returns 1 where measuring the
 * set longer may decide the block's TP ranking:
 *  - a use line of tpb_answer_block over both (throughput first, then latency) compares the
 *    set's TP degree with another and is inconclusive at its level (tpb_block_verdict; cur
 *    has the larger ids: measured later), unless futile (the other degree's own interval keeps it
 * open at the ratio measured);
 *  - or, with degrees > 1, a unit's own interval is wider than TPB_BLOCK_HALF (a degree
 *    measured first has nothing to be ranked against yet, and a later one is ranked against
 *    it: its precision is what more of it buys).
 * 0 otherwise (and where memory runs out). *out says which. Pure.
 */
int tpb_answer_block_open(const tpb_history_t *blocks, int n, const tpb_history_t *cur, int k,
                          int degrees, tpb_block_open_t *out);

#endif /* TPB_ANSWER_H */
