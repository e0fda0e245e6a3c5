/*
 * answer.h - the closing answer of a run, from the finished configs alone: per shape and
 * TP degree the fastest config, what the weighted split bought over the even one
 * (measured beside predicted, a split that lost flagged), a straggler only where it stands
 * out from noise, the calibration's quality once, and one line per shape that says what
 * to use. Pure: text and JSON are appended to buffers, nothing is printed here.
 */
#ifndef TPB_ANSWER_H
#define TPB_ANSWER_H

#include "base/buf.h"
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

#endif /* TPB_ANSWER_H */
