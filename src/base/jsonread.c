/* jsonread.c - a recursive-descent JSON reader, bounded in depth. */
#include "base/jsonread.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"

typedef struct {
    const char *text, *p, *end;
    const char *what;
} reader_t;

static tpb_status_t bad(const reader_t *r, const char *why)
{
    return tpb_err_set(TPB_ERR_INVALID, "%s is not valid JSON: %s at byte %ld", r->what, why,
                       (long)(r->p - r->text));
}

static void skip_ws(reader_t *r)
{
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r'))
        r->p++;
}

static int literal(reader_t *r, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(r->end - r->p) < n || memcmp(r->p, word, n) != 0)
        return 0;
    r->p += n;
    return 1;
}

/* A string literal at r->p into a new NUL-terminated copy. */
static tpb_status_t string(reader_t *r, char **out)
{
    const char *q = r->p + 1;
    while (q < r->end && *q != '"')
        q += *q == '\\' ? 2 : 1;
    if (q >= r->end)
        return bad(r, "an unterminated string");
    size_t cap = (size_t)(q - r->p) + 1; /* the decoded text is never longer */
    char *s = malloc(cap), *tmp = malloc((size_t)(q - r->p) + 2);
    if (!s || !tmp) {
        free(s);
        free(tmp);
        return tpb_err_set(TPB_ERR_NOMEM, "out of memory reading %s", r->what);
    }
    memcpy(tmp, r->p, (size_t)(q - r->p) + 1); /* with its closing quote, then a NUL */
    tmp[q - r->p + 1] = '\0';
    const char *end;
    long n = tpb_json_unescape(tmp, s, cap, &end);
    free(tmp);
    if (n < 0 || strlen(s) != (size_t)n) {
        free(s);
        return bad(r, n < 0 ? "a malformed string" : "a string holding a NUL (\\u0000)");
    }
    r->p = q + 1;
    *out = s;
    return TPB_OK;
}

static tpb_status_t number(reader_t *r, double *out)
{
    const char *q = r->p;
    if (q < r->end && *q == '-')
        q++;
    if (q >= r->end || !(*q >= '0' && *q <= '9'))
        return bad(r, "an unexpected character");
    while (q < r->end && *q && strchr("0123456789+-.eE", *q))
        q++;
    char buf[64];
    if (q - r->p >= (long)sizeof(buf))
        return bad(r, "a number too long");
    memcpy(buf, r->p, (size_t)(q - r->p));
    buf[q - r->p] = '\0';
    char *stop;
    errno = 0;
    *out = strtod(buf, &stop);
    if (*stop || errno == ERANGE || !isfinite(*out))
        return bad(r, "a malformed or out-of-range number");
    r->p = q;
    return TPB_OK;
}

static tpb_status_t value(reader_t *r, tpb_jv_t *v, int depth);

/* The key just read is new in its object (a duplicate is refused: readers differ on which
 * one wins, C's tpb_jv_get the first, Python's json the last), and the object is one of at
 * most TPB_JSON_MAX_KEYS keys (no file tpbal reads has more; the check is quadratic). */
static tpb_status_t new_key(const reader_t *r, const tpb_jv_t *v)
{
    const char *key = v->keys[v->n - 1];
    if (v->n > TPB_JSON_MAX_KEYS)
        return bad(r, "an object of more keys than tpbal writes");
    for (int i = 0; i < v->n - 1; i++)
        if (strcmp(v->keys[i], key) == 0) {
            char why[160];
            snprintf(why, sizeof(why), "the key \"%.100s\" given twice in one object", key);
            return bad(r, why);
        }
    return TPB_OK;
}

/* One more item (and key) in v; the new item is zeroed. */
static tpb_status_t grow(reader_t *r, tpb_jv_t *v, int *cap)
{
    if (v->n == *cap) {
        int c = *cap ? 2 * *cap : 4;
        tpb_jv_t *items = realloc(v->items, (size_t)c * sizeof(*items));
        if (items)
            v->items = items;
        char **keys = v->kind == TPB_JV_OBJ ? realloc(v->keys, (size_t)c * sizeof(*keys)) : NULL;
        if (keys)
            v->keys = keys;
        if (!items || (v->kind == TPB_JV_OBJ && !keys))
            return tpb_err_set(TPB_ERR_NOMEM, "out of memory reading %s", r->what);
        *cap = c;
    }
    memset(&v->items[v->n], 0, sizeof(v->items[0]));
    if (v->kind == TPB_JV_OBJ)
        v->keys[v->n] = NULL;
    v->n++;
    return TPB_OK;
}

