/* test_shardplan.c - the JSON reader and tpbal-plan's shard plans read back. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/infile.h"
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
    /* a key twice in one object: C took the first, Python the last; both refuse it */
    ck_assert_int_eq(parse("{\"a\": 1, \"b\": {\"a\": 2}, \"a\": 3}", &v), TPB_ERR_INVALID);
    ck_assert(strstr(tpb_err_msg(), "the key \"a\" given twice in one object"));
    ck_assert_int_eq(parse("[{\"a\": 1}, {\"a\": 2}]", &v), TPB_OK); /* two objects: fine */
    tpb_jv_free(&v);
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
    /* a config's key: its other fields (sequence parallelism, placement) do not matter */
    tpb_config_key_t k = {.m = 64,
                          .n = 512,
                          .k = 256,
                          .split = TPB_SPLIT_COL,
                          .policy = TPB_POLICY_WEIGHTED,
                          .tp = 2,
                          .seqpar = TPB_SEQPAR_ON,
                          .placement = TPB_PLACE_SPREAD};
    const tpb_shardplan_entry_t *e = tpb_shardplan_find(&p, &k);
    ck_assert(e && e->nranks == 4);
    ck_assert_int_eq(e->world_ranks[2], 3);
    ck_assert_int_eq(e->shards[0], 340);
    ck_assert_double_eq(e->speeds[1], 15.2);
    ck_assert(isnan(e->speeds[2])); /* not given */
    k.policy = TPB_POLICY_EVEN;
    ck_assert(!tpb_shardplan_find(&p, &k));
    k.policy = TPB_POLICY_WEIGHTED;
    k.n = 256; /* another shape */
    ck_assert(!tpb_shardplan_find(&p, &k));
    tpb_shardplan_free(&p);
}
END_TEST

