/* test_slurm.c - Slurm's environment and hostlists, read through a table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/slurm.h"
#include "tpb_test.h"

static const char *const *table; /* NAME, VALUE, ..., NULL */

static const char *fake_env(const char *name)
{
    for (int i = 0; table && table[i]; i += 2)
        if (strcmp(table[i], name) == 0)
            return table[i + 1];
    return NULL;
}

START_TEST(hostlists)
{
    static char n[64][TPB_SLURM_NAME_LEN];
    ck_assert_int_eq(tpb_hostlist_expand("node[01-03,07]", n, 64), 4);
    ck_assert_str_eq(n[0], "node01");
    ck_assert_str_eq(n[2], "node03");
    ck_assert_str_eq(n[3], "node07");
    ck_assert_int_eq(tpb_hostlist_expand("a1,gpu[8-10],login", n, 64), 5);
    ck_assert_str_eq(n[0], "a1");
    ck_assert_str_eq(n[1], "gpu8");
    ck_assert_str_eq(n[3], "gpu10");
    ck_assert_str_eq(n[4], "login");
    ck_assert_int_eq(tpb_hostlist_expand("vm", n, 64), 1);
    ck_assert_str_eq(n[0], "vm");
    /* several bracket groups: the first outermost, as scontrol show hostnames gives them */
    ck_assert_int_eq(tpb_hostlist_expand("rack[1-2]-n[1-4]", n, 64), 8);
    ck_assert_str_eq(n[0], "rack1-n1");
    ck_assert_str_eq(n[3], "rack1-n4");
    ck_assert_str_eq(n[4], "rack2-n1");
    ck_assert_str_eq(n[7], "rack2-n4");
    ck_assert_int_eq(tpb_hostlist_expand("r[1,3]n[08-09],login", n, 64), 5);
    ck_assert_str_eq(n[1], "r1n09");
    ck_assert_str_eq(n[2], "r3n08");
    ck_assert_str_eq(n[4], "login");
    ck_assert_int_eq(tpb_hostlist_expand("a[1-2]b", n, 64), -1); /* as scontrol refuses */
    /* a name to the system's limit (64 characters) is kept whole */
    char longname[80];
    memset(longname, 'h', 64);
    longname[64] = '\0';
    ck_assert_int_eq(tpb_hostlist_expand(longname, n, 64), 1);
    ck_assert_str_eq(n[0], longname);
    /* malformed or too many: refused, never half-read */
    ck_assert_int_eq(tpb_hostlist_expand("node[1-", n, 64), -1);
    ck_assert_int_eq(tpb_hostlist_expand("node[3-1]", n, 64), -1);
    ck_assert_int_eq(tpb_hostlist_expand("node[a-b]", n, 64), -1);
    ck_assert_int_eq(tpb_hostlist_expand("a,,b", n, 64), -1);
    ck_assert_int_eq(tpb_hostlist_expand("", n, 64), -1);
    ck_assert_int_eq(tpb_hostlist_expand("n[1-100]", n, 64), -1);
    ck_assert_int_eq(tpb_hostlist_expand("n[]", n, 64), -1);
    ck_assert_int_eq(tpb_hostlist_expand("n[1-2][3", n, 64), -1);
}
END_TEST

/* Control characters in Slurm's variables (the header prints them): '?', the rest whole. */
START_TEST(control_characters)
{
    static const char *const job[] = {"SLURM_JOB_ID", "7", "SLURM_CLUSTER_NAME", "c\x1b[2Jx\x07y",
                                      NULL};
    tpb_slurm_t s;
    table = job;
    ck_assert_int_eq(tpb_slurm_from_env(&s, fake_env), TPB_OK);
    ck_assert_str_eq(s.cluster, "c?[2Jx?y");
    tpb_slurm_free(&s);
    table = NULL;
}
END_TEST

