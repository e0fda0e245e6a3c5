/* test_shardplan.c - the JSON reader and tpbal-plan's shard plans read back. */
#include <math.h>
#include <string.h>

#include "base/jsonread.h"
#include "cli/shardplan.h"
#include "tpb_test.h"

static tpb_status_t parse(const char *s, tpb_jv_t *v)
{
    return tpb_json_parse(s, strlen(s), "t.json", v);
}

START_TEST(json_values)
{
    tpb_jv_t v;
    ck_assert_int_eq(parse(" {\"a\": [1, -2.5e1, true, null], \"b\": \"x\\\"\\u00e9\"} ", &v),
                     TPB_OK);
    const tpb_jv_t *a = tpb_jv_get(&v, "a"), *b = tpb_jv_get(&v, "b");
    ck_assert(a && a->kind == TPB_JV_ARR && a->n == 4);
    ck_assert_double_eq(a->items[1].num, -25.0);
    ck_assert(a->items[2].kind == TPB_JV_BOOL && a->items[2].boolean);
    ck_assert(a->items[3].kind == TPB_JV_NULL);
    ck_assert_str_eq(b->str, "x\"\xc3\xa9");
    long x;
    ck_assert(tpb_jv_long(&a->items[0], 1, 9, &x) && x == 1);
    ck_assert(!tpb_jv_long(&a->items[1], 0, 100, &x)); /* -25: out of range */
    ck_assert(tpb_jv_long(&a->items[1], -100, 100, &x) && x == -25);
    ck_assert(!tpb_jv_long(&a->items[2], 0, 100, &x)); /* not a number */
    ck_assert(tpb_jv_get(&v, "c") == NULL && tpb_jv_get(a, "a") == NULL);
    tpb_jv_free(&v);
    ck_assert_int_eq(parse("[]", &v), TPB_OK);
    ck_assert_int_eq(v.n, 0);
    tpb_jv_free(&v);
    ck_assert_int_eq(parse("[2.5]", &v), TPB_OK);
    ck_assert(!tpb_jv_long(&v.items[0], 0, 100, &x)); /* not an integer */
    tpb_jv_free(&v);
}
END_TEST

START_TEST(json_errors)
{
    const char *bad[] = {"",      "{",       "[1,]",   "{\"a\" 1}", "[1] 2",      "tru",
                         "\"abc", "[1e999]", "{1: 2}", "[-]",       "[\"\x01\"]", "nul"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        tpb_jv_t v;
        ck_assert_msg(parse(bad[i], &v) == TPB_ERR_INVALID, "accepted: %s", bad[i]);
        ck_assert_int_eq(v.kind, TPB_JV_NULL);
        ck_assert(strstr(tpb_err_msg(), "t.json is not valid JSON"));
    }
    char deep[200];
    memset(deep, '[', 100);
    memset(deep + 100, ']', 99);
    deep[199] = '\0';
    tpb_jv_t v;
    ck_assert_int_eq(parse(deep, &v), TPB_ERR_INVALID); /* 100 deep: over the bound */
    ck_assert(strstr(tpb_err_msg(), "nesting too deep"));
}
END_TEST

#define PLAN_HEAD "{\"schema\":\"tpbal-plan/1\",\"configs\":[{\"m\":64,\"n\":512,\"k\":256,"

START_TEST(plan_read)
{
    const char *doc =
        PLAN_HEAD "\"split\":\"col\",\"policy\":\"weighted\",\"tp\":2,\"groups\":["
                  "{\"world_ranks\":[0,1],\"shards\":[340,172],\"speeds_gflops\":[30.5,15.2]},"
                  "{\"world_ranks\":[3,2],\"shards\":[256,256]}]}]}";
    tpb_shardplan_t p;
    ck_assert_int_eq(tpb_shardplan_parse(doc, strlen(doc), "p.json", &p), TPB_OK);
    ck_assert_int_eq(p.n, 1);
    const tpb_shardplan_entry_t *e =
        tpb_shardplan_find(&p, 64, 512, 256, TPB_SPLIT_COL, TPB_POLICY_WEIGHTED, 2);
    ck_assert(e && e->nranks == 4);
    ck_assert_int_eq(e->world_ranks[2], 3);
    ck_assert_int_eq(e->shards[0], 340);
    ck_assert_double_eq(e->speeds[1], 15.2);
    ck_assert(isnan(e->speeds[2])); /* not given */
    ck_assert(!tpb_shardplan_find(&p, 64, 512, 256, TPB_SPLIT_COL, TPB_POLICY_EVEN, 2));
    tpb_shardplan_free(&p);
}
END_TEST

START_TEST(plan_refused)
{
    struct {
        const char *doc, *says;
    } cases[] = {
        {"{\"schema\":\"other/2\",\"configs\":[]}", "not a shard plan of schema tpbal-plan/1"},
        {"{\"schema\":\"tpbal-plan/1\",\"configs\":[]}", "\"configs\" must be a non-empty list"},
        {PLAN_HEAD "\"split\":\"diag\",\"policy\":\"even\",\"tp\":2,\"groups\":[]}]}",
         "config 0: \"split\" must be one of"},
        {PLAN_HEAD "\"split\":\"col\",\"policy\":\"even\",\"tp\":2,\"groups\":["
                   "{\"world_ranks\":[0,1],\"shards\":[256,255]}]}]}",
         "the shards add up to 511, not the split dimension 512"},
        {PLAN_HEAD "\"split\":\"row\",\"policy\":\"even\",\"tp\":2,\"groups\":["
                   "{\"world_ranks\":[0,0],\"shards\":[128,128]}]}]}",
         "world rank 0 is planned twice"},
        {PLAN_HEAD "\"split\":\"row\",\"policy\":\"even\",\"tp\":2,\"groups\":["
                   "{\"world_ranks\":[0],\"shards\":[256]}]}]}",
         "must be lists of tp (2) integers"},
        {PLAN_HEAD "\"split\":\"row\",\"policy\":\"even\",\"tp\":2,\"groups\":["
                   "{\"world_ranks\":[0,1],\"shards\":[0,256]}]}]}",
         "a world rank or shard out of range"},
        {"{\"schema\":\"tpbal-plan/1\",\"configs\":[{\"m\":1.5}]}",
         "config 0: \"m\" must be an integer from 1 to"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        tpb_shardplan_t p;
        ck_assert_int_eq(tpb_shardplan_parse(cases[i].doc, strlen(cases[i].doc), "p.json", &p),
                         TPB_ERR_INVALID);
        ck_assert_msg(strstr(tpb_err_msg(), cases[i].says), "case %zu: %s", i, tpb_err_msg());
        ck_assert_int_eq(p.n, 0);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("shardplan");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, json_values);
    tcase_add_test(tc, json_errors);
    tcase_add_test(tc, plan_read);
    tcase_add_test(tc, plan_refused);
    suite_add_tcase(s, tc);
    return s;
}

TPB_TEST_MAIN(suite)
