/*
 * infile.h - reading an input file that a user named (a preset, a calibration
 * file): only a regular file, only up to a stated size, only text. A FIFO or a
 * device would hang or feed the run endlessly, an oversized file would be cut
 * silently, and a NUL byte would hide the rest of the file from a parser that
 * stops at it: each is refused with one line instead.
 */
#ifndef TPB_INFILE_H
#define TPB_INFILE_H

#include <stddef.h>

#include "base/tpb_status.h"

/** Largest preset or calibration file read (a million calibration rows fit). */
#define TPB_INFILE_MAX ((size_t)256 << 20)

/**
 * Read the whole of path (at most limit bytes) into a NUL-terminated string
 * *text (malloc'd, free it) of *len bytes. what names the file in messages
 * ("--calibration-file"). A path that does not exist sets *missing = 1 (if
 * missing is not NULL) and returns TPB_OK with *text = NULL; otherwise
 * TPB_ERR_INVALID with one line for a directory, FIFO, socket or device, a file
 * over limit, a NUL byte (its offset), or a read error (its errno text).
 */
tpb_status_t tpb_infile_read(const char *path, const char *what, size_t limit, char **text,
                             size_t *len, int *missing);

/**
 * TPB_OK if path does not exist or is a regular file (after symbolic links);
 * else TPB_ERR_INVALID naming what it is. For files tpbal will write.
 */
tpb_status_t tpb_infile_check_regular(const char *path, const char *what);

#endif /* TPB_INFILE_H */
