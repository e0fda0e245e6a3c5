/* config_key.c - a config's identity: its JSON keys, label and comparisons. */
#include "base/config_key.h"

#include <stdio.h>
#include <string.h>

/* One key, after the prefix. */
static void key(tpb_buf_t *js, const char *prefix, const char *name)
{
    char k[64];
    snprintf(k, sizeof(k), "%s%s", prefix, name);
    tpb_json_key(js, k);
}

/* A field's JSON value by its kind (a FLAG is not written: key_json skips it). */
#define WRITE_STR(js, v, fn) tpb_json_str(js, v)
#define WRITE_LONG(js, v, fn) tpb_json_int(js, v)
#define WRITE_INT(js, v, fn) tpb_json_int(js, v)
#define WRITE_ENUM(js, v, fn) tpb_json_str(js, fn(v))
#define WRITE_FLAG(js, v, fn) (void)0
#define WRITTEN_STR 1
#define WRITTEN_LONG 1
#define WRITTEN_INT 1
#define WRITTEN_ENUM 1
#define WRITTEN_FLAG 0

#define JSON_ROW(BIT, field, type, dim, json, kind, fn, role, dflt, option)                        \
    if (WRITTEN_##kind && (fields & TPB_KEY_##BIT)) {                                              \
        key(js, prefix, json);                                                                     \
        WRITE_##kind(js, k->field, fn);                                                            \
    }

void tpb_config_key_json_as(tpb_buf_t *js, const char *prefix, const tpb_config_key_t *k,
                            unsigned fields)
{
    TPB_CONFIG_KEY_ROWS(JSON_ROW)
}

void tpb_config_key_json(tpb_buf_t *js, const tpb_config_key_t *k, unsigned fields)
{
    tpb_config_key_json_as(js, "", k, fields);
}

