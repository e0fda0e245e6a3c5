/* test_cpuload.c - other processes' share of a machine's CPUs, from /proc/stat's text (known
 * answers) and from this machine while a child spins (the share can be told apart from 0). */
#include <math.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/cpuload.h"
#include "tpb_test.h"

START_TEST(parse_known_text)
{
    /* user nice system idle iowait irq softirq steal: busy = all but idle and iowait */
    const char *stat = "cpu  100 20 30 900 50 5 5 40 0 0\n"
                       "cpu0 50 10 15 450 25 2 3 20 0 0\n"
                       "cpu1 50 10 15 450 25 3 2 20 0 0\n"
                       "intr 12345\nctxt 678\n";
    double busy = 0;
    int n = 0;
    ck_assert_int_eq(tpb_cpuload_parse(stat, 100, &busy, &n), 0);
    ck_assert_double_eq_tol(busy, 2.0, 1e-12); /* (100 + 20 + 30 + 5 + 5 + 40) / 100 */
    ck_assert_int_eq(n, 2);
    ck_assert_int_eq(tpb_cpuload_parse("intr 1\n", 100, &busy, &n), -1);
    ck_assert_int_eq(tpb_cpuload_parse(NULL, 100, &busy, &n), -1);
    ck_assert_int_eq(tpb_cpuload_parse(stat, 0, &busy, &n), -1);
    ck_assert_int_eq(tpb_cpuload_parse("xcpu 1 2 3 4\n", 100, &busy, &n), -1);
}
END_TEST

START_TEST(share_of_others)
{
    /* 2 CPUs for 10 s: 20 CPU-s; the machine busy 15 s of them, the run's ranks 10: 25 % */
    ck_assert_double_eq_tol(tpb_cpuload_others(100.0, 115.0, 10.0, 10.0, 2), 0.25, 1e-12);
    ck_assert_double_eq(tpb_cpuload_others(100.0, 108.0, 10.0, 10.0, 2), 0.0); /* own > busy */
    ck_assert_double_eq(tpb_cpuload_others(0.0, 100.0, 0.0, 10.0, 2), 1.0);    /* at most all */
    ck_assert(isnan(tpb_cpuload_others(100.0, 90.0, 1.0, 10.0, 2)));           /* went backwards */
    ck_assert(isnan(tpb_cpuload_others(100.0, 110.0, 1.0, 0.0, 2)));
    ck_assert(isnan(tpb_cpuload_others(100.0, 110.0, 1.0, 10.0, 0)));
    ck_assert(isnan(tpb_cpuload_others(100.0, 110.0, NAN, 10.0, 2)));
}
END_TEST

/* This machine: a child that spins for 0.6 s beside us shows as others' CPU time (at least
 * a tenth of one CPU's share over the interval, whatever else runs here: it can only add),
 * and the machine's id is the same at both ends. */
START_TEST(a_spinning_child_is_others)
{
    double b0, b1;
    int n0, n1;
    uint64_t m0, m1;
    if (tpb_cpuload_read(&b0, &n0, &m0) != 0)
        return; /* no /proc/stat: not Linux */
    double t0 = (tpb_clock_now_us(NULL) * 1e-6), self0 = tpb_cpuload_self();
    pid_t pid = fork();
    if (pid == 0) {
        volatile unsigned long x = 0;
        double end = (tpb_clock_now_us(NULL) * 1e-6) + 0.6;
        while ((tpb_clock_now_us(NULL) * 1e-6) < end)
            x++;
        _exit(0);
    }
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_int_eq(tpb_cpuload_read(&b1, &n1, &m1), 0);
    double share = tpb_cpuload_others(b0, b1, tpb_cpuload_self() - self0,
                                      (tpb_clock_now_us(NULL) * 1e-6) - t0, n1);
    ck_assert_int_eq(m0, m1);
    ck_assert_int_ge(n1, 1);
    ck_assert_msg(share >= 0.1 / n1, "others' share %.3f with a child spinning", share);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("cpuload");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, parse_known_text);
    tcase_add_test(tc, share_of_others);
    tcase_add_test(tc, a_spinning_child_is_others);
    suite_add_tcase(s, tc);
    return s;
}

TPB_TEST_MAIN(suite)
