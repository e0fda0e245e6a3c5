/*
 * wrap.h - the table's '#' lines folded at a terminal's width. A table row is never
 * folded (a row is one config: it is sized to fit 120 columns, record/report.h); a '#'
 * line (notes, the answer) is folded at its last space before the width, each
 * continuation indented under the line's text. Only a terminal gets folded lines: a file
 * or a pipe gets every line whole, for grep (and results.jsonl has every answer).
 */
#ifndef TPB_WRAP_H
#define TPB_WRAP_H

#include <stdio.h>

#include "base/buf.h"

/** The width the table is folded at: 0 (do not fold) unless fd is a terminal with a size
 *  (mpirun hands its ranks a pty that has the size of mpirun's terminal, and none when
 *  mpirun's output is piped); never under 40. */
int tpb_wrap_width(int fd);

/** Append line (n bytes, without its newline) to out folded at width as above, each
 *  piece with a newline; width 0 or a line that is not a '#' line: whole. A word longer
 *  than the width stays whole (nothing is cut). Pure. */
void tpb_wrap_line(const char *line, size_t n, int width, tpb_buf_t *out);

/** A stream that writes to base with its '#' lines folded at width (lines held until
 *  their newline, the rest written at fclose); base itself when width is 0 or the stream
 *  cannot be made. fclose of the result does not close base. */
FILE *tpb_wrap_open(FILE *base, int width);

#endif /* TPB_WRAP_H */
