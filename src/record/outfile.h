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
 * Whether path could be replaced by tpb_outfile_replace: its directory exists
 * and a file can be created in it (nothing is left behind). TPB_ERR_IO naming
 * `what` and the path otherwise.
 */
tpb_status_t tpb_outfile_check_writable(const char *path, const char *what);

/**
 * Hold dir for this run: an exclusive lock (flock) on dir/.tpbal.lock, which
 * names this process (pid, host, start) for a second run. *fd keeps the lock
 * until tpb_outdir_unlock or the end of the process (a dead run's lock is
 * released by the kernel, so the stale lock file it leaves is taken over).
 * TPB_ERR_IO with one line naming the holder when another process holds it.
 */
tpb_status_t tpb_outdir_lock(const char *dir, int *fd);

/** Remove the lock file and release the lock (at the end of the run). */
void tpb_outdir_unlock(const char *dir, int fd);

/**
 * Whether dir holds the results of an earlier run (a results.jsonl): 1 if so.
 */
int tpb_outdir_has_results(const char *dir);

/**
 * Remove the files an earlier run left in dir (results.jsonl, results.csv,
 * ranks.csv, trace-*.json and temporary files of tpbal). Used with --force
 * just before the first config of a new run is written.
 */
tpb_status_t tpb_outdir_clear(const char *dir);

/**
 * Replace dir/name by data[len]: written to a temporary file beside the target,
 * flushed to disk, then renamed over the target. A symbolic link is written
 * through (the file it names is replaced, the link stays); a directory, device,
 * FIFO, socket or a link to nothing is refused. On error the old file is
 * untouched and the temporary file is removed.
 */
tpb_status_t tpb_outfile_replace(const char *dir, const char *name, const char *data, size_t len);

/** A file being streamed: written to a temporary name, renamed by tpb_outstream_commit(). */
typedef struct {
    FILE *f;
    char tmp[1400];
    char final[1200];
} tpb_outstream_t;

/** Open dir/name for streaming (to dir/.name.tmp.PID). */
tpb_status_t tpb_outstream_open(tpb_outstream_t *s, const char *dir, const char *name);

/** Flush, close and rename into place; on any error the temporary file is removed. */
tpb_status_t tpb_outstream_commit(tpb_outstream_t *s);

/** Close and remove the temporary file (no-op if not open). */
void tpb_outstream_abort(tpb_outstream_t *s);

#endif /* TPB_OUTFILE_H */