START_TEST(environment)
{
    tpb_slurm_t s;
    table = NULL;
    tpb_slurm_from_env(&s, fake_env);
    ck_assert_int_eq(s.present, 0); /* nothing invented without Slurm */
    ck_assert_str_eq(s.job_id, "");
    tpb_slurm_free(&s);
    static const char *const job[] = {"SLURM_JOB_ID",
                                      "4242",
                                      "SLURM_STEP_ID",
                                      "0",
                                      "SLURM_CLUSTER_NAME",
                                      "c1",
                                      "SLURM_JOB_PARTITION",
                                      "gpu",
                                      "SLURM_JOB_NODELIST",
                                      "n[1-2]",
                                      "SLURM_TASKS_PER_NODE",
                                      "2(x2)",
                                      "SLURM_STEP_NUM_TASKS",
                                      "4",
                                      "SLURM_CPUS_PER_TASK",
                                      "8",
                                      "SLURM_GPUS_PER_TASK",
                                      "1",
                                      NULL};
    table = job;
    tpb_slurm_from_env(&s, fake_env);
    ck_assert_int_eq(s.present, 1);
    ck_assert_str_eq(s.job_id, "4242");
    ck_assert_str_eq(s.partition, "gpu");
    ck_assert_int_eq(s.ntasks, 4);
    ck_assert_int_eq(s.cpus_per_task, 8);
    ck_assert_str_eq(s.gpus_per_task, "1");
    ck_assert_int_eq(tpb_slurm_world_mismatch(&s, 1), 1); /* 4 tasks, each alone */
    ck_assert_int_eq(tpb_slurm_world_mismatch(&s, 4), 0);
    tpb_slurm_free(&s);
}
END_TEST

START_TEST(missing_pmi)
{
    int tasks;
    static const char *const none[] = {
        "SLURM_JOB_ID", "1", "SLURM_STEP_NUM_TASKS", "2", "SLURM_PROCID", "0", NULL};
    table = none;
    ck_assert_int_eq(tpb_slurm_missing_pmi(fake_env, &tasks), 1);
    ck_assert_int_eq(tasks, 2);
    static const char *const pmix[] = {"SLURM_JOB_ID",
                                       "1",
                                       "SLURM_STEP_NUM_TASKS",
                                       "2",
                                       "SLURM_PROCID",
                                       "0",
                                       "PMIX_RANK",
                                       "0",
                                       NULL};
    table = pmix;
    ck_assert_int_eq(tpb_slurm_missing_pmi(fake_env, &tasks), 0);
    static const char *const one[] = {
        "SLURM_JOB_ID", "1", "SLURM_STEP_NUM_TASKS", "1", "SLURM_PROCID", "0", NULL};
    table = one; /* a single task needs no PMI */
    ck_assert_int_eq(tpb_slurm_missing_pmi(fake_env, &tasks), 0);
    table = NULL; /* not under Slurm at all */
    ck_assert_int_eq(tpb_slurm_missing_pmi(fake_env, &tasks), 0);
}
END_TEST

START_TEST(long_nodelist_kept_whole)
{
    /* 3000 nodes listed one by one: ~20 KiB, far beyond any fixed buffer */
    size_t cap = 3000 * 12 + 1;
    char *list = malloc(cap), *p = list;
    for (int i = 0; i < 3000; i++)
        p += sprintf(p, "%snode%05d", i ? "," : "", i);
    const char *env[] = {"SLURM_JOB_ID", "7", "SLURM_JOB_NODELIST", list, NULL};
    table = env;
    tpb_slurm_t s;
    ck_assert_int_eq(tpb_slurm_from_env(&s, fake_env), TPB_OK);
    ck_assert_str_eq(s.nodelist, list);
    static char names[3000][TPB_SLURM_NAME_LEN];
    ck_assert_int_eq(tpb_hostlist_expand(s.nodelist, names, 3000), 3000);
    ck_assert_str_eq(names[2999], "node02999");
    tpb_slurm_free(&s);
    ck_assert_str_eq(s.nodelist, "");
    free(list);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("slurm");
    TCase *tc = tcase_create("slurm");
    tcase_add_test(tc, hostlists);
    tcase_add_test(tc, control_characters);
    tcase_add_test(tc, environment);
    tcase_add_test(tc, long_nodelist_kept_whole);
    tcase_add_test(tc, missing_pmi);
    suite_add_tcase(s, tc);
    return s;
}

TPB_TEST_MAIN(suite)
