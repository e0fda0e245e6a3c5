/* test_buf.c - JSON and CSV writers, result records, the calibration file, atomic files. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "calibrate.h"
#include "outfile.h"
#include "report.h"
#include "tpb_test.h"

START_TEST(json_escaping_round_trip)
{
    const char *cases[] = {
        "plain", "quote \" and \\ backslash", "tab\tnl\ncr\r", "\x01\x1f", "utf-8 é 中", ""};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        tpb_buf_t b = TPB_BUF_INIT;
        tpb_json_str(&b, cases[i]);
        ck_assert(!strchr(tpb_buf_str(&b) + 1, '\n'));
        char out[128];
        const char *end;
        ck_assert_int_eq(tpb_json_unescape(tpb_buf_str(&b), out, sizeof(out), &end),
                         (long)strlen(cases[i]));
        ck_assert_str_eq(out, cases[i]);
        ck_assert_int_eq(*end, '\0');
        tpb_buf_free(&b);
    }
    char out[8];
    ck_assert_int_eq(tpb_json_unescape("\"\\u00e9\"", out, sizeof(out), NULL), 2);
    ck_assert_str_eq(out, "é");
    ck_assert_int_eq(tpb_json_unescape("\"unterminated", out, sizeof(out), NULL), -1);
    ck_assert_int_eq(tpb_json_unescape("\"\\q\"", out, sizeof(out), NULL), -1);
}
END_TEST

START_TEST(json_numbers_round_trip)
{
    double v[] = {0.0, 1.0, -2.5, 0.1, 1.0 / 3.0, 6.02214076e23, 5e-324, 123456789.123456789};
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        tpb_buf_t b = TPB_BUF_INIT;
        tpb_json_num(&b, v[i]);
        ck_assert(strtod(tpb_buf_str(&b), NULL) == v[i]);
        tpb_buf_free(&b);
    }
    tpb_buf_t b = TPB_BUF_INIT;
    tpb_json_num(&b, 0.1);
    ck_assert_str_eq(tpb_buf_str(&b), "0.1"); /* shortest form */
    tpb_buf_reset(&b);
    tpb_json_arr_begin(&b);
    tpb_json_num(&b, NAN);
    tpb_json_num(&b, INFINITY);
    tpb_json_int(&b, -3);
    tpb_json_arr_end(&b);
    ck_assert_str_eq(tpb_buf_str(&b), "[null,null,-3]");
    tpb_buf_free(&b);
}
END_TEST

START_TEST(json_objects)
{
    tpb_buf_t b = TPB_BUF_INIT;
    double d[2] = {1.5, NAN};
    long l[3] = {1, 2, 3};
    tpb_json_obj_begin(&b);
    tpb_json_kv_str(&b, "a", "x");
    tpb_json_kv_int(&b, "b", 2);
    tpb_json_kv_nums(&b, "c", d, 2);
    tpb_json_kv_longs(&b, "d", l, 3);
    tpb_json_key(&b, "e");
    tpb_json_obj_begin(&b);
    tpb_json_obj_end(&b);
    tpb_json_kv_str(&b, "f", NULL);
    tpb_json_obj_end(&b);
    ck_assert_str_eq(tpb_buf_str(&b),
                     "{\"a\":\"x\",\"b\":2,\"c\":[1.5,null],\"d\":[1,2,3],\"e\":{},\"f\":null}");
    tpb_buf_free(&b);
}
END_TEST

START_TEST(csv_round_trip)
{
    const char *fields[] = {"plain", "with,comma", "with \"quotes\"", "multi\nline", "", "x"};
    tpb_buf_t b = TPB_BUF_INIT;
    for (int i = 0; i < 6; i++) {
        if (i)
            tpb_buf_puts(&b, ",");
        tpb_csv_field(&b, fields[i]);
    }
    char *line = strdup(tpb_buf_str(&b)), *f[8];
    ck_assert_int_eq(tpb_csv_split(line, f, 8), 6);
    for (int i = 0; i < 6; i++)
        ck_assert_str_eq(f[i], fields[i]);
    free(line);
    tpb_buf_reset(&b);
    tpb_csv_num(&b, 2.5);
    tpb_buf_puts(&b, ",");
    tpb_csv_num(&b, NAN);
    ck_assert_str_eq(tpb_buf_str(&b), "2.5,");
    tpb_buf_free(&b);
    char bad1[] = "\"open", bad2[] = "a\"b", many[] = "1,2,3";
    ck_assert_int_eq(tpb_csv_split(bad1, f, 8), -1);
    ck_assert_int_eq(tpb_csv_split(bad2, f, 8), -1);
    ck_assert_int_eq(tpb_csv_split(many, f, 2), -1);
}
END_TEST

