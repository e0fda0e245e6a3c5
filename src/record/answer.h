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
 * 95 % interval and verdict of the ratio (answer_block.c). Nothing without blocks.
 */
void tpb_answer_block(tpb_buf_t *txt, tpb_buf_t *js, const tpb_history_t *blocks, int n);

#endif /* TPB_ANSWER_H */
