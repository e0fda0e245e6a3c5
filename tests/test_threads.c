/* test_threads.c - parts on threads and fresh pages made present (base/threads.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/threads.h"
#include "tpb_test.h"

enum { PARTS = TPB_MAX_THREADS + 6, MIB = 1 << 20 };

static void *mark(void *arg)
{
    int *p = arg;
    *p += 1;
    return NULL;
}

START_TEST(every_part_runs_once)
{
    int runs[PARTS];
    for (int n = 1; n <= PARTS; n += 23) {
        memset(runs, 0, sizeof(runs));
        tpb_run_parts(n, mark, runs, sizeof(runs[0]));
        for (int t = 0; t < PARTS; t++)
            ck_assert_int_eq(runs[t], t < n); /* beyond the threads: run here, once */
    }
    ck_assert(tpb_cpus() >= 1);
}
END_TEST

static size_t page_size(void)
{
    long ps = sysconf(_SC_PAGESIZE);
    return ps > 0 ? (size_t)ps : 4096;
}

/* The pages of [m, m + pages pages) present: each 1 or 0 into in[]. */
static void present(unsigned char *m, size_t pages, unsigned char *in)
{
    ck_assert_int_eq(mincore(m, pages * page_size(), in), 0);
    for (size_t i = 0; i < pages; i++)
        in[i] &= 1;
}

/* A fresh mapping of 40 MiB, its first and last pages written (their bytes 7 and 9), populated
 * from 100 bytes into the first page to 100 bytes before the end of the last (`touch` as
 * tpb_populate_by, 2 threads): the pages between present, the first and last as they were
 * (written, not populated: partial pages are not tpb_populate's), every byte unchanged.
 * Returns 0 where the kernel refused madvise. */
static int populate_way(int touch)
{
    size_t ps = page_size(), pages = 40 * MIB / ps, bytes = pages * ps;
    unsigned char *m =
        mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert(m != MAP_FAILED);
    unsigned char *in = malloc(pages);
    ck_assert(in != NULL);
    present(m, pages, in);
    for (size_t i = 0; i < pages; i++)
        ck_assert_int_eq(in[i], 0); /* fresh: nothing present yet */
    m[3 * ps] = 11;                 /* a page present and written before: left as it is */
    int done = tpb_populate_by(m + 100, bytes - 200, 2, touch);
    if (done) {
        present(m, pages, in);
        ck_assert_int_eq(in[0], 0); /* partial pages: not touched */
        ck_assert_int_eq(in[pages - 1], 0);
        size_t absent = 0;
        for (size_t i = 1; i + 1 < pages; i++)
            absent += !in[i];
        ck_assert_uint_eq(absent, 0);
        size_t bad = 0;
        for (size_t i = 0; i < bytes; i++)
            bad += m[i] != (i == 3 * ps ? 11 : 0);
        ck_assert_uint_eq(bad, 0);
    }
    free(in);
    munmap(m, bytes);
    return done;
}

START_TEST(pages_present_contents_unchanged)
{
    ck_assert_int_eq(populate_way(1), 1);
    if (!populate_way(0)) /* Linux < 5.14: the reads and writes back alone */
        fprintf(stderr, "test_threads: MADV_POPULATE_WRITE refused by this kernel\n");
    size_t bytes = 32 * MIB, pages = bytes / page_size();
    unsigned char *m =
        mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    unsigned char *in = malloc(pages);
    ck_assert(m != MAP_FAILED && in != NULL);
    tpb_populate(m, bytes, 0); /* either way, the CPUs' threads */
    present(m, pages, in);
    for (size_t i = 0; i < pages; i++)
        ck_assert_int_eq(in[i], 1);
    tpb_populate(NULL, bytes, 0); /* nothing: no crash */
    tpb_populate(m, 10, 0);       /* no whole page */
    free(in);
    munmap(m, bytes);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("threads");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, every_part_runs_once);
    tcase_add_test(tc, pages_present_contents_unchanged);
    suite_add_tcase(s, tc);
    return s;
}

TPB_TEST_MAIN(suite)
