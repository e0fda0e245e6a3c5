/*
 * jsonread.h - a small JSON reader (RFC 8259) for the documents tpbal reads back, such
 * as tpbal-plan's shard plans: the whole text into a tree of values. Bounded: nesting
 * at most TPB_JSON_MAX_DEPTH deep, strings at most the text's length. Pure: no I/O.
 */
#ifndef TPB_JSONREAD_H
#define TPB_JSONREAD_H

#include <stddef.h>

#include "base/tpb_status.h"

#define TPB_JSON_MAX_DEPTH 64
/** The most keys an object may have; and no key twice in one (both refused as invalid). */
#define TPB_JSON_MAX_KEYS 4096

typedef enum {
    TPB_JV_NULL,
    TPB_JV_BOOL,
    TPB_JV_NUM,
    TPB_JV_STR,
    TPB_JV_ARR,
    TPB_JV_OBJ
} tpb_jv_kind_t;

/** A value. Arrays and objects own their n items (and objects their n keys). */
typedef struct tpb_jv {
    tpb_jv_kind_t kind;
    int boolean;          /**< TPB_JV_BOOL */
    double num;           /**< TPB_JV_NUM */
    char *str;            /**< TPB_JV_STR (NUL-terminated, UTF-8) */
    int n;                /**< TPB_JV_ARR, TPB_JV_OBJ: how many items */
    struct tpb_jv *items; /**< ... the items */
    char **keys;          /**< TPB_JV_OBJ: the key of every item */
} tpb_jv_t;

/**
 * Parse text[len] (one JSON value, whitespace around it) into *out. On error
 * TPB_ERR_INVALID with a message naming what (the byte offset, "what" as the file's
 * description) and *out is a null value owning nothing; TPB_ERR_NOMEM when memory ran
 * out. A string (or key) holding a NUL (\u0000) is refused: C would read it cut.
 * Free with tpb_jv_free either way.
 */
tpb_status_t tpb_json_parse(const char *text, size_t len, const char *what, tpb_jv_t *out);

/** Free what v owns; v becomes a null value. */
void tpb_jv_free(tpb_jv_t *v);

/** Object v's item under key (the first), or NULL (also when v is not an object). */
const tpb_jv_t *tpb_jv_get(const tpb_jv_t *v, const char *key);

/** 1 if v is a number that is an integer in [lo, hi], its value in *out. */
int tpb_jv_long(const tpb_jv_t *v, long lo, long hi, long *out);

#endif /* TPB_JSONREAD_H */
