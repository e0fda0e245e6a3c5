/*
 * outfile.h - result files that appear complete or not at all, and never through a link.
 *
 * Every file tpbal creates or replaces is opened relative to its folder's descriptor
 * (openat), never following a symbolic link (O_NOFOLLOW): a temporary is an unnamed file
 * (O_TMPFILE) or, where the file system has none, a new file (O_CREAT | O_EXCL) with an
 * unpredictable name; it is written, flushed to disk and then renamed into place only over a
 * regular file or over nothing. A symbolic link, a directory, a device, a FIFO or a socket
 * where a result goes is refused in one line and left as it is. New files get the mode the
 * umask leaves of 0666; a replaced file keeps its mode. The folder itself may be reached
 * through a link (the user named it).
 */
#ifndef TPB_OUTFILE_H
#define TPB_OUTFILE_H

#include <stddef.h>
#include <stdio.h>

#include "base/tpb_status.h"

/** The longest file name tpbal writes inside a folder (trace-NNN.json, results.jsonl). */
#define TPB_OUTFILE_NAME 128

/**
 * Create dir (and its parents) if needed and check that a file can be created in it (a
 * probe created and removed, never following a link). TPB_ERR_IO with a message naming the
 * directory otherwise. *above: how many folders above dir it had to create, for the caller
 * to say so; the topmost folder it created (dir itself where it made only that) into
 * top[cap], untouched where it made none.
 */
tpb_status_t tpb_outdir_prepare(const char *dir, int *above, char *top, size_t cap);

/** The folders tpb_outdir_prepare made for dir (top: the topmost, as it said) removed where
 *  they are empty, the deepest first, never through a link: a run that refused before it
 *  wrote anything leaves no folders behind. Those that are not empty stay, and all above
 *  them. */
void tpb_outdir_unmake(const char *dir, const char *top);

/**
 * What a dry run checks of --out without creating anything: dir is a directory, or its
 * nearest existing ancestor is, and the run may create files there (access(2): the real
 * user's rights). TPB_ERR_IO with the one line otherwise.
 */
tpb_status_t tpb_outdir_check_creatable(const char *dir);

/**
 * Whether path could be replaced by tpb_outfile_replace: a regular file or nothing (a link
 * or anything else is refused), in a folder where a file can be created (nothing is left
 * behind). TPB_ERR_IO naming `what` and the path otherwise.
 */
tpb_status_t tpb_outfile_check_writable(const char *path, const char *what);

/**
 * Hold dir for this run: an exclusive lock (flock) on dir/.tpbal.lock, which names this
 * process (pid, host, start) for a second run. *fd keeps the lock until tpb_outdir_unlock
 * or the end of the process (a dead run's lock is released by the kernel, so the stale lock
 * file it leaves is taken over). TPB_ERR_IO with one line naming the holder when another
 * process holds it, or when the lock file is a link or not a regular file.
 */
tpb_status_t tpb_outdir_lock(const char *dir, int *fd);

/** Remove the lock file and release the lock (at the end of the run). Safe from a signal
 *  thread: no allocation. */
void tpb_outdir_unlock(const char *dir, int fd);

/** --dry-run: TPB_OK unless another run holds dir's lock (refused as tpb_outdir_lock refuses
 *  it); takes no lock and creates nothing. */
tpb_status_t tpb_outdir_check_free(const char *dir);

/** Whether dir holds the results of an earlier run (a results.jsonl, of any kind): 1 if so. */
int tpb_outdir_has_results(const char *dir);

/** Whether dir holds the fleet.json of an earlier --fleet run: 1 if so. */
int tpb_outdir_has_fleet(const char *dir);

/** Pass `pass` (from 1) of `passes` of --repeat into dir[cap]: out/pass-K, made (where make)
 *  as tpb_outdir_prepare makes a folder; out itself with one pass or without --out (""). */
tpb_status_t tpb_outdir_pass(const char *out, int passes, int pass, int make, char *dir,
                             size_t cap);

/** 1 if dir holds a --repeat run's repeat.json or its first pass's folder. */
int tpb_outdir_has_repeat(const char *dir);

/**
 * Remove names[n] from dir where each is a regular file (a link, a directory or anything
 * else is left; a name that is gone is fine). The files an earlier run wrote, which --force
 * removes once this run's first results are in place. TPB_ERR_IO naming the first file that
 * cannot be removed; the others are still removed.
 */
tpb_status_t tpb_outdir_remove(const char *dir, const char *const *names, int n);

/** A file being written: a temporary, renamed into place by tpb_outstream_commit(). */
typedef struct {
    FILE *f;
    int dirfd;                       /**< its folder, open */
    int named;                       /**< 1: tmp names a file (no O_TMPFILE here) */
    char tmp[TPB_OUTFILE_NAME + 40]; /**< the temporary's name in the folder */
    char name[TPB_OUTFILE_NAME];     /**< the final name in the folder */
    char path[1200];                 /**< dir/name, for messages */
} tpb_outstream_t;

