/* test_result.c - result records (JSON, CSV, ranks.csv) and the pure derivation of a
 * config's metrics from the configs before it (tpb_result_finish). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "record/outfile.h"
#include "record/record.h"
#include "record/report.h"
#include "record/result.h"
#include "record/wrap.h"
#include "tpb_test.h"

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
    r->seqpar = TPB_SEQPAR_OFF;
    r->policy = TPB_POLICY_WEIGHTED;
    r->m = 4;
    r->n = 201;
    r->k = 8;
    r->dtype = TPB_DTYPE_FP32;
    snprintf(r->shape_name, sizeof(r->shape_name), "qkv,\"proj\"");
    r->speed_source = TPB_SPEEDS_CALIBRATION;
    r->coll = TPB_COLL_ALLGATHER;
    r->busbw_factor = 0.5;
    r->coll_bytes = 4.0 * 201 * 4;
    r->info = info;
    r->ranks = ranks;
    r->stats.step_med = 22;
    r->stats.straggler_rank = 1;
    r->stats.straggler_frac = 1.0;
    r->stats.nspikes = 1;
    r->stats.spikes[0] = (tpb_spike_t){4, 1, 50.0};
    r->check = TPB_CHECK_PASS;
    r->speedup = NAN;
}

/* The field of row under header name (fails the test if there is none). */
static const char *column(char **head, char **row, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(head[i], name) == 0)
            return row[i];
    ck_abort_msg("no column %s", name);
    return "";
}

START_TEST(result_records)
{
    tpb_result_t r;
    tpb_rank_info_t info[2];
    tpb_rank_stats_t ranks[2];
    sample_result(&r, info, ranks);
    r.whatif = (tpb_whatif_t){
        .step_us = 17.6, .slowdown = 1.25, .straggler_step_us = NAN, .straggler_slowdown = NAN};
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
                          "\"shape\":\"qkv,\\\"proj\\\"\"",
                          "\"whatif_step_us\":17.6",
                          "\"slowdown\":1.25",
                          "\"slowdown_straggler\":null"};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        ck_assert_msg(strstr(tpb_buf_str(&b), keys[i]), "missing %s", keys[i]);
    ck_assert_int_eq(strchr(tpb_buf_str(&b), '\n') - tpb_buf_str(&b), (long)b.len - 1);
    /* the table row: straggler "1:100%", its lateness, spikes "1@1", what-if S, check */
    tpb_buf_t t = TPB_BUF_INIT;
    r.stats.straggler_late_us = 1234.5;
    tpb_report_table_row(&t, &r, TPB_TABLE_WIDE, NULL);
    ck_assert_ptr_nonnull(
        strstr(tpb_buf_str(&t), " 1:100%   1234.5      1@1  1.25  pass qkv,\"proj\"\n"));
    /* last by chance (55 % of the iterations at TP 2): in parentheses, not a verdict */
    tpb_buf_reset(&t);
    r.stats.straggler_frac = 0.55;
    tpb_report_table_row(&t, &r, TPB_TABLE_WIDE, NULL);
    ck_assert_ptr_nonnull(strstr(tpb_buf_str(&t), " (1:55%)   1234.5"));
    /* the compact table: its columns, the speed-up with its interval, at most 120 wide */
    tpb_policy_verdict_t v = {.speedup = 1.234, .lo = 1.1, .hi = 1.375};
    tpb_buf_reset(&t);
    tpb_report_table_header(&t, TPB_TABLE_COMPACT);
    tpb_report_table_row(&t, &r, TPB_TABLE_COMPACT, &v);
    ck_assert_ptr_nonnull(
        strstr(tpb_buf_str(&t), "(1:55%)   pass  1.23x [1.10,1.38] qkv,\"proj\"\n"));
    ck_assert_ptr_null(strstr(tpb_buf_str(&t), "1234.5")); /* lateness only in --wide */
    ck_assert_ptr_nonnull(strstr(tpb_buf_str(&t), "\n# LB load balance, E parallel efficiency"));
    for (const char *p = tpb_buf_str(&t), *e; *p; p = e + 1) {
        e = strchr(p, '\n');
        ck_assert_int_le(e - p, 120);
    }
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
    ck_assert_str_eq(column(f1, f2, nh, "shape"), "qkv,\"proj\"");
    ck_assert_str_eq(column(f1, f2, nh, "shards"), "100;101");
    ck_assert_str_eq(column(f1, f2, nh, "sequence_parallel"), "off");
    ck_assert_str_eq(column(f1, f2, nh, "overlap"), "none");
    free(hl);
    free(rl);
    tpb_buf_free(&h);
    tpb_buf_free(&row);
    tpb_buf_free(&b);
}
END_TEST

