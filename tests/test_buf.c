/* test_buf.c - JSON and CSV writers and atomic files. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "record/outfile.h"
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

/* names that are not UTF-8 or hold line separators: the JSON is valid UTF-8 on one line, and
 * the CSV carries the same text (issue 57) */
START_TEST(json_csv_any_bytes)
{
    tpb_buf_t b = TPB_BUF_INIT;
    tpb_json_str(&b, "a\xff\xe2\x80\xa8\xc2\x85\x7f\xe2\x80\xa9\xc3\xa9\xe2\x82");
    ck_assert_str_eq(tpb_buf_str(&b),
                     "\"a\\u00ff\\u2028\\u0085\\u007f\\u2029\xc3\xa9\\u00e2\\u0082\"");
    char out[64];
    ck_assert_int_eq(tpb_json_unescape(tpb_buf_str(&b), out, sizeof(out), NULL), 18);
    ck_assert_str_eq(out, "a\xc3\xbf\xe2\x80\xa8\xc2\x85\x7f\xe2\x80\xa9\xc3\xa9\xc3\xa2\xc2\x82");
    tpb_buf_reset(&b); /* overlong forms and surrogates are not UTF-8 either */
    tpb_json_str(&b, "\xc0\xaf\xed\xa0\x80");
    ck_assert_str_eq(tpb_buf_str(&b), "\"\\u00c0\\u00af\\u00ed\\u00a0\\u0080\"");
    tpb_buf_reset(&b);
    tpb_csv_field(&b, "x\xff,\xc3\xa9");
    ck_assert_str_eq(tpb_buf_str(&b), "\"x\xc3\xbf,\xc3\xa9\"");
    tpb_buf_free(&b);
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
    int above = -1;
    char top[300] = "";
    ck_assert_int_eq(tpb_outdir_prepare(nested, &above, top, sizeof(top)), TPB_OK);
    ck_assert_int_eq(above, 1); /* x made above y: said by the caller */
    ck_assert_ptr_nonnull(strstr(top, "/x"));
    ck_assert_int_eq(tpb_outdir_prepare(nested, &above, top, sizeof(top)), TPB_OK);
    ck_assert_int_eq(above, 0); /* there now: nothing made */
    snprintf(nested, sizeof(nested), "%s/a.txt/z", dir);
    ck_assert_int_eq(tpb_outdir_prepare(nested, &above, top, sizeof(top)), TPB_ERR_IO);
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
    tcase_add_test(tc, json_csv_any_bytes);
    tcase_add_test(tc, json_numbers_round_trip);
    tcase_add_test(tc, json_objects);
    tcase_add_test(tc, csv_round_trip);
    tcase_add_test(tc, atomic_files);
    suite_add_tcase(s, tc);
    return s;
}

TPB_TEST_MAIN(suite)
