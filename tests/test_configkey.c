/* test_configkey.c - a config's identity (base/config_key.h): embedded, its fields and the
 * whole key are one storage; its JSON keys, label, comparisons and copies by field mask. */
#include <stdio.h>
#include <string.h>

#include "base/config_key.h"
#include "tpb_test.h"

typedef struct {
    int before;
    TPB_CONFIG_KEY;
    double after;
} holder_t;

static tpb_config_key_t example(void)
{
    tpb_config_key_t k = {.tp = 4,
                          .placement = TPB_PLACE_SPREAD,
                          .split = TPB_SPLIT_ROW,
                          .seqpar = TPB_SEQPAR_ON,
                          .policy = TPB_POLICY_WEIGHTED,
                          .m = 8,
                          .n = 16,
                          .k = 32,
                          .shape_name = "qkv",
                          .chunks = 2,
                          .comm_only = 0};
    return k;
}

START_TEST(embedded_key_is_its_fields)
{
    holder_t h = {.before = 1, .key = example(), .after = 2.5};
    ck_assert_int_eq(h.tp, 4);
    ck_assert_int_eq(h.seqpar, TPB_SEQPAR_ON);
    ck_assert_str_eq(h.shape_name, "qkv");
    h.policy = TPB_POLICY_EVEN; /* a field written is the key's */
    ck_assert_int_eq(h.key.policy, TPB_POLICY_EVEN);
    holder_t g = {.key = h.key};
    ck_assert(tpb_config_key_same(&g.key, &h.key, TPB_KEY_ALL));
    ck_assert_int_eq(h.before, 1);
    ck_assert(h.after == 2.5);
}
END_TEST

static const char *json(const tpb_config_key_t *k, const char *prefix, unsigned fields)
{
    static char out[512];
    tpb_buf_t b = TPB_BUF_INIT;
    tpb_json_obj_begin(&b);
    tpb_config_key_json_as(&b, prefix, k, fields);
    tpb_json_obj_end(&b);
    snprintf(out, sizeof(out), "%s", tpb_buf_str(&b));
    tpb_buf_free(&b);
    return out;
}

START_TEST(json_keys_by_mask)
{
    tpb_config_key_t k = example();
    ck_assert_str_eq(json(&k, "", TPB_KEY_CHOICE),
                     "{\"split\":\"row\",\"sequence_parallel\":\"on\",\"policy\":\"weighted\"}");
    ck_assert_str_eq(json(&k, "best_", TPB_KEY_CHOICE),
                     "{\"best_split\":\"row\",\"best_sequence_parallel\":\"on\","
                     "\"best_policy\":\"weighted\"}");
    ck_assert_str_eq(json(&k, "", TPB_KEY_SHAPE | TPB_KEY_SIZES | TPB_KEY_TP | TPB_KEY_PLACEMENT),
                     "{\"shape\":\"qkv\",\"m\":8,\"n\":16,\"k\":32,\"tp\":4,"
                     "\"placement\":\"spread\"}");
    ck_assert_str_eq(json(&k, "", TPB_KEY_BLOCK),
                     "{\"tp\":4,\"placement\":\"spread\",\"sequence_parallel\":\"on\","
                     "\"policy\":\"weighted\"}");
    ck_assert_str_eq(json(&k, "", TPB_KEY_CHUNKS | TPB_KEY_COMM_ONLY), "{\"chunks\":2}");
    ck_assert_str_eq(json(&k, "", 0), "{}");
}
END_TEST

START_TEST(labels_comparisons_and_copies)
{
    tpb_config_key_t a = example(), b = example();
    ck_assert_str_eq(tpb_config_key_label(&a), "row+sp weighted");
    ck_assert_str_eq(tpb_config_key_split(&a), "row+sp");
    ck_assert_str_eq(tpb_config_key_variant(&a), " sequence parallel");
    b.seqpar = TPB_SEQPAR_OFF;
    ck_assert_str_eq(tpb_config_key_label(&b), "row weighted");
    ck_assert_str_eq(tpb_config_key_variant(&b), "");
    ck_assert(!tpb_config_key_same(&a, &b, TPB_KEY_ALL));
    ck_assert(!tpb_config_key_same(&a, &b, TPB_KEY_LAYER));
    ck_assert(tpb_config_key_same(&a, &b, TPB_KEY_ALL & ~TPB_KEY_SEQPAR));
    /* side by side: another policy or chunk count of the same layer, degree and placement */
    b = example();
    b.policy = TPB_POLICY_EVEN;
    b.chunks = 0;
    ck_assert(tpb_config_key_side_by_side(&a, &b));
    b.seqpar = TPB_SEQPAR_OFF;
    ck_assert(!tpb_config_key_side_by_side(&a, &b)); /* another variant of the layer */
    b = example();
    b.placement = TPB_PLACE_PACKED;
    ck_assert(!tpb_config_key_side_by_side(&a, &b));
    b = example();
    strcpy(b.shape_name, "o_proj");
    ck_assert(!tpb_config_key_side_by_side(&a, &b));
    /* a copy of some fields leaves the others */
    tpb_config_key_t c = {.m = 99, .shape_name = "blk"};
    tpb_config_key_take(&c, &a, TPB_KEY_BLOCK);
    ck_assert_int_eq(c.tp, 4);
    ck_assert_int_eq(c.placement, TPB_PLACE_SPREAD);
    ck_assert_int_eq(c.seqpar, TPB_SEQPAR_ON);
    ck_assert_int_eq(c.policy, TPB_POLICY_WEIGHTED);
    ck_assert_int_eq(c.m, 99);
    ck_assert_str_eq(c.shape_name, "blk");
    ck_assert_int_eq(c.split, 0);
    tpb_config_key_take(&c, &a, TPB_KEY_ALL);
    ck_assert(tpb_config_key_same(&c, &a, TPB_KEY_ALL));
}
END_TEST

START_TEST(order_by_mask)
{
    tpb_config_key_t a = example(), b = example();
    ck_assert_int_eq(tpb_config_key_cmp(&a, &b, TPB_KEY_ALL), 0);
    b.n = 17; /* n 16 < 17, whatever the other fields say */
    b.tp = 1;
    ck_assert_int_eq(tpb_config_key_cmp(&a, &b, TPB_KEY_SIZES), -1);
    ck_assert_int_eq(tpb_config_key_cmp(&b, &a, TPB_KEY_SIZES), 1);
    ck_assert_int_eq(tpb_config_key_cmp(&a, &b, TPB_KEY_TP), 1);
    ck_assert_int_eq(tpb_config_key_cmp(&a, &b, TPB_KEY_TP | TPB_KEY_SIZES), -1); /* rows' order */
    ck_assert_int_eq(tpb_config_key_cmp(&a, &b, TPB_KEY_POLICY), 0);
    snprintf(b.shape_name, sizeof(b.shape_name), "qkw");
    ck_assert_int_eq(tpb_config_key_cmp(&a, &b, TPB_KEY_SHAPE), -1); /* "qkv" < "qkw" */
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("configkey");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, embedded_key_is_its_fields);
    tcase_add_test(tc, json_keys_by_mask);
    tcase_add_test(tc, labels_comparisons_and_copies);
    tcase_add_test(tc, order_by_mask);
    suite_add_tcase(s, tc);
    return s;
}

TPB_TEST_MAIN(suite)
