/* test_cores.c - cores shared by the ranks of a node, and the BLAS threads that fit. */
#include <string.h>

#include "base/cores.h"
#include "tpb_test.h"

/* n sets of cores [lo, hi] */
static void ranges(tpb_coreset_t *s, int n, const int lo[], const int hi[])
{
    for (int r = 0; r < n; r++) {
        tpb_coreset_clear(&s[r]);
        for (int c = lo[r]; c <= hi[r]; c++)
            tpb_coreset_add(&s[r], c);
    }
}

START_TEST(sets)
{
    tpb_coreset_t s;
    tpb_coreset_clear(&s);
    tpb_coreset_add(&s, 0);
    tpb_coreset_add(&s, 63);
    tpb_coreset_add(&s, 64);
    tpb_coreset_add(&s, TPB_CORESET_MAX - 1);
    tpb_coreset_add(&s, TPB_CORESET_MAX); /* out of range: ignored */
    tpb_coreset_add(&s, -1);
    ck_assert_int_eq(tpb_coreset_count(&s), 4);
    ck_assert(tpb_coreset_has(&s, 63) && tpb_coreset_has(&s, 64) && !tpb_coreset_has(&s, 65));
    ck_assert(!tpb_coreset_has(&s, -1) && !tpb_coreset_has(&s, TPB_CORESET_MAX));
}
END_TEST

START_TEST(unbound_ranks_split_the_node)
{
    /* --bind-to none: 2 ranks, both on cores 0-1 -> one core's worth, one thread each */
    tpb_coreset_t s[4];
    ranges(s, 2, (int[]){0, 0}, (int[]){1, 1});
    tpb_core_share_t a = tpb_core_share(s, 2, 0), b = tpb_core_share(s, 2, 1);
    ck_assert_double_eq_tol(a.share, 1.0, 1e-12);
    ck_assert_int_eq(a.threads, 1);
    ck_assert_int_eq(a.sharing, 2);
    ck_assert_int_eq(b.threads, 1);
    /* 4 ranks on 2 cores: half a core each, still one thread */
    ranges(s, 4, (int[]){0, 0, 0, 0}, (int[]){1, 1, 1, 1});
    a = tpb_core_share(s, 4, 3);
    ck_assert_double_eq_tol(a.share, 0.5, 1e-12);
    ck_assert_int_eq(a.threads, 1);
    ck_assert_int_eq(a.sharing, 4);
    /* 2 ranks on a 16-core socket: 8 threads each */
    ranges(s, 2, (int[]){0, 0}, (int[]){15, 15});
    ck_assert_int_eq(tpb_core_share(s, 2, 1).threads, 8);
}
END_TEST

START_TEST(bound_and_uneven)
{
    tpb_coreset_t s[3];
    /* --bind-to core: alone on its core */
    ranges(s, 2, (int[]){0, 1}, (int[]){0, 1});
    tpb_core_share_t a = tpb_core_share(s, 2, 0);
    ck_assert_double_eq_tol(a.share, 1.0, 1e-12);
    ck_assert_int_eq(a.sharing, 1);
    ck_assert_int_eq(a.threads, 1);
    /* one rank on 0-3, another bound to core 0: 3.5 and 0.5 cores, 3 + 1 threads */
    ranges(s, 2, (int[]){0, 0}, (int[]){3, 0});
    a = tpb_core_share(s, 2, 0);
    tpb_core_share_t b = tpb_core_share(s, 2, 1);
    ck_assert_double_eq_tol(a.share, 3.5, 1e-12);
    ck_assert_double_eq_tol(b.share, 0.5, 1e-12);
    ck_assert_int_eq(a.threads + b.threads, 4);
    /* two sockets of 4 cores, 3 ranks: two on socket 0, one alone on socket 1 */
    ranges(s, 3, (int[]){0, 0, 4}, (int[]){3, 3, 7});
    ck_assert_int_eq(tpb_core_share(s, 3, 0).threads, 2);
    ck_assert_int_eq(tpb_core_share(s, 3, 2).threads, 4);
    ck_assert_int_eq(tpb_core_share(s, 3, 2).sharing, 1);
    /* no core known, or a rank out of range: one thread, alone */
    tpb_coreset_clear(&s[0]);
    a = tpb_core_share(s, 1, 0);
    ck_assert_int_eq(a.threads, 1);
    ck_assert_int_eq(a.sharing, 1);
    ck_assert_double_eq(a.share, 0.0);
    ck_assert_int_eq(tpb_core_share(s, 1, 5).threads, 1);
}
END_TEST