/* A two-rank result with every field set, for the writers. */
static void sample_result(tpb_result_t *r, tpb_rank_info_t *info, tpb_rank_stats_t *ranks)
{
    memset(r, 0, sizeof(*r));
    for (int i = 0; i < 2; i++) {
        info[i] = (tpb_rank_info_t){.shard = 100 + i,
                                    .speed = 1.0 + i,
                                    .fraction = 0.5,
                                    .flop = 1e6,
                                    .mem = 4096,
                                    .max_err = 1e-7,
                                    .speed_spread = 0.02,
                                    .speed_samples = 8};
        memset(&ranks[i], 0, sizeof(ranks[i]));
        ranks[i].compute_med = 10.0 * (i + 1);
        ranks[i].wait_med = 10.0 * (1 - i);
        ranks[i].comm_med = 2.0;
    }
    r->id = 3;
    r->backend = "host";
    r->world = r->tp = 2;
    r->iters = 10;
    r->split = TPB_SPLIT_COL;
    r->policy = TPB_POLICY_WEIGHTED;
    r->m = 4;
    r->n = 201;
    r->k = 8;
    r->dtype = TPB_DTYPE_FP32;
    snprintf(r->shape_name, sizeof(r->shape_name), "qkv,\"proj\"");
    r->speed_source = "calibration";
    r->info = info;
    r->ranks = ranks;
    r->stats.step_med = 22;
    r->stats.straggler_rank = 1;
    r->stats.straggler_frac = 1.0;
    r->stats.nspikes = 1;
    r->stats.spikes[0] = (tpb_spike_t){4, 1, 50.0};
    r->check = "pass";
    r->speedup = NAN;
}

START_TEST(result_records)
{
    tpb_result_t r;
    tpb_rank_info_t info[2];
    tpb_rank_stats_t ranks[2];
    sample_result(&r, info, ranks);
    tpb_buf_t b = TPB_BUF_INIT;
    tpb_report_json(&b, &r);
    const char *keys[] = {"\"backend\":\"host\"",
                          "\"world_size\":2",
                          "\"tp\":2",
                          "\"split\":\"col\"",
                          "\"policy\":\"weighted\"",
                          "\"m\":4",
                          "\"n\":201",
                          "\"k\":8",
                          "\"dtype\":\"fp32\"",
                          "\"iters\":10",
                          "\"shards\":[100,101]",
                          "\"speeds\":[1,2]",
                          "\"step_us\":{\"median\":22",
                          "\"compute_us\":[10,20]",
                          "\"comm_us\":[2,2]",
                          "\"wait_us\":[10,0]",
                          "\"lb\":",
                          "\"u\":",
                          "\"e\":",
                          "\"tflops\":",
                          "\"busbw_gbs\":",
                          "\"straggler_rank\":1",
                          "\"check\":\"pass\"",
                          "\"speedup\":null",
                          "\"spikes\":[{\"iter\":4,\"rank\":1,\"step_us\":50}]",
                          "\"shape\":\"qkv,\\\"proj\\\"\""};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        ck_assert_msg(strstr(tpb_buf_str(&b), keys[i]), "missing %s", keys[i]);
    ck_assert_int_eq(strchr(tpb_buf_str(&b), '\n') - tpb_buf_str(&b), (long)b.len - 1);
    /* the table row: straggler "1:100%", its lateness, spikes "1@1", check */
    tpb_buf_t t = TPB_BUF_INIT;
    r.stats.straggler_late_us = 1234.5;
    tpb_report_table_row(&t, &r);
    ck_assert_ptr_nonnull(strstr(tpb_buf_str(&t), " 1:100%   1234.5      1@1  pass\n"));
    tpb_buf_free(&t);
    /* CSV: as many fields in the row as in the header, after unquoting */
    tpb_buf_t h = TPB_BUF_INIT, row = TPB_BUF_INIT;
    tpb_report_csv_header(&h);
    tpb_report_csv_row(&row, &r);
    char *hl = strdup(tpb_buf_str(&h)), *rl = strdup(tpb_buf_str(&row)), *f1[64], *f2[64];
    hl[strcspn(hl, "\n")] = '\0';
    rl[strlen(rl) - 1] = '\0';
    int nh = tpb_csv_split(hl, f1, 64), nr = tpb_csv_split(rl, f2, 64);
    ck_assert_int_gt(nh, 20);
    ck_assert_int_eq(nh, nr);
    ck_assert_str_eq(f2[7], "qkv,\"proj\"");
    ck_assert_str_eq(f2[13], "100;101");
    free(hl);
    free(rl);
    tpb_buf_free(&h);
    tpb_buf_free(&row);
    tpb_buf_free(&b);
}
END_TEST