START_TEST(plan_packed)
{
    const char *doc =
        PLAN_HEAD "\"split\":\"col\",\"policy\":\"weighted\",\"tp\":2,\"dtype\":\"fp32\","
                  "\"groups\":[{\"world_ranks\":[0,1],\"shards\":[340,172],"
                  "\"speeds_gflops\":[30.5,15.2]},{\"world_ranks\":[3,2],\"shards\":[256,256]}]}]}";
    tpb_shardplan_t p, q;
    char *buf;
    size_t len;
    ck_assert_int_eq(tpb_shardplan_parse(doc, strlen(doc), "p.json", &p), TPB_OK);
    ck_assert_int_eq(tpb_shardplan_pack(&p, &buf, &len), TPB_OK);
    ck_assert_int_eq(tpb_shardplan_unpack(buf, len, &q), TPB_OK); /* what the others take */
    ck_assert_int_eq(q.n, 1);
    const tpb_shardplan_entry_t *a = &p.e[0], *b = &q.e[0];
    ck_assert(a->m == b->m && a->n == b->n && a->k == b->k && a->split == b->split &&
              a->policy == b->policy && a->tp == b->tp && a->has_dtype == b->has_dtype &&
              a->dtype == b->dtype && a->nranks == b->nranks);
    for (int r = 0; r < a->nranks; r++) {
        ck_assert_int_eq(a->world_ranks[r], b->world_ranks[r]);
        ck_assert_int_eq(a->shards[r], b->shards[r]);
        ck_assert(a->speeds[r] == b->speeds[r] || (isnan(a->speeds[r]) && isnan(b->speeds[r])));
    }
    tpb_shardplan_free(&q);
    for (size_t cut = 0; cut < len; cut += 7) { /* a short buffer: refused, nothing kept */
        ck_assert_int_eq(tpb_shardplan_unpack(buf, cut, &q), TPB_ERR_INVALID);
        ck_assert_int_eq(q.n, 0);
    }
    free(buf);
    tpb_shardplan_free(&p);
    /* the largest plan a run can use: 1 MiB and 32 KiB a rank, at most what tpbal reads */
    ck_assert_uint_eq(tpb_shardplan_max_bytes(2), 1048576 + 2 * 32768);
    ck_assert_uint_eq(tpb_shardplan_max_bytes(1 << 20), TPB_INFILE_MAX);
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
        {PLAN_HEAD "\"split\":\"row\",\"policy\":\"cost\",\"tp\":2,\"groups\":["
                   "{\"world_ranks\":[0,1],\"shards\":[128,128]}]}]}",
         "policy \"cost\" has no planned shards"},
        {PLAN_HEAD "\"split\":\"row\",\"policy\":\"even\",\"tp\":2,\"dtype\":\"fp7\","
                   "\"groups\":[{\"world_ranks\":[0,1],\"shards\":[128,128]}]}]}",
         "\"dtype\" is not a dtype tpbal knows"},
        {"{\"schema\":\"tpbal-plan/1\\u0000x\",\"configs\":[]}", "a string holding a NUL"},
        {PLAN_HEAD "\"split\":\"col\",\"policy\":\"weighted\",\"tp\":2,\"groups\":["
                   "{\"world_ranks\":[0,1],\"shards\":[256,256],"
                   "\"speeds_gflops\":[1e-300,1e300]}]}]}",
         "a ratio over 1e+06 (as --speeds refuses)"},
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

/* A plan of one config (split col over N = 512, tp 2) with the given policy, shards and
 * dtype field (NULL: none), checked against granularity g and dtype dt. */
static tpb_status_t check_one(const char *policy, long s0, long s1, const char *dtype, long g,
                              tpb_dtype_t dt)
{
    char doc[512];
    snprintf(doc, sizeof(doc),
             PLAN_HEAD "\"split\":\"col\",\"policy\":\"%s\",\"tp\":2,%s%s%s\"groups\":["
                       "{\"world_ranks\":[0,1],\"shards\":[%ld,%ld]}]}]}",
             policy, dtype ? "\"dtype\":\"" : "", dtype ? dtype : "", dtype ? "\"," : "", s0, s1);
    tpb_shardplan_t p;
    ck_assert_int_eq(tpb_shardplan_parse(doc, strlen(doc), "p.json", &p), TPB_OK);
    tpb_status_t st = tpb_shardplan_check(&p, g, dt, "p.json");
    tpb_shardplan_free(&p);
    return st;
}

START_TEST(plan_checked_against_the_run)
{
    ck_assert_int_eq(check_one("even", 256, 256, "fp32", 1, TPB_DTYPE_FP32), TPB_OK);
    ck_assert_int_eq(check_one("weighted", 384, 128, NULL, 64, TPB_DTYPE_BF16), TPB_OK);
    ck_assert_int_eq(check_one("weighted", 400, 112, NULL, 16, TPB_DTYPE_FP8), TPB_OK);
    struct {
        const char *policy;
        long s0, s1;
        const char *dtype;
        long g;
        tpb_dtype_t dt;
        const char *says;
    } bad[] = {
        {"even", 511, 1, NULL, 1, TPB_DTYPE_FP32, "not the even split (256 for the first)"},
        {"weighted", 300, 212, NULL, 8, TPB_DTYPE_FP32,
         "shard 0 (300) is not a multiple of the "
         "granularity 8"},
        {"weighted", 496, 16, NULL, 32, TPB_DTYPE_FP32, "shard 0 (496) is not a multiple"},
        {"weighted", 392, 120, NULL, 8, TPB_DTYPE_FP8,
         "shard 0 (392) is not a multiple of 16, "
         "as fp8 GEMMs need"},
        {"even", 256, 256, "fp32", 1, TPB_DTYPE_BF16,
         "planned from fp32 speeds and this run is "
         "bf16"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ck_assert_int_eq(
            check_one(bad[i].policy, bad[i].s0, bad[i].s1, bad[i].dtype, bad[i].g, bad[i].dt),
            TPB_ERR_INVALID);
        ck_assert_msg(strstr(tpb_err_msg(), bad[i].says), "case %zu: %s", i, tpb_err_msg());
        ck_assert(strstr(tpb_err_msg(), "p.json: config 0"));
    }
    /* the last shard also takes N mod g: 520 = 2 x 256 + 8 at g 16 is even as 256 / 264 */
    const char *doc = "{\"schema\":\"tpbal-plan/1\",\"configs\":[{\"m\":8,\"n\":520,\"k\":8,"
                      "\"split\":\"col\",\"policy\":\"even\",\"tp\":2,\"groups\":["
                      "{\"world_ranks\":[0,1],\"shards\":[256,264]}]}]}";
    tpb_shardplan_t p;
    ck_assert_int_eq(tpb_shardplan_parse(doc, strlen(doc), "p.json", &p), TPB_OK);
    ck_assert_int_eq(tpb_shardplan_check(&p, 16, TPB_DTYPE_FP32, "p.json"), TPB_OK);
    p.e[0].shards[0] = 264, p.e[0].shards[1] = 256; /* the remainder on the first: refused */
    ck_assert_int_eq(tpb_shardplan_check(&p, 16, TPB_DTYPE_FP32, "p.json"), TPB_ERR_INVALID);
    tpb_shardplan_free(&p);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("shardplan");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, json_values);
    tcase_add_test(tc, json_errors);
    tcase_add_test(tc, plan_read);
    tcase_add_test(tc, plan_packed);
    tcase_add_test(tc, plan_refused);
    tcase_add_test(tc, plan_checked_against_the_run);
    suite_add_tcase(s, tc);
    return s;
}

TPB_TEST_MAIN(suite)
