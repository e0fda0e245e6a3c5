/* schema.c - the records' schema for the tools (schema.h). */
#include "record/schema.h"

#include <stdio.h>
#include <string.h>

#include "base/config_key.h"
#include "record/record.h"

/* What identifies a config across runs, in the order the tools list it: the record's own
 * columns and the key's fields by their JSON names. A key field named nowhere here follows
 * at the end, so that a new dimension needs no line here. */
static const char *const identity[] = {"backend",
                                       "world_size",
                                       "tp",
                                       "split",
                                       "policy",
                                       "placement",
                                       "col_collective",
                                       "m",
                                       "n",
                                       "k",
                                       "dtype",
                                       "comm_only",
                                       "comm_bytes",
                                       "overlap",
                                       "chunks",
                                       "sequence_parallel",
                                       "block_pos"};

/* Key fields that do not identify a config: a layer's name (renamed, its figures still
 * compare). */
static const char *const not_identity[] = {"shape"};

/* What a record written before a column existed stands for (the key's own: its rows). */
static const struct {
    const char *name, *json;
} column_defaults[] = {{"overlap", "\"none\""}, {"block_pos", "0"}};

static int named(const char *const *list, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(list[i], name) == 0)
            return 1;
    return 0;
}

#define NELEMS(a) (sizeof(a) / sizeof((a)[0]))
#define KEY_JSON_(BIT, field, type, dim, json, ...) json,
#define KEY_DEFAULT_(BIT, field, type, dim, json, kind, fn, role, dflt, option) {json, dflt},

static void identity_json(tpb_buf_t *js)
{
    static const char *const keys[] = {TPB_CONFIG_KEY_ROWS(KEY_JSON_)};
    tpb_json_key(js, "identity");
    tpb_json_arr_begin(js);
    for (size_t i = 0; i < NELEMS(identity); i++)
        tpb_json_str(js, identity[i]);
    for (size_t i = 0; i < NELEMS(keys); i++)
        if (!named(identity, NELEMS(identity), keys[i]) &&
            !named(not_identity, NELEMS(not_identity), keys[i]))
            tpb_json_str(js, keys[i]);
    tpb_json_arr_end(js);
}

static void defaults_json(tpb_buf_t *js)
{
    static const struct {
        const char *name, *json;
    } keys[] = {TPB_CONFIG_KEY_ROWS(KEY_DEFAULT_)};
    tpb_json_key(js, "identity_defaults");
    tpb_json_obj_begin(js);
    for (size_t i = 0; i < NELEMS(column_defaults); i++) {
        tpb_json_key(js, column_defaults[i].name);
        tpb_buf_puts(js, column_defaults[i].json); /* after the key: no separator */
    }
    for (size_t i = 0; i < NELEMS(keys); i++)
        if (keys[i].json && !named(not_identity, NELEMS(not_identity), keys[i].name)) {
            tpb_json_key(js, keys[i].name);
            tpb_buf_puts(js, keys[i].json);
        }
    tpb_json_obj_end(js);
}

void tpb_schema_json(tpb_buf_t *js)
{
    tpb_json_obj_begin(js);
    tpb_json_kv_int(js, "schema", TPB_SCHEMA_VERSION);
    tpb_json_key(js, "config_key");
    tpb_config_key_schema(js);
    identity_json(js);
    defaults_json(js);
    tpb_json_obj_end(js);
}

void tpb_schema_print(FILE *f)
{
    tpb_buf_t js = TPB_BUF_INIT;
    tpb_schema_json(&js);
    fprintf(f, "%s\n", tpb_buf_str(&js));
    tpb_buf_free(&js);
}
