/* optparse.c - option value parsers: numbers, lists, name sets, injections. */
#include "cli/optparse.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

tpb_status_t tpb_opt_long(const char *flag, const char *s, long min, long max, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end != '\0' || v < min || v > max)
        return tpb_err_set(TPB_ERR_INVALID, "%s '%s': expected an integer from %ld to %ld", flag,
                           tpb_err_value(s), min, max);
    *out = v;
    return TPB_OK;
}

tpb_status_t tpb_opt_double(const char *flag, const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end != '\0' || !isfinite(v))
        return tpb_err_set(TPB_ERR_INVALID, "%s '%s': expected a number", flag, tpb_err_value(s));
    *out = v;
    return TPB_OK;
}

/* Count the comma-separated items of s (an empty item is an error for the caller). */
int tpb_opt_count(const char *s)
{
    int n = 1;
    for (; *s; s++)
        n += *s == ',';
    return n;
}

/* Call fn(flag, item, ctx, index) for each comma-separated item of s. */

tpb_status_t tpb_opt_for_each(const char *flag, const char *s, tpb_opt_item_fn fn, void *ctx)
{
    char buf[4096];
    if (strlen(s) >= sizeof(buf))
        return tpb_err_set(TPB_ERR_INVALID, "%s: list too long", flag);
    strcpy(buf, s);
    int idx = 0;
    char *save = NULL;
    if (buf[0] == '\0' || buf[0] == ',' || buf[strlen(buf) - 1] == ',' || strstr(buf, ",,"))
        return tpb_err_set(TPB_ERR_INVALID, "%s '%s': empty item in the list", flag,
                           tpb_err_value(s));
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
        TPB_CHECK_RET(fn(flag, tok, ctx, idx++));
    return TPB_OK;
}

static tpb_status_t positive_double_item(const char *flag, const char *item, void *ctx, int i)
{
    double v;
    TPB_CHECK_RET(tpb_opt_double(flag, item, &v));
    if (v <= 0.0)
        return tpb_err_set(TPB_ERR_INVALID, "%s '%s': every value must be > 0", flag,
                           tpb_err_value(item));
    ((double *)ctx)[i] = v;
    return TPB_OK;
}

tpb_status_t tpb_opt_double_list(const char *flag, const char *s, double **out, int *n)
{
    int cnt = tpb_opt_count(s);
    double *v = calloc((size_t)cnt, sizeof(*v));
    if (!v)
        return tpb_err_set(TPB_ERR_NOMEM, "%s: out of memory", flag);
    tpb_status_t st = tpb_opt_for_each(flag, s, positive_double_item, v);
    if (st != TPB_OK) {
        free(v);
        return st;
    }
    free(*out);
    *out = v;
    *n = cnt;
    return TPB_OK;
}

typedef struct {
    long *v;
    long min, max;
} long_list_ctx;

static tpb_status_t long_item(const char *flag, const char *item, void *ctx, int i)
{
    long_list_ctx *c = ctx;
    return tpb_opt_long(flag, item, c->min, c->max, &c->v[i]);
}

tpb_status_t tpb_opt_long_list(const char *flag, const char *s, long min, long vmax, long *out,
                               int max, int *n)
{
    int cnt = tpb_opt_count(s);
    if (cnt > max)
        return tpb_err_set(TPB_ERR_INVALID, "%s: at most %d values", flag, max);
    long tmp[TPB_MAX_SHAPES];
    long_list_ctx c = {tmp, min, vmax};
    TPB_CHECK_RET(tpb_opt_for_each(flag, s, long_item, &c));
    memcpy(out, tmp, (size_t)cnt * sizeof(*out));
    *n = cnt;
    return TPB_OK;
}

typedef struct {
    const tpb_name_table_t *t;
    unsigned mask;
} name_set_ctx;

static tpb_status_t name_item(const char *flag, const char *item, void *ctx, int i)
{
    name_set_ctx *c = ctx;
    unsigned v;
    if (tpb_name_parse(c->t, item, &v) != TPB_OK)
        return tpb_err_set(TPB_ERR_INVALID, "%s '%s': expected %s", flag, tpb_err_value(item),
                           c->t->accepted);
    c->mask |= v;
    return TPB_OK;
}