/* A 2-rank result of tp t whose ranks computed for c0 and c1 us, with a step of step us. */
static void tiny(tpb_result_t *r, tpb_rank_info_t *info, tpb_rank_stats_t *ranks, int tp,
                 tpb_policy_t policy, double c0, double c1, double step)
{
    memset(r, 0, sizeof(*r));
    memset(ranks, 0, 2 * sizeof(*ranks));
    for (int i = 0; i < 2; i++)
        info[i] = (tpb_rank_info_t){
            .shard = 32, .speed = NAN, .max_err = 1e-9 * (i + 1), .speed_spread = NAN};
    ranks[0].compute_med = c0;
    ranks[1].compute_med = c1;
    r->world = 2;
    r->tp = tp;
    r->iters = 5;
    r->split = TPB_SPLIT_ROW;
    r->policy = policy;
    r->m = r->n = r->k = 64;
    r->dtype = TPB_DTYPE_FP32;
    r->coll = TPB_COLL_ALLREDUCE;
    r->busbw_factor = 1.0;
    r->coll_bytes = 64.0 * 64 * 4;
    r->info = info;
    r->ranks = ranks;
    r->stats.step_med = step;
    r->stats.xfer_med = 10.0;
}

START_TEST(finish_t1_speedup_check)
{
    tpb_rank_info_t info[2];
    tpb_rank_stats_t ranks[2];
    tpb_result_t r;
    tpb_history_t hist[2] = {{.tp = 1,
                              .split = TPB_SPLIT_ROW,
                              .policy = TPB_POLICY_EVEN,
                              .m = 64,
                              .n = 64,
                              .k = 64,
                              .world = 2,
                              .step_med = 400.0,
                              .t1_us = 400.0},
                             {.tp = 2,
                              .split = TPB_SPLIT_ROW,
                              .policy = TPB_POLICY_EVEN,
                              .m = 64,
                              .n = 64,
                              .k = 64,
                              .world = 2,
                              .step_med = 300.0}};
    /* TP = 1: T_1 is its own fastest rank; no speed-up; check off */
    tiny(&r, info, ranks, 1, TPB_POLICY_EVEN, 400.0, 500.0, 500.0);
    tpb_result_finish(&r, NULL, 0, 0);
    ck_assert_double_eq_tol(r.t1_us, 400.0, 1e-9);
    ck_assert(isnan(r.speedup));
    ck_assert_int_eq(r.check, TPB_CHECK_OFF);
    ck_assert(isnan(r.max_rel_err));
    /* weighted at TP = 2: T_1 from the TP = 1 history, speed-up over the even row */
    tiny(&r, info, ranks, 2, TPB_POLICY_WEIGHTED, 190.0, 200.0, 240.0);
    tpb_result_finish(&r, hist, 2, 1);
    ck_assert_double_eq_tol(r.t1_us, 400.0, 1e-9);
    ck_assert_double_eq_tol(r.e, 400.0 / (2 * 240.0), 1e-12);
    ck_assert_double_eq_tol(r.speedup, 300.0 / 240.0, 1e-12);
    ck_assert_double_eq_tol(r.lb, 0.95, 1e-12);
    ck_assert_int_eq(r.check, TPB_CHECK_PASS);
    ck_assert_double_eq_tol(r.max_rel_err, 2e-9, 1e-18);
    /* percent of peak: the group's rate over the sum of the peaks; per rank, its own */
    info[0].peak_gflops = info[1].peak_gflops = 1.0;
    info[0].flop = 190e3; /* 190e3 FLOP in 190 us = 1 GFLOP/s: 100 % of a 1 GFLOP/s peak */
    tpb_result_finish(&r, hist, 2, 1);
    ck_assert_double_eq_tol(tpb_result_rank_pct_peak(&r, 0), 100.0, 1e-9);
    ck_assert_double_eq_tol(r.pct_peak, 100.0 * r.tflops * 1e3 / 2.0, 1e-9);
    info[1].peak_gflops = 0.0; /* unknown peak: unknown percent */
    ck_assert(isnan(tpb_result_rank_pct_peak(&r, 1)));
    /* the worst rank's error decides the verdict */
    info[1].max_err = 1.0;
    tpb_result_finish(&r, hist, 2, 1);
    ck_assert_int_eq(r.check, TPB_CHECK_FAIL);
    /* no history of another shape: T_1 and speed-up unknown */
    r.m = 128;
    tpb_result_finish(&r, hist, 2, 0);
    ck_assert(isnan(r.t1_us) && isnan(r.e) && isnan(r.speedup));
    /* the even config's per-rank compute (100, 200 us on 32 + 32) and the weighted shards
     * (40 + 24): rank 0 computes 125 us, rank 1 150 us; the 300 us even step less its
     * critical 200 us plus 150: 250 us, a predicted speed-up of 1.2 */
    double comp[2] = {100.0, 200.0};
    double even_work[2] = {32, 32};
    hist[1].arr[TPB_HIST_COMPUTE] = comp;
    hist[1].arr[TPB_HIST_WORK] = even_work;
    r.m = 64;
    info[0].flop = 40;
    info[1].flop = 24;
    tpb_result_finish(&r, hist, 2, 0);
    ck_assert_double_eq_tol(r.predicted_speedup, 300.0 / 250.0, 1e-12);
}
END_TEST