START_TEST(calibration_file)
{
    char dir[] = "/tmp/tpbal-test-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof(path), "%s/cal.csv", dir);
    tpb_cal_table_t t = {0}, u = {0};
    ck_assert_int_eq(tpb_caltable_load(path, &t), TPB_OK); /* missing file: empty */
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
    ck_assert_int_eq(tpb_caltable_put(&t, &e), TPB_OK);
    e.rank = 1;
    e.gflops = 6.25;
    ck_assert_int_eq(tpb_caltable_put(&t, &e), TPB_OK);
    e.gflops = 6.5; /* replaces rank 1 */
    ck_assert_int_eq(tpb_caltable_put(&t, &e), TPB_OK);
    ck_assert_int_eq(t.n, 2);
    ck_assert_int_eq(tpb_caltable_save(path, &t), TPB_OK);
    ck_assert_int_eq(tpb_caltable_load(path, &u), TPB_OK);
    tpb_cal_speed_t g[2];
    ck_assert_int_eq(
        tpb_caltable_lookup(&u, TPB_SPLIT_COL, 64, 128, 256, 2, TPB_DTYPE_FP32, 0, 2, g), 1);
    ck_assert_double_eq(g[0].gflops, 12.5);
    ck_assert_double_eq(g[1].gflops, 6.5);
    ck_assert_double_eq_tol(g[0].spread, 0.031, 1e-12); /* the spread is kept */
    ck_assert_int_eq(g[0].samples, 12);
    ck_assert_str_eq(u.e[0].host, "node,a");
    ck_assert_int_eq(
        tpb_caltable_lookup(&u, TPB_SPLIT_ROW, 64, 128, 256, 2, TPB_DTYPE_FP32, 0, 2, g), 0);
    tpb_caltable_free(&u);
    char bad[] = "split,m,n,k,tp,dtype,rank,host,gflops\ncol,1,2,3,2,fp32,0,h,-1\n";
    ck_assert_int_eq(tpb_caltable_parse(bad, "x.csv", &u), TPB_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(tpb_err_msg(), "x.csv:2"));
    /* an infinite or NaN speed is refused on reading, so it is never written back */
    char inf[] = "split,m,n,k,tp,dtype,rank,host,gflops,spread,samples\n"
                 "col,1,2,3,2,fp32,0,h,inf,0.01,8\n";
    ck_assert_int_eq(tpb_caltable_parse(inf, "x.csv", &u), TPB_ERR_INVALID);
    char nan[] = "split,m,n,k,tp,dtype,rank,host,gflops\ncol,1,2,3,2,fp32,0,h,nan\n";
    ck_assert_int_eq(tpb_caltable_parse(nan, "x.csv", &u), TPB_ERR_INVALID);
    /* huge numbers are refused, not wrapped */
    char big[] = "split,m,n,k,tp,dtype,rank,host,gflops\ncol,1,2,3,4294967298,fp32,0,h,1\n";
    ck_assert_int_eq(tpb_caltable_parse(big, "x.csv", &u), TPB_ERR_INVALID);
    /* the first format (no spread, no samples) is still read */
    char v1[] = "split,m,n,k,tp,dtype,rank,host,gflops\ncol,1,2,3,2,fp32,0,h,7.5\n";
    ck_assert_int_eq(tpb_caltable_parse(v1, "x.csv", &u), TPB_OK);
    ck_assert_int_eq(u.n, 1);
    ck_assert_double_eq(u.e[0].gflops, 7.5);
    ck_assert(isnan(u.e[0].spread));
    tpb_caltable_free(&u);
    char wrong[] = "hello\n";
    ck_assert_int_eq(tpb_caltable_parse(wrong, "x.csv", &u), TPB_ERR_INVALID);
    tpb_caltable_free(&u);
    tpb_caltable_free(&t);
    unlink(path);
    rmdir(dir);
}
END_TEST

START_TEST(atomic_files)
{
    char dir[] = "/tmp/tpbal-test-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    ck_assert_int_eq(tpb_outfile_replace(dir, "a.txt", "old\n", 4), TPB_OK);
    ck_assert_int_eq(tpb_outfile_replace(dir, "a.txt", "new\n", 4), TPB_OK);
    char path[256], text[16] = {0};
    snprintf(path, sizeof(path), "%s/a.txt", dir);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fread(text, 1, sizeof(text) - 1, f), 4);
    fclose(f);
    ck_assert_str_eq(text, "new\n");
    tpb_outstream_t s;
    ck_assert_int_eq(tpb_outstream_open(&s, dir, "b.txt"), TPB_OK);
    fputs("partial", s.f);
    tpb_outstream_abort(&s);
    snprintf(path, sizeof(path), "%s/b.txt", dir);
    ck_assert_int_ne(access(path, F_OK), 0);
    /* nested creation, and a file where a directory should be */
    char nested[300];
    snprintf(nested, sizeof(nested), "%s/x/y", dir);
    ck_assert_int_eq(tpb_outdir_prepare(nested), TPB_OK);
    snprintf(nested, sizeof(nested), "%s/a.txt/z", dir);
    ck_assert_int_eq(tpb_outdir_prepare(nested), TPB_ERR_IO);
    ck_assert_ptr_nonnull(strstr(tpb_err_msg(), "--out"));
    ck_assert_int_eq(system("true"), 0);
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("buf");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, json_escaping_round_trip);
    tcase_add_test(tc, json_numbers_round_trip);
    tcase_add_test(tc, json_objects);
    tcase_add_test(tc, csv_round_trip);
    tcase_add_test(tc, result_records);
    tcase_add_test(tc, calibration_file);
    tcase_add_test(tc, atomic_files);
    suite_add_tcase(s, tc);
    return s;
}

TPB_TEST_MAIN(suite)
