/*
 * outappend.h - a result file that grows by appending (results.jsonl, results.csv,
 * ranks.csv: one config's records at a time, nothing rewritten per config).
 *
 * The file is the one this run put in place: its descriptor is taken from the temporary
 * before the rename (record/outfile.h), so an append never goes through a name that was
 * replaced meanwhile (a link planted there is never followed: it is not even opened). Each
 * append is written at the end the run knows, whole, or taken back: the file is truncated
 * to where it was, so that a failed write (a full disk) leaves every earlier record as it
 * was, and a crash leaves whole records and at worst one torn last line, which the readers
 * (tpbal_results) skip. The same descriptor reads the file back for the one rewrite at the
 * end of the run (results.jsonl's run line with its final facts).
 */
#ifndef TPB_OUTAPPEND_H
#define TPB_OUTAPPEND_H

#include <stddef.h>
#include <stdio.h>

#include "base/tpb_status.h"

typedef struct {
    int fd;          /**< the file's descriptor, read and write; -1: none */
    long len;        /**< its bytes: where the next append goes */
    char path[1200]; /**< dir/name, for messages */
} tpb_outappend_t;

#define TPB_OUTAPPEND_NONE                                                                         \
    {                                                                                              \
        .fd = -1                                                                                   \
    }

/** Keep the file f is writing (a temporary, before it is renamed into place) for appending:
 *  its descriptor duplicated, its length once f is flushed. */
tpb_status_t tpb_outappend_keep(tpb_outappend_t *a, FILE *f, const char *path);

/** Append data[n] at the end, whole, or nothing (the file truncated back): TPB_ERR_IO with
 *  one line naming the file. n 0: nothing to do. */
tpb_status_t tpb_outappend_write(tpb_outappend_t *a, const char *data, size_t n);

/** Take the file back to len bytes (a config whose other files could not be appended). */
void tpb_outappend_truncate(tpb_outappend_t *a, long len);

/** Copy the file's bytes [from, its end) to the end of out (the rewrite at the end). */
tpb_status_t tpb_outappend_copy(const tpb_outappend_t *a, long from, FILE *out);

/** Close it (no-op when closed). */
void tpb_outappend_close(tpb_outappend_t *a);

/**
 * Room held on dir's file system for the one rewrite at the end (results.jsonl's final
 * version is written beside the appended one before it replaces it): an unnamed file in
 * dir (nothing is left if the process dies), grown before the appends that need it, given
 * back just before the rewrite. A file system that cannot hold it (a full disk) says so
 * then, where the config that would have filled it can still be taken back, not at the end.
 * Where the file system cannot make an unnamed file, or reserve without writing, the room
 * is not held (r->fd stays -1) and a later grow is a no-op.
 */
tpb_status_t tpb_outreserve_open(tpb_outappend_t *r, const char *dir);

/** Hold at least n bytes: TPB_ERR_IO with one line (ENOSPC: no room) otherwise. */
tpb_status_t tpb_outreserve_grow(tpb_outappend_t *r, long n);

#endif /* TPB_OUTAPPEND_H */