tpb_status_t tpb_opt_name_set(const char *flag, const char *s, const tpb_name_table_t *t,
                              unsigned *mask)
{
    name_set_ctx c = {t, 0};
    TPB_CHECK_RET(tpb_opt_for_each(flag, s, name_item, &c));
    *mask = c.mask;
    return TPB_OK;
}

/* Parse one name of names[count] into *out. */
tpb_status_t tpb_opt_choice(const char *flag, const char *s, const char *const *names, int count,
                            const char *accepted, int *out)
{
    for (int j = 0; j < count; j++) {
        if (strcmp(s, names[j]) == 0) {
            *out = j;
            return TPB_OK;
        }
    }
    return tpb_err_set(TPB_ERR_INVALID, "%s '%s': expected %s", flag, tpb_err_value(s), accepted);
}

tpb_status_t tpb_shape_parse(const char *s, tpb_shape_t *shape)
{
    char *end;
    long v[3];
    const char *p = s;
    for (int i = 0; i < 3; i++) {
        errno = 0;
        v[i] = strtol(p, &end, 10);
        if (errno || end == p || v[i] < 1 || v[i] > TPB_MAX_DIM || (i < 2 && *end != 'x') ||
            (i == 2 && *end))
            return tpb_err_set(TPB_ERR_INVALID,
                               "--shape '%s': expected MxNxK with integers from 1 to %ld, "
                               "e.g. 4096x4096x4096",
                               s, (long)TPB_MAX_DIM);
        p = end + 1;
    }
    memset(shape, 0, sizeof(*shape));
    shape->m = v[0];
    shape->n = v[1];
    shape->k = v[2];
    return TPB_OK;
}

typedef struct {
    tpb_shape_t *shapes;
} shape_list_ctx;

static tpb_status_t shape_item(const char *flag, const char *item, void *ctx, int i)
{
    (void)flag;
    return tpb_shape_parse(item, &((shape_list_ctx *)ctx)->shapes[i]);
}

tpb_status_t tpb_opt_shapes(const char *flag, const char *s, tpb_shape_t *shapes, int *n)
{
    int count = tpb_opt_count(s);
    if (count > TPB_MAX_SHAPES)
        return tpb_err_set(TPB_ERR_INVALID, "%s: at most %d shapes", flag, TPB_MAX_SHAPES);
    shape_list_ctx c = {shapes};
    TPB_CHECK_RET(tpb_opt_for_each(flag, s, shape_item, &c));
    *n = count;
    return TPB_OK;
}

/* RANK:MICROSECONDS[:EVERY] (every_allowed) or RANK:MICROSECONDS */
tpb_status_t tpb_opt_inject(const char *flag, const char *s, int every_allowed, tpb_inject_t *inj)
{
    char buf[128];
    if (strlen(s) >= sizeof(buf)) /* read whole or refused, never cut */
        return tpb_err_set(TPB_ERR_INVALID, "%s: the value has %zu characters: at most %zu", flag,
                           strlen(s), sizeof(buf) - 1);
    snprintf(buf, sizeof(buf), "%s", s);
    char *save = NULL, *f[3] = {0};
    int nf = 0;
    for (char *tok = strtok_r(buf, ":", &save); tok && nf < 3; tok = strtok_r(NULL, ":", &save))
        f[nf++] = tok;
    long rank, every = 1;
    double us;
    if (nf < 2 || (nf == 3 && !every_allowed) || strtok_r(NULL, ":", &save) ||
        tpb_opt_long(flag, f[0], 0, INT_MAX, &rank) != TPB_OK ||
        tpb_opt_double(flag, f[1], &us) != TPB_OK ||
        (nf == 3 && tpb_opt_long(flag, f[2], 1, INT_MAX, &every) != TPB_OK) ||
        (every_allowed && us < 0) || fabs(us) > TPB_MAX_INJECT_US)
        return tpb_err_set(TPB_ERR_INVALID,
                           "%s '%s': expected RANK:MICROSECONDS%s (rank and every at most %d, "
                           "at most %.0f us)",
                           flag, tpb_err_value(s),
                           every_allowed ? "[:EVERY] with a delay >= 0" : "", INT_MAX,
                           TPB_MAX_INJECT_US);
    inj->rank = (int)rank;
    inj->us = us;
    inj->every = (int)every;
    return TPB_OK;
}

tpb_status_t tpb_opt_string(const char *flag, const char *s, char *dst, size_t cap)
{
    if (strlen(s) >= cap || s[0] == '\0')
        return tpb_err_set(TPB_ERR_INVALID, "%s: expected a non-empty value shorter than %zu", flag,
                           cap);
    strcpy(dst, s);
    return TPB_OK;
}

