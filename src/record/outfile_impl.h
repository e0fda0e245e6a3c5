/*
 * outfile_impl.h - what outfile.c, outdir*.c and outappend.c share, and nothing else
 * includes.
 */
#ifndef TPB_OUTFILE_IMPL_H
#define TPB_OUTFILE_IMPL_H

#include <sys/types.h>

#include "record/outfile.h"

/** The lock file of an output folder (outdir_lock.c), one of the names a run writes. */
#define TPB_OUTDIR_LOCK ".tpbal.lock"

/** The folder dir, open (it may be reached through a link: the user named it). */
tpb_status_t tpb_outfile_open_dir(const char *dir, int *fd);

/** A plain file name: no '/', not "." or "..", short enough; TPB_ERR_IO otherwise. */
tpb_status_t tpb_outfile_check_name(const char *dir, const char *name);

/** What stands at name in dirfd: nothing (*mode 0), or a regular file (its mode in *mode);
 *  a link or anything else is refused in one line naming path. */
tpb_status_t tpb_outfile_target_kind(int dirfd, const char *name, const char *path, mode_t *mode);

/** An existing file of dirfd opened with flags (O_RDONLY or O_RDWR; O_CREAT allowed), never
 *  through a link and never blocking (O_NONBLOCK until it is known to be a regular file: a FIFO
 *  planted at its name would block the open for ever); -1 with errno (ELOOP: a link, EINVAL:
 *  not a regular file). */
int tpb_outfile_open_regular(int dirfd, const char *name, int flags, mode_t mode);

/** A temporary in dirfd: unnamed (O_TMPFILE), else a new file named in tmp[cap] (*named =
 *  1); -1 with errno on failure. */
int tpb_outfile_temporary(int dirfd, const char *name, char *tmp, size_t cap, int *named);

#endif /* TPB_OUTFILE_IMPL_H */
