/*
 * outfile.h - result files that appear complete or not at all.
 */
#ifndef TPB_OUTFILE_H
#define TPB_OUTFILE_H

#include <stddef.h>
#include <stdio.h>

#include "base/tpb_status.h"

/**
 * Create dir (and its parents) if needed and check that a file can be created
 * in it. TPB_ERR_IO with a message naming the directory otherwise.
 */
tpb_status_t tpb_outdir_prepare(const char *dir);

/**
 * Replace dir/name by data[len]: written to a temporary file in dir, flushed
 * to disk, then renamed over the target. On error the old file is untouched
 * and the temporary file is removed.
 */
tpb_status_t tpb_outfile_replace(const char *dir, const char *name, const char *data, size_t len);

/** A file being streamed: written to a temporary name, renamed by tpb_outstream_commit(). */
typedef struct {
    FILE *f;
    char tmp[1200];
    char final[1200];
} tpb_outstream_t;

/** Open dir/name for streaming (to dir/.name.tmp.PID). */
tpb_status_t tpb_outstream_open(tpb_outstream_t *s, const char *dir, const char *name);

/** Flush, close and rename into place; on any error the temporary file is removed. */
tpb_status_t tpb_outstream_commit(tpb_outstream_t *s);

/** Close and remove the temporary file (no-op if not open). */
void tpb_outstream_abort(tpb_outstream_t *s);

#endif /* TPB_OUTFILE_H */