tpb_status_t tpb_opt_bytes(const char *flag, const char *s, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    int shift = 0;
    switch (*end) {
    case 'k':
    case 'K':
        shift = 10;
        end++;
        break;
    case 'm':
    case 'M':
        shift = 20;
        end++;
        break;
    case 'g':
    case 'G':
        shift = 30;
        end++;
        break;
    }
    if (shift && *end == 'i' && end[1] == 'B')
        end += 2;
    else if (*end == 'B')
        end++;
    if (errno || end == s || *end != '\0' || v < 1 || v > (TPB_MAX_COMM_BYTES >> shift))
        return tpb_err_set(TPB_ERR_INVALID,
                           "%s '%s': expected bytes from 1 to 16G (suffixes K, M, G: powers of "
                           "1024)",
                           flag, tpb_err_value(s));
    *out = v << shift;
    return TPB_OK;
}

typedef struct {
    long *v;
} bytes_ctx;

static tpb_status_t bytes_item(const char *flag, const char *item, void *ctx, int i)
{
    return tpb_opt_bytes(flag, item, &((bytes_ctx *)ctx)->v[i]);
}

/* MIN:MAX[:FACTOR] */
static tpb_status_t byte_range(const char *flag, const char *s, long *out, int max, int *n)
{
    char buf[96], *f[4] = {0};
    int nf = 0;
    if (strlen(s) >= sizeof(buf)) /* read whole or refused, never cut */
        return tpb_err_set(TPB_ERR_INVALID, "%s: the value has %zu characters: at most %zu", flag,
                           strlen(s), sizeof(buf) - 1);
    snprintf(buf, sizeof(buf), "%s", s);
    /* split at every ':' (strtok would fold "4K::16M" into two fields) */
    for (char *tok = buf; tok && nf < 4; nf++) {
        f[nf] = tok;
        tok = strchr(tok, ':');
        if (tok)
            *tok++ = '\0';
    }
    long lo, hi, factor = 2;
    if (nf < 2 || nf > 3 || strchr(f[nf - 1], ':'))
        return tpb_err_set(TPB_ERR_INVALID, "%s '%s': expected MIN:MAX[:FACTOR] or a list", flag,
                           tpb_err_value(s));
    for (int i = 0; i < nf; i++)
        if (!f[i][0])
            return tpb_err_set(TPB_ERR_INVALID,
                               "%s '%s': an empty field: expected MIN:MAX[:FACTOR] or a list", flag,
                               tpb_err_value(s));
    TPB_CHECK_RET(tpb_opt_bytes(flag, f[0], &lo));
    TPB_CHECK_RET(tpb_opt_bytes(flag, f[1], &hi));
    if (nf == 3)
        TPB_CHECK_RET(tpb_opt_long(flag, f[2], 2, 1024, &factor));
    if (hi < lo)
        return tpb_err_set(TPB_ERR_INVALID, "%s '%s': MAX is below MIN", flag, tpb_err_value(s));
    int cnt = 0;
    long tmp[TPB_MAX_SHAPES];
    for (long v = lo; v <= hi; v *= factor) {
        if (cnt == max || cnt == TPB_MAX_SHAPES)
            return tpb_err_set(TPB_ERR_INVALID, "%s '%s': more than %d sizes", flag,
                               tpb_err_value(s), max);
        tmp[cnt++] = v;
        if (v > hi / factor)
            break;
    }
    memcpy(out, tmp, (size_t)cnt * sizeof(*out));
    *n = cnt;
    return TPB_OK;
}

tpb_status_t tpb_opt_byte_sizes(const char *flag, const char *s, long *out, int max, int *n)
{
    if (strchr(s, ':'))
        return byte_range(flag, s, out, max, n);
    int cnt = tpb_opt_count(s);
    if (cnt > max || cnt > TPB_MAX_SHAPES)
        return tpb_err_set(TPB_ERR_INVALID, "%s: at most %d sizes", flag, max);
    long tmp[TPB_MAX_SHAPES];
    bytes_ctx c = {tmp};
    TPB_CHECK_RET(tpb_opt_for_each(flag, s, bytes_item, &c));
    memcpy(out, tmp, (size_t)cnt * sizeof(*out));
    *n = cnt;
    return TPB_OK;
}