START_TEST(weighted_step_predicted_from_even)
{
    double c[4] = {100.0, 200.0, 150.0, 150.0};
    double e[4] = {32, 32, 32, 32}, w[4] = {40, 24, 32, 32}, bad[4] = {0, 32, 32, 32};
    /* two groups: the slowest compute is 200 (rank 1), then 150 (ranks 1, 2, 3) */
    ck_assert_double_eq_tol(tpb_predict_weighted_step(500.0, c, e, w, 4), 450.0, 1e-12);
    ck_assert_double_eq_tol(tpb_predict_weighted_step(500.0, c, e, e, 4), 500.0, 1e-12);
    ck_assert(isnan(tpb_predict_weighted_step(500.0, c, bad, w, 4))); /* no even shard */
    ck_assert(isnan(tpb_predict_weighted_step(NAN, c, e, w, 4)));
    double unknown[4] = {NAN, 1, 1, 1};
    ck_assert(isnan(tpb_predict_weighted_step(500.0, unknown, e, w, 4)));
}
END_TEST

START_TEST(step_samples_all_or_quantiles)
{
    tpb_result_t r = {0};
    double steps[3000], out[TPB_STEP_SAMPLES];
    int q;
    ck_assert_int_eq(tpb_result_step_samples(&r, out, &q), 0); /* --timeline off: none */
    for (int i = 0; i < 3000; i++)
        steps[i] = 100.0 + (i % 1000) * 0.0012345; /* rounded to 1 ns in the record */
    r.steps = steps;
    r.iters = 10;
    ck_assert_int_eq(tpb_result_step_samples(&r, out, &q), 10);
    ck_assert_int_eq(q, 0);
    ck_assert_double_eq_tol(out[3], 100.004, 1e-9);
    r.iters = 3000; /* more than kept: quantiles, spanning the distribution */
    ck_assert_int_eq(tpb_result_step_samples(&r, out, &q), TPB_STEP_SAMPLES);
    ck_assert_int_eq(q, 1);
    ck_assert(out[0] <= out[TPB_STEP_SAMPLES / 2] && out[TPB_STEP_SAMPLES / 2] <= out[999]);
    ck_assert_double_eq_tol(out[TPB_STEP_SAMPLES / 2], 100.0 + 500 * 0.0012345, 2e-3);
}
END_TEST

/* The words of s (spaces, newlines and continuation '#' marks removed), into out. */
static void words_of(const char *s, char *out)
{
    for (int lead = 1; *s; s++) {
        if (*s == '\n') {
            lead = 1;
            *out++ = ' ';
            continue;
        }
        if (lead && *s == '#') {
            lead = 0;
            continue;
        }
        lead = 0;
        if (*s != ' ' || (out[-1] != ' '))
            *out++ = *s;
    }
    while (out[-1] == ' ')
        out--;
    *out = '\0';
}

