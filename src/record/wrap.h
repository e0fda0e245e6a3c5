/*
 * wrap.h - the output's '#' lines folded at a terminal's width, or at 120 columns in a
 * file or a pipe. A table row is never folded (a row is one config: it is sized to fit 120
 * columns, record/report.h); a '#' line (notes, the answer) is folded at its last space
 * before the width, each continuation indented under the line's text; a "tpbal: " line
 * (the dry run's) alike, its continuations indented by 4 spaces. --wide keeps every line
 * whole in a file or a pipe (results.jsonl has every answer whole too).
 */
#ifndef TPB_WRAP_H
#define TPB_WRAP_H

#include <stdio.h>

#include "base/buf.h"

/** The width tpbal's output is folded at where fd is a terminal with a size (mpirun hands
 *  its ranks a pty that has the size of mpirun's terminal, and none when mpirun's output
 *  is piped): its columns, never under 40; otherwise TPB_WRAP_DEFAULT, or 0 (whole lines)
 *  when wide is set. */
int tpb_wrap_width(int fd, int wide);

/** The width of a file's or a pipe's lines (issue 44: every line within it by default). */
#define TPB_WRAP_DEFAULT 120

/** Append line (n bytes, without its newline) to out folded at width as above, each
 *  piece with a newline; width 0 or a line that is neither a '#' nor a "tpbal: " line:
 *  whole. A word longer
 *  than the width stays whole (nothing is cut). Pure. */
void tpb_wrap_line(const char *line, size_t n, int width, tpb_buf_t *out);

/** A stream that writes to base with its '#' lines folded at width (lines held until
 *  their newline, the rest written at fclose); base itself when width is 0 or the stream
 *  cannot be made. fclose of the result does not close base. */
FILE *tpb_wrap_open(FILE *base, int width);

#endif /* TPB_WRAP_H */