/** Open dir/name for streaming. Refused (TPB_ERR_IO, one line, nothing created) when
 *  dir/name is a link or not a regular file, or name is not a plain file name. */
tpb_status_t tpb_outstream_open(tpb_outstream_t *s, const char *dir, const char *name);

/**
 * Flush and sync the file and give it its final name: renamed over the target only if
 * that is still a regular file or nothing. On any error (ENOSPC and EFBIG included) the
 * temporary is removed and the target is untouched.
 */
tpb_status_t tpb_outstream_commit(tpb_outstream_t *s);

/** Close and remove the temporary (no-op if not open). */
void tpb_outstream_abort(tpb_outstream_t *s);

/** Replace dir/name by data[len] as tpb_outstream_open and _commit do. */
tpb_status_t tpb_outfile_replace(const char *dir, const char *name, const char *data, size_t len);

/** Copy the first n bytes of the regular file `name` in the stream's folder (never through
 *  a link) to the end of the stream: what this run wrote there before. */
tpb_status_t tpb_outstream_copy_head(tpb_outstream_t *s, const char *name, long n);

/** Files replaced together: each written in full to its temporary before any is renamed
 *  into place, so that a failure (a full disk) leaves every earlier file as it was. */
#define TPB_OUTSET_MAX 4
typedef struct {
    tpb_outstream_t s[TPB_OUTSET_MAX];
    int n;
} tpb_outset_t;

/** Open dir/name as the set's next file (*f: where to write it). */
tpb_status_t tpb_outset_add(tpb_outset_t *set, const char *dir, const char *name, FILE **f);

/** Commit every file: all written to disk under their temporary names first (a full disk
 *  fails there and leaves every earlier file as it was), then renamed in the order added
 *  (a rename refused, a link planted meanwhile: the rest are removed, those renamed before
 *  stay). The set is empty afterwards. */
tpb_status_t tpb_outset_commit(tpb_outset_t *set);

/**
 * Overwrite len bytes at offset `at` of the regular file dir/name (never through a link) in
 * place, if they still read `was`: what a full disk still allows (no block is added), for a
 * field written with room to change (the run's status). TPB_ERR_IO otherwise.
 */
tpb_status_t tpb_outfile_patch(const char *dir, const char *name, long at, const char *was,
                               const char *now, size_t len);

/** Remove every temporary of the set; it is empty afterwards. */
void tpb_outset_abort(tpb_outset_t *set);

/**
 * The first line (at most cap - 1 bytes, NUL-terminated, no line end) of the regular file
 * dir/name, read without following a link. TPB_ERR_IO if it is missing, a link or not a
 * regular file, or unreadable.
 */
tpb_status_t tpb_outfile_first_line(const char *dir, const char *name, char *buf, size_t cap);

/** Up to cap bytes of dir/name from its start into buf (*len of them; no NUL added), never
 *  through a link or from anything but a regular file; TPB_ERR_IO otherwise. */
tpb_status_t tpb_outfile_read_head(const char *dir, const char *name, char *buf, size_t cap,
                                   size_t *len);

/**
 * 1 if path names a file a run writes in its --out folder dir (results.*, ranks.csv, trace*.json,
 * repeat.json, fleet.json, the lock, or anything in a pass-K folder of it), resolved through
 * links where it exists and lexically beyond (a folder still to be made), else 0. For the
 * options that read or write a file of their own (--calibration-file, --shards-from,
 * --cost-profile, --preset): one of them naming such a file would be overwritten by the run's
 * records, or overwrite them.
 */
int tpb_outdir_owns_path(const char *dir, const char *path);

/** TPB_ERR_INVALID, naming the option and what to do, if paths[i] of option flags[i] (i < n;
 *  "" for none) is a file the run writes in --out dir (tpb_outdir_owns_path); else TPB_OK. */
/* The files a run writes in --out that are there already are regular files: a FIFO, a device,
 * a folder or a link in their place is refused in one line before anything is read or
 * written (a FIFO held the --force reading of the earlier record open for ever). */
tpb_status_t tpb_outdir_check_targets(const char *dir);

tpb_status_t tpb_outdir_check_paths(const char *dir, const char *const *flags,
                                    const char *const *paths, int n);

/** Whether a run may go into dir (outdir_kind.c): one kind of run a folder (a sweep's
 *  results, a --fleet's fleet.json, a --repeat run's passes), an earlier run's only with
 *  force; for --repeat N (repeat > 1) every pass-K there a real folder, and none past pass-N
 *  (it would be left beside the new passes, stale). A one-line refusal otherwise. */
tpb_status_t tpb_outdir_check_kind(const char *dir, int force, int fleet, int repeat);

/** 1 if name is a temporary that tpbal makes (".NAME.tpbal-XXXXXXXXXXXX", or an earlier
 *  version's ".NAME.tmp.PID"). */
int tpb_outfile_is_temporary(const char *name);

#endif /* TPB_OUTFILE_H */