START_TEST(wrap_folds_only_comment_and_tool_lines)
{
    const char *line = "#     row: weighted 1.01x over even [0.89, 1.15] (3 paired rounds), "
                       "at most 1.00x, predicted 1.00x: inconclusive: the interval reaches past "
                       "5 % either way; keep even, or measure longer (--iters)";
    for (int width = 40; width <= 130; width += 7) {
        tpb_buf_t b = TPB_BUF_INIT;
        tpb_wrap_line(line, strlen(line), width, &b);
        int pieces = 0;
        for (const char *p = tpb_buf_str(&b), *e; *p; p = e + 1, pieces++) {
            e = strchr(p, '\n');
            ck_assert_int_le(e - p, width);
            ck_assert_int_eq(p[0], '#');
            if (p != tpb_buf_str(&b)) /* continuations indented under the text, plus 4 */
                ck_assert(strncmp(p, "#         ", 10) == 0 && p[10] != ' ');
        }
        ck_assert_int_ge(pieces, (int)strlen(line) / width + 1);
        char a[512] = " ", w[512] = " ";
        words_of(line, a + 1);
        words_of(tpb_buf_str(&b), w + 1);
        ck_assert_str_eq(w, a); /* nothing lost, nothing cut */
        tpb_buf_free(&b);
    }
    /* a table row, a short line and width 0 stay whole; a word longer than the width too */
    const char *whole[] = {"    1   2 row    even     " /* a row is never folded */
                           "64x256x256           131.0     12.5 0.99 0.50 -         off   -    x",
                           "# short",
                           "#   /a/very/long/path/that/does/not/fit/in/forty/columns/x y"};
    tpb_buf_t b = TPB_BUF_INIT;
    tpb_wrap_line(whole[0], strlen(whole[0]), 40, &b);
    ck_assert_str_eq(tpb_buf_str(&b), "    1   2 row    even     64x256x256           131.0     "
                                      "12.5 0.99 0.50 -         off   -    x\n");
    tpb_buf_reset(&b);
    tpb_wrap_line(whole[1], strlen(whole[1]), 0, &b);
    tpb_wrap_line(line, strlen(line), 0, &b);
    ck_assert_int_eq(b.len, strlen(whole[1]) + strlen(line) + 2);
    tpb_buf_reset(&b);
    tpb_wrap_line(whole[2], strlen(whole[2]), 40, &b);
    ck_assert_ptr_nonnull(
        strstr(tpb_buf_str(&b), "/a/very/long/path/that/does/not/fit/in/forty/columns/x\n"));
    /* a "tpbal: " line (the dry run's) folds too, its continuations under 4 spaces */
    tpb_buf_reset(&b);
    const char *tool = "tpbal: dry run: about 0.82 s in all (0.74 s if every calibration "
                       "settles at once): GEMMs 0.021 s";
    tpb_wrap_line(tool, strlen(tool), 60, &b);
    ck_assert_str_eq(tpb_buf_str(&b), "tpbal: dry run: about 0.82 s in all (0.74 s if every\n"
                                      "    calibration settles at once): GEMMs 0.021 s\n");
    tpb_buf_free(&b);
}
END_TEST

START_TEST(warnings_said_once)
{
    tpb_record_t rec;
    memset(&rec, 0, sizeof(rec));
    tpb_record_warn(&rec, "# warning: rank %d slow", 1);
    tpb_record_warn(&rec, "# warning: rank %d slow", 10); /* not the same line */
    tpb_record_warn(&rec, "# warning: rank %d slow", 1);  /* said before */
    tpb_record_warn(&rec, "# warning: rank %d", 1);       /* a prefix of a line said */
    ck_assert_str_eq(tpb_buf_str(&rec.warnings),
                     "# warning: rank 1 slow\n# warning: rank 10 slow\n# warning: rank 1\n");
    tpb_buf_free(&rec.warnings);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("result");
    TCase *tc = tcase_create("result");
    tcase_add_test(tc, step_samples_all_or_quantiles);
    tcase_add_test(tc, result_records);
    tcase_add_test(tc, wrap_folds_only_comment_and_tool_lines);
    tcase_add_test(tc, warnings_said_once);
    tcase_add_test(tc, finish_t1_speedup_check);
    tcase_add_test(tc, weighted_step_predicted_from_even);
    suite_add_tcase(s, tc);
    return s;
}

TPB_TEST_MAIN(suite)