START_TEST(threads_chosen_and_noted)
{
    const char *none[3] = {NULL, NULL, NULL};
    tpb_threads_choice_t c = tpb_threads_choose(0, none, 3);
    ck_assert_int_eq(c.threads, 3);
    ck_assert_str_eq(c.from, "auto");
    c = tpb_threads_choose(2, (const char *[3]){"8", NULL, NULL}, 3); /* --threads wins */
    ck_assert_int_eq(c.threads, 2);
    ck_assert_str_eq(c.from, "--threads");
    /* OpenBLAS's own order; an OpenMP list gives its first level; junk is skipped */
    c = tpb_threads_choose(0, (const char *[3]){"x", "0", "4,2"}, 1);
    ck_assert_int_eq(c.threads, 4);
    ck_assert_str_eq(c.from, "OMP_NUM_THREADS");
    c = tpb_threads_choose(0, (const char *[3]){"6", NULL, "4"}, 1);
    ck_assert_str_eq(c.from, "OPENBLAS_NUM_THREADS");
    ck_assert_int_eq(tpb_threads_choose(0, (const char *[3]){"4x", "-1", ""}, 1).threads, 1);

    /* two unbound ranks on 2 cores: a note on sharing; 2 threads each: oversubscribed */
    tpb_core_share_t sh = {1.0, 2, 1};
    char note[192];
    tpb_threads_choice_t one = {1, "auto"}, two = {2, "OPENBLAS_NUM_THREADS"};
    tpb_threads_note(&sh, &one, "0-1", note, sizeof(note));
    ck_assert_ptr_nonnull(strstr(note, "cpus 0-1 shared by 2 ranks"));
    tpb_threads_note(&sh, &two, "0-1", note, sizeof(note));
    ck_assert_ptr_nonnull(strstr(note, "oversubscribed"));
    ck_assert_ptr_nonnull(strstr(note, "unset OPENBLAS_NUM_THREADS or pass --threads 1"));
    ck_assert_double_eq(tpb_cores_used(&sh, 2), 1.0); /* the peak counts 1 core, not 2 */
    /* alone on 4 cores with 4 threads: nothing to say; 3.5 cores take 4 threads */
    tpb_core_share_t alone = {4.0, 1, 4}, most = {3.5, 2, 3};
    tpb_threads_choice_t four = {4, "auto"};
    tpb_threads_note(&alone, &four, "0-3", note, sizeof(note));
    ck_assert_str_eq(note, "");
    tpb_threads_note(&most, &four, "0-3", note, sizeof(note));
    ck_assert_ptr_null(strstr(note, "oversubscribed"));
    ck_assert_double_eq(tpb_cores_used(&alone, 2), 2.0);
    tpb_core_share_t unknown = {0.0, 1, 1};
    ck_assert_double_eq(tpb_cores_used(&unknown, 3), 3.0);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("cores");
    TCase *tc = tcase_create("cores");
    tcase_add_test(tc, sets);
    tcase_add_test(tc, unbound_ranks_split_the_node);
    tcase_add_test(tc, bound_and_uneven);
    tcase_add_test(tc, threads_chosen_and_noted);
    suite_add_tcase(s, tc);
    return s;
}

TPB_TEST_MAIN(suite)