/* The items of an array or object after its opening bracket. */
static tpb_status_t members(reader_t *r, tpb_jv_t *v, int depth, char close)
{
    int cap = 0;
    skip_ws(r);
    if (r->p < r->end && *r->p == close) {
        r->p++;
        return TPB_OK;
    }
    for (;;) {
        TPB_CHECK_RET(grow(r, v, &cap));
        skip_ws(r);
        if (v->kind == TPB_JV_OBJ) {
            if (r->p >= r->end || *r->p != '"')
                return bad(r, "a key expected");
            TPB_CHECK_RET(string(r, &v->keys[v->n - 1]));
            TPB_CHECK_RET(new_key(r, v));
            skip_ws(r);
            if (r->p >= r->end || *r->p != ':')
                return bad(r, "':' expected");
            r->p++;
        }
        TPB_CHECK_RET(value(r, &v->items[v->n - 1], depth + 1));
        skip_ws(r);
        if (r->p < r->end && *r->p == ',') {
            r->p++;
            continue;
        }
        if (r->p < r->end && *r->p == close) {
            r->p++;
            return TPB_OK;
        }
        return bad(r, close == ']' ? "',' or ']' expected" : "',' or '}' expected");
    }
}

static tpb_status_t value(reader_t *r, tpb_jv_t *v, int depth)
{
    if (depth > TPB_JSON_MAX_DEPTH)
        return bad(r, "nesting too deep");
    skip_ws(r);
    if (r->p >= r->end)
        return bad(r, "a value expected");
    switch (*r->p) {
    case '{':
    case '[':
        v->kind = *r->p == '{' ? TPB_JV_OBJ : TPB_JV_ARR;
        r->p++;
        return members(r, v, depth, v->kind == TPB_JV_OBJ ? '}' : ']');
    case '"': v->kind = TPB_JV_STR; return string(r, &v->str);
    case 't':
    case 'f':
        v->kind = TPB_JV_BOOL;
        v->boolean = *r->p == 't';
        return literal(r, v->boolean ? "true" : "false") ? TPB_OK : bad(r, "a bad literal");
    case 'n': v->kind = TPB_JV_NULL; return literal(r, "null") ? TPB_OK : bad(r, "a bad literal");
    default: v->kind = TPB_JV_NUM; return number(r, &v->num);
    }
}

tpb_status_t tpb_json_parse(const char *text, size_t len, const char *what, tpb_jv_t *out)
{
    reader_t r = {.text = text, .p = text, .end = text + len, .what = what};
    memset(out, 0, sizeof(*out));
    tpb_status_t st = value(&r, out, 0);
    if (st == TPB_OK) {
        skip_ws(&r);
        if (r.p != r.end)
            st = bad(&r, "text after the value");
    }
    if (st != TPB_OK)
        tpb_jv_free(out);
    return st;
}

void tpb_jv_free(tpb_jv_t *v)
{
    for (int i = 0; i < v->n; i++) {
        tpb_jv_free(&v->items[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->str);
    memset(v, 0, sizeof(*v));
}

const tpb_jv_t *tpb_jv_get(const tpb_jv_t *v, const char *key)
{
    if (!v || v->kind != TPB_JV_OBJ)
        return NULL;
    for (int i = 0; i < v->n; i++)
        if (v->keys[i] && strcmp(v->keys[i], key) == 0)
            return &v->items[i];
    return NULL;
}

int tpb_jv_long(const tpb_jv_t *v, long lo, long hi, long *out)
{
    if (!v || v->kind != TPB_JV_NUM || v->num != floor(v->num) || v->num < (double)lo ||
        v->num > (double)hi)
        return 0;
    *out = (long)v->num;
    return 1;
}
