/*
 * threads.h - host work split over the process's CPUs: parts run on threads, and fresh memory's
 * pages made present before a long write (a page fault costs 3-5 us in a virtual machine: 2.2 GB
 * of kept inputs, 540k faults, were 1-2 s of a draw; doc/METRICS.md, "Host time").
 */
#ifndef TPB_THREADS_H
#define TPB_THREADS_H

#include <stddef.h>

enum { TPB_MAX_THREADS = 64 };

/** The CPUs this process may run on (its affinity mask), at least 1. */
int tpb_cpus(void);

/** fn(parts + t * size) for t < n, on up to TPB_MAX_THREADS - 1 threads and this one (a part
 *  no thread could be made for, or beyond the threads, runs here); returns when every part has. */
void tpb_run_parts(int n, void *(*fn)(void *), void *parts, size_t size);

/** The pages of [p, p + bytes) that lie whole inside it made present and writable, contents
 *  unchanged, by up to `threads` threads (0: the CPUs), none for less than 16 MiB:
 *  madvise(MADV_POPULATE_WRITE) (Linux 5.14), or where the kernel lacks it each page's first
 *  byte read and written back. Best effort: a page it could not make present (no memory) is
 *  left to fault when written, as without this call. */
void tpb_populate(void *p, size_t bytes, int threads);

/** tpb_populate by one way alone (for tests): `touch` 0, madvise only (returns 0 where the
 *  kernel refused it); 1, the reads and writes back (returns 1). */
int tpb_populate_by(void *p, size_t bytes, int threads, int touch);

#endif /* TPB_THREADS_H */