#define TAKE_ROW(BIT, field, ...)                                                                  \
    if (fields & TPB_KEY_##BIT)                                                                    \
        memcpy(&dst->field, &src->field, sizeof(dst->field));

void tpb_config_key_take(tpb_config_key_t *dst, const tpb_config_key_t *src, unsigned fields)
{
    TPB_CONFIG_KEY_ROWS(TAKE_ROW)
}

#define SAME_STR(a, b) (strcmp(a, b) == 0)
#define SAME_LONG(a, b) ((a) == (b))
#define SAME_INT(a, b) ((a) == (b))
#define SAME_ENUM(a, b) ((a) == (b))
#define SAME_FLAG(a, b) ((a) == (b))
#define SAME_ROW(BIT, field, type, dim, json, kind, ...)                                           \
    &&(!(fields & TPB_KEY_##BIT) || SAME_##kind(a->field, b->field))

int tpb_config_key_same(const tpb_config_key_t *a, const tpb_config_key_t *b, unsigned fields)
{
    return 1 TPB_CONFIG_KEY_ROWS(SAME_ROW);
}

#define CMP_NUM(a, b) ((a) > (b) ? 1 : (a) < (b) ? -1 : 0)
#define CMP_STR(a, b) strcmp(a, b)
#define CMP_LONG CMP_NUM
#define CMP_INT CMP_NUM
#define CMP_ENUM CMP_NUM
#define CMP_FLAG CMP_NUM
#define CMP_ROW(BIT, field, type, dim, json, kind, ...)                                            \
    if ((fields & TPB_KEY_##BIT) && (c = CMP_##kind(a->field, b->field)) != 0)                     \
        return c < 0 ? -1 : 1;

int tpb_config_key_cmp(const tpb_config_key_t *a, const tpb_config_key_t *b, unsigned fields)
{
    int c;
    TPB_CONFIG_KEY_ROWS(CMP_ROW)
    return 0;
}

/* The masks a role joins, as names. */
static void groups(tpb_buf_t *js, unsigned role)
{
    static const struct {
        unsigned in;
        const char *name;
    } g[] = {{TPB_KEYR_IN_LAYER, "layer"},
             {TPB_KEYR_IN_VARIANT, "variant"},
             {TPB_KEYR_IN_CHOICE, "choice"},
             {TPB_KEYR_IN_BLOCK, "block"}};
    tpb_json_key(js, "groups");
    tpb_json_arr_begin(js);
    for (size_t i = 0; i < sizeof(g) / sizeof(g[0]); i++)
        if (role & g[i].in)
            tpb_json_str(js, g[i].name);
    tpb_json_arr_end(js);
}

#define SCHEMA_ROW(BIT, field, type, dim, json, kind, fn, role, dflt, option)                      \
    tpb_json_obj_begin(js);                                                                        \
    tpb_json_kv_str(js, "field", #field);                                                          \
    tpb_json_kv_str(js, "json", json);                                                             \
    tpb_json_kv_str(js, "type", #type #dim);                                                       \
    tpb_json_kv_str(js, "kind", #kind);                                                            \
    tpb_json_kv_int(js, "mask", TPB_KEY_##BIT);                                                    \
    groups(js, TPB_KEYR_##role);                                                                   \
    default_of(js, dflt);                                                                          \
    tpb_json_kv_str(js, "option", option);                                                         \
    tpb_json_obj_end(js);

/* "default": the value an older record stands for, raw JSON (none: not written). */
static void default_of(tpb_buf_t *js, const char *dflt)
{
    if (!dflt)
        return;
    tpb_json_key(js, "default");
    tpb_buf_puts(js, dflt); /* after the key: no separator */
}

void tpb_config_key_schema(tpb_buf_t *js)
{
    tpb_json_arr_begin(js);
    TPB_CONFIG_KEY_ROWS(SCHEMA_ROW)
    tpb_json_arr_end(js);
}

/* A variant's name, for the label: an ENUM's or a STR's (other kinds are not named). */
#define NAMED_STR(v, fn) (v)
#define NAMED_ENUM(v, fn) fn(v)
#define NAMED_LONG(v, fn) NULL
#define NAMED_INT(v, fn) NULL
#define NAMED_FLAG(v, fn) NULL

/* "+json=name" onto out where a variant row other than sequence parallelism (the split's
 * label says it: "+sp") is not at its default: a new dimension's value shows in every label. */
static void variant_words(char *out, size_t cap, const char *json, const char *name,
                          const char *dflt)
{
    size_t at = strlen(out), d = dflt ? strlen(dflt) : 0;
    int same =
        name && dflt && d >= 2 && strlen(name) == d - 2 && strncmp(name, dflt + 1, d - 2) == 0;
    if (name && !same && at < cap)
        snprintf(out + at, cap - at, "+%s=%s", json, name);
}

#define VARIANT_ROW(BIT, field, type, dim, json, kind, fn, role, dflt, option)                     \
    if (TPB_KEY_##BIT & TPB_KEY_VARIANT & ~(unsigned)TPB_KEY_SEQPAR)                               \
        variant_words(out, sizeof(out), json, NAMED_##kind(k->field, fn), dflt);

const char *tpb_config_key_split(const tpb_config_key_t *k)
{
    static _Thread_local char out[64];
    snprintf(out, sizeof(out), "%s", tpb_split_label(k->split, k->seqpar));
    TPB_CONFIG_KEY_ROWS(VARIANT_ROW)
    return out;
}

const char *tpb_config_key_label(const tpb_config_key_t *k)
{
    static _Thread_local char label[96];
    snprintf(label, sizeof(label), "%s %s", tpb_config_key_split(k), tpb_policy_name(k->policy));
    return label;
}

const char *tpb_config_key_variant(const tpb_config_key_t *k)
{
    return k->seqpar == TPB_SEQPAR_ON ? " sequence parallel" : "";
}

int tpb_config_key_side_by_side(const tpb_config_key_t *a, const tpb_config_key_t *b)
{
    return tpb_config_key_same(a, b, TPB_KEY_LAYER | TPB_KEY_TP | TPB_KEY_PLACEMENT);
}
