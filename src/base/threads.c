/* threads.c - parts on threads, fresh pages made present (threads.h). */
#include "base/threads.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/stamp.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14's; older headers lack it, an older kernel: EINVAL */
#endif

int tpb_cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) != 0)
        return 1;
    int n = CPU_COUNT(&set);
    return n > 0 ? n : 1;
}

void tpb_run_parts(int n, void *(*fn)(void *), void *parts, size_t size)
{
    pthread_t tids[TPB_MAX_THREADS];
    int threaded[TPB_MAX_THREADS] = {0}, m = n < TPB_MAX_THREADS ? n : TPB_MAX_THREADS;
    for (int t = 1; t < m; t++)
        threaded[t] = pthread_create(&tids[t], NULL, fn, (char *)parts + (size_t)t * size) == 0;
    for (int t = 0; t < n; t++)
        if (t >= m || !threaded[t])
            fn((char *)parts + (size_t)t * size);
    for (int t = 1; t < m; t++)
        if (threaded[t])
            pthread_join(tids[t], NULL);
}

/* One thread's pages: [at, at + bytes), page-aligned. */
typedef struct {
    unsigned char *at;
    size_t bytes, page;
    int touch, refused;
} pages_t;

/* 64 MiB at a time, each progress for the --timeout watchdog (a fault can cost 5 us: 8 GB of
 * pages a page at a time would be 10 s without a stamp). */
static void *populate_part(void *arg)
{
    enum { STEP = 64 << 20 };
    pages_t *p = arg;
    for (size_t at = 0; at < p->bytes && !p->refused; at += STEP) {
        size_t n = p->bytes - at < STEP ? p->bytes - at : STEP;
        if (!p->touch)
            p->refused = madvise(p->at + at, n, MADV_POPULATE_WRITE) != 0 && errno == EINVAL;
        else {
            volatile unsigned char *q = p->at + at;
            for (size_t i = 0; i < n; i += p->page)
                q[i] = q[i]; /* a write fault: the page present and writable, its byte kept */
        }
        tpb_stamp_progress();
    }
    return NULL;
}

int tpb_populate_by(void *p, size_t bytes, int threads, int touch)
{
    enum { MIN_BYTES = 16 << 20 };
    long ps = sysconf(_SC_PAGESIZE);
    size_t page = ps > 0 ? (size_t)ps : 4096;
    uintptr_t lo = ((uintptr_t)p + page - 1) / page * page,
              hi = ((uintptr_t)p + bytes) / page * page;
    if (!p || hi <= lo)
        return 1;
    size_t pages = (hi - lo) / page, min_pages = MIN_BYTES / page;
    int n = threads > 0 ? threads : tpb_cpus();
    n = n > TPB_MAX_THREADS ? TPB_MAX_THREADS : n;
    if ((size_t)n > pages / min_pages)
        n = pages / min_pages > 1 ? (int)(pages / min_pages) : 1;
    pages_t parts[TPB_MAX_THREADS];
    for (int t = 0; t < n; t++) {
        size_t a = pages * (size_t)t / (size_t)n, b = pages * (size_t)(t + 1) / (size_t)n;
        parts[t] = (pages_t){(unsigned char *)lo + a * page, (b - a) * page, page, touch, 0};
    }
    tpb_run_parts(n, populate_part, parts, sizeof(parts[0]));
    for (int t = 0; t < n; t++)
        if (parts[t].refused)
            return 0;
    return 1;
}

void tpb_populate(void *p, size_t bytes, int threads)
{
    if (!tpb_populate_by(p, bytes, threads, 0))
        tpb_populate_by(p, bytes, threads, 1);
}
