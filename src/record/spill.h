/*
 * spill.h - the per-rank arrays the record keeps of every finished config (each position's
 * median compute and GEMM FLOPs, each block's slowest ranks and every rank's deviation in
 * it) held in an unnamed file beside the results instead of rank 0's memory, so that its
 * memory stays flat over a sweep: at 131,072 ranks they are ~8 MiB a config, read back
 * only where an answer needs them (a pair's balance bound, a block's sums, the persistent
 * straggler's column at the end).
 *
 * The file is made with O_TMPFILE in the --out folder (nothing is left if the process
 * dies), else as a new file (O_CREAT | O_EXCL | O_NOFOLLOW, a random name) removed at once.
 * Where neither can be made, or the run has no folder, the arrays stay in memory as
 * before: every reader goes through tpb_history_load, which reads either.
 */
#ifndef TPB_SPILL_H
#define TPB_SPILL_H

#include <stddef.h>

#include "base/tpb_status.h"
#include "record/result.h"

typedef struct tpb_spill {
    int fd;          /**< the unnamed file; -1: none (the arrays stay in memory) */
    long end;        /**< its bytes: where the next array goes */
    char path[1200]; /**< its folder, for messages */
} tpb_spill_t;

#define TPB_SPILL_NONE                                                                             \
    {                                                                                              \
        .fd = -1                                                                                   \
    }

/** Open the unnamed file in dir (NULL or "": none, s->fd -1; so too where the file system
 *  cannot make one: the arrays then stay in memory). */
void tpb_spill_open(tpb_spill_t *s, const char *dir);

/** Move h's in-memory arrays into s (each written whole, then freed; h keeps where):
 *  no-op where s has no file. TPB_ERR_IO with one line where a write fails (a full disk):
 *  h keeps its arrays in memory then, and is whole either way. */
tpb_status_t tpb_spill_history(tpb_spill_t *s, tpb_history_t *h);

/** Take the file back to end bytes (a config taken back out of the record). */
void tpb_spill_truncate(tpb_spill_t *s, long end);

/** Close it (no-op when closed). */
void tpb_spill_close(tpb_spill_t *s);

/** The element size of array a (double; tpb_slow_t for TPB_HIST_SLOW). Pure. */
size_t tpb_history_elem(tpb_hist_array_t a);

/** Entries of array a (0: h has none): world for compute and work, nslow for slow,
 *  blocks x world for dev. Pure. */
size_t tpb_history_len(const tpb_history_t *h, tpb_hist_array_t a);

/** Entries [first, first + n) of h's array a into out, from memory or its spill file:
 *  TPB_ERR_IO where the file cannot be read, TPB_ERR_INVALID outside the array. */
tpb_status_t tpb_history_load(const tpb_history_t *h, tpb_hist_array_t a, size_t first, size_t n,
                              void *out);

/** The whole of h's array a in a new buffer (NULL: none, or out of memory, or unreadable:
 *  the caller's figure is then unknown, as without the array). Free it. */
void *tpb_history_dup(const tpb_history_t *h, tpb_hist_array_t a);

#endif /* TPB_SPILL_H */
