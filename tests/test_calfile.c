/* test_calfile.c - the calibration file: round trip, old format, refused values. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "record/calfile.h"
#include "tpb_test.h"

START_TEST(calibration_file)
{
    char dir[] = "/tmp/tpbal-test-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof(path), "%s/cal.csv", dir);
    tpb_calfile_t t = {0}, u = {0};
    ck_assert_int_eq(tpb_calfile_load(path, &t), TPB_OK); /* missing file: empty */
    ck_assert_int_eq(t.n, 0);
    tpb_cal_entry_t e = {.split = TPB_SPLIT_COL,
                         .m = 64,
                         .n = 128,
                         .k = 256,
                         .tp = 2,
                         .dtype = TPB_DTYPE_FP32,
                         .rank = 0,
                         .host = "node,a",
                         .gflops = 12.5,
                         .spread = 0.031,
                         .samples = 12};
    ck_assert_int_eq(tpb_calfile_put(&t, &e), TPB_OK);
    e.rank = 1;
    e.gflops = 6.25;
    ck_assert_int_eq(tpb_calfile_put(&t, &e), TPB_OK);
    e.gflops = 6.5; /* replaces rank 1 */
    ck_assert_int_eq(tpb_calfile_put(&t, &e), TPB_OK);
    ck_assert_int_eq(t.n, 2);
    ck_assert_int_eq(tpb_calfile_save(path, &t), TPB_OK);
    ck_assert_int_eq(tpb_calfile_load(path, &u), TPB_OK);
    tpb_cal_speed_t g[2];
    /* a config's key: the fields beyond TPB_CAL_KEY (policy, sequence parallelism, ...) do
     * not change a rank's speed */
    tpb_config_key_t k = {.split = TPB_SPLIT_COL,
                          .m = 64,
                          .n = 128,
                          .k = 256,
                          .tp = 2,
                          .policy = TPB_POLICY_WEIGHTED,
                          .seqpar = TPB_SEQPAR_ON,
                          .shape_name = "up"};
    ck_assert_int_eq(tpb_calfile_lookup(&u, &k, TPB_DTYPE_FP32, 0, 2, NULL, g, NULL), 1);
    ck_assert_double_eq(g[0].speed, 12.5);
    ck_assert_double_eq(g[1].speed, 6.5);
    ck_assert_double_eq_tol(g[0].spread, 0.031, 1e-12); /* the spread is kept */
    ck_assert_int_eq(g[0].samples, 12);
    ck_assert_str_eq(u.e[0].host, "node,a");
    k.split = TPB_SPLIT_ROW;
    ck_assert_int_eq(tpb_calfile_lookup(&u, &k, TPB_DTYPE_FP32, 0, 2, NULL, g, NULL), 0);
    k.split = TPB_SPLIT_COL;
    k.tp = 4; /* another TP degree: not this calibration */
    ck_assert_int_eq(tpb_calfile_lookup(&u, &k, TPB_DTYPE_FP32, 0, 2, NULL, g, NULL), 0);
    tpb_calfile_free(&u);
    char bad[] = "split,m,n,k,tp,dtype,rank,host,gflops\ncol,1,2,3,2,fp32,0,h,-1\n";
    ck_assert_int_eq(tpb_calfile_parse(bad, "x.csv", &u), TPB_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(tpb_err_msg(), "x.csv:2"));
    /* an infinite or NaN speed is refused on reading, so it is never written back */
    char inf[] = "split,m,n,k,tp,dtype,rank,host,gflops,spread,samples\n"
                 "col,1,2,3,2,fp32,0,h,inf,0.01,8\n";
    ck_assert_int_eq(tpb_calfile_parse(inf, "x.csv", &u), TPB_ERR_INVALID);
    char nan[] = "split,m,n,k,tp,dtype,rank,host,gflops\ncol,1,2,3,2,fp32,0,h,nan\n";
    ck_assert_int_eq(tpb_calfile_parse(nan, "x.csv", &u), TPB_ERR_INVALID);
    /* huge numbers are refused, not wrapped */
    char big[] = "split,m,n,k,tp,dtype,rank,host,gflops\ncol,1,2,3,4294967298,fp32,0,h,1\n";
    ck_assert_int_eq(tpb_calfile_parse(big, "x.csv", &u), TPB_ERR_INVALID);
    /* the first format (no spread, no samples) is still read */
    char v1[] = "split,m,n,k,tp,dtype,rank,host,gflops\ncol,1,2,3,2,fp32,0,h,7.5\n";
    ck_assert_int_eq(tpb_calfile_parse(v1, "x.csv", &u), TPB_OK);
    ck_assert_int_eq(u.n, 1);
    ck_assert_double_eq(u.e[0].gflops, 7.5);
    ck_assert(isnan(u.e[0].spread));
    tpb_calfile_free(&u);
    /* a host name that fits as bytes but not as written (each byte that is not UTF-8 written
     * as two): refused, so that what is accepted reads back (found by fuzz_calfile) */
    char host[200] = "split,m,n,k,tp,dtype,rank,host,gflops\ncol,1,2,3,2,fp32,0,";
    size_t at = strlen(host);
    memset(host + at, 0xff, 40); /* 40 bytes, 80 as written */
    strcpy(host + at + 40, ",7.5\n");
    ck_assert_int_eq(tpb_calfile_parse(host, "x.csv", &u), TPB_ERR_INVALID);
    ck_assert_msg(strstr(tpb_err_msg(), "the host name has 80 bytes as written"), "%s",
                  tpb_err_msg());
    tpb_calfile_free(&u);
    char wrong[] = "hello\n";
    ck_assert_int_eq(tpb_calfile_parse(wrong, "x.csv", &u), TPB_ERR_INVALID);
    tpb_calfile_free(&u);
    tpb_calfile_free(&t);
    unlink(path);
    rmdir(dir);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("calfile");
    TCase *tc = tcase_create("calfile");
    tcase_add_test(tc, calibration_file);
    suite_add_tcase(s, tc);
    return s;
}

TPB_TEST_MAIN(suite)
