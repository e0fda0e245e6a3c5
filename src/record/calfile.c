/* calfile.c - reading and writing the calibration file. */
#include "record/calfile.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/infile.h"
#include "record/outfile.h"

static const char cal_header[] = "split,m,n,k,tp,dtype,rank,host,gflops,spread,samples";
/* the first format, still read: no spread and sample count */
static const char cal_header_v1[] = "split,m,n,k,tp,dtype,rank,host,gflops";

void tpb_calfile_free(tpb_calfile_t *t)
{
    free(t->e);
    memset(t, 0, sizeof(*t));
}

/* Order of entries by key (split, then the rest of TPB_CAL_KEY: m, n, k, tp), dtype, rank. */
static int key_cmp(const tpb_cal_entry_t *a, const tpb_cal_entry_t *b)
{
    int c = tpb_config_key_cmp(&a->key, &b->key, TPB_KEY_SPLIT);
    if (!c)
        c = tpb_config_key_cmp(&a->key, &b->key, TPB_CAL_KEY & ~(unsigned)TPB_KEY_SPLIT);
    long d[2] = {(long)a->dtype - (long)b->dtype, (long)a->rank - (long)b->rank};
    for (int i = 0; !c && i < 2; i++)
        c = d[i] < 0 ? -1 : d[i] > 0;
    return c;
}

/* Index of key in the sorted table, or -(insertion point) - 1. */
static int find(const tpb_calfile_t *t, const tpb_cal_entry_t *key)
{
    int lo = 0, hi = t->n - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2, c = key_cmp(&t->e[mid], key);
        if (c == 0)
            return mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -lo - 1;
}

static tpb_status_t grow(tpb_calfile_t *t, int need)
{
    if (need <= t->cap)
        return TPB_OK;
    int cap = t->cap ? t->cap : 64;
    while (cap < need)
        cap = cap > INT_MAX / 2 ? need : 2 * cap;
    tpb_cal_entry_t *p = realloc(t->e, (size_t)cap * sizeof(*p));
    if (!p)
        return tpb_err_set(TPB_ERR_NOMEM, "calibration table: out of memory");
    t->e = p;
    t->cap = cap;
    return TPB_OK;
}

tpb_status_t tpb_calfile_put(tpb_calfile_t *t, const tpb_cal_entry_t *e)
{
    int at = find(t, e);
    if (at >= 0) {
        t->e[at] = *e;
        return TPB_OK;
    }
    at = -at - 1;
    TPB_CHECK_RET(grow(t, t->n + 1));
    memmove(&t->e[at + 1], &t->e[at], (size_t)(t->n - at) * sizeof(*t->e));
    t->e[at] = *e;
    t->n++;
    return TPB_OK;
}

int tpb_calfile_lookup(const tpb_calfile_t *t, const tpb_config_key_t *k, tpb_dtype_t dt, int r0,
                       int count, const char *const *hosts, tpb_cal_speed_t *speeds, int *stale)
{
    if (stale)
        *stale = -1;
    for (int r = r0; r < r0 + count; r++) {
        tpb_cal_entry_t key = {.dtype = dt, .rank = r};
        tpb_config_key_take(&key.key, k, TPB_CAL_KEY);
        int i = find(t, &key);
        if (i < 0)
            return 0;
        if (hosts && strcmp(t->e[i].host, hosts[r - r0]) != 0) {
            if (stale)
                *stale = r;
            return 0;
        }
        speeds[r - r0] = (tpb_cal_speed_t){
            .speed = t->e[i].gflops, .spread = t->e[i].spread, .samples = t->e[i].samples};
    }
    return 1;
}

/* A whole decimal number in [lo, hi] into *v; 0 if it is not one. */
static int parse_long(const char *f, long lo, long hi, long *v)
{
    char *end;
    errno = 0;
    long x = strtol(f, &end, 10);
    if (!*f || *end || errno == ERANGE || x < lo || x > hi)
        return 0;
    *v = x;
    return 1;
}

/* A finite number in [lo, hi] into *v; 0 if it is not one. */
static int parse_num(const char *f, double lo, double hi, double *v)
{
    char *end;
    double x = strtod(f, &end);
    if (!*f || *end || !isfinite(x) || x < lo || x > hi)
        return 0;
    *v = x;
    return 1;
}

/* One line's fields f[nf] (9 or 11) into e. */
static tpb_status_t parse_entry(char **f, int nf, const char *origin, int lineno,
                                tpb_cal_entry_t *e)
{
    long v[5], samples = 0;
    unsigned split = 0;
    memset(e, 0, sizeof(*e));
    int ok = tpb_name_parse(&tpb_splits, f[0], &split) == TPB_OK &&
             parse_long(f[1], 1, LONG_MAX, &v[0]) && parse_long(f[2], 1, LONG_MAX, &v[1]) &&
             parse_long(f[3], 1, LONG_MAX, &v[2]) && parse_long(f[4], 1, INT_MAX, &v[3]) &&
             tpb_dtype_parse(f[5], &e->dtype) == TPB_OK && parse_long(f[6], 0, INT_MAX, &v[4]) &&
             parse_num(f[8], 0.0, TPB_CAL_MAX_GFLOPS, &e->gflops) && e->gflops > 0.0;
    e->spread = NAN;
    if (ok && nf == 11)
        ok = (parse_num(f[9], 0.0, HUGE_VAL, &e->spread) || strcmp(f[9], "") == 0) &&
             parse_long(f[10], 0, INT_MAX, &samples);
    if (!ok)
        return tpb_err_set(TPB_ERR_INVALID,
                           "--calibration-file %s:%d: malformed line (expected %s with "
                           "gflops above 0 and at most %.0e): fix or delete the file",
                           origin, lineno, cal_header, TPB_CAL_MAX_GFLOPS);
    e->split = (tpb_split_t)split;
    e->m = v[0];
    e->n = v[1];
    e->k = v[2];
    e->tp = (int)v[3];
    e->rank = (int)v[4];
    e->samples = (int)samples;
    size_t written = tpb_text_len(f[7]); /* as saved: what is accepted reads back */
    if (written >= sizeof(e->host))
        return tpb_err_set(TPB_ERR_INVALID,
                           "%s:%d: the host name has %zu bytes as written (UTF-8, a byte that is "
                           "not written as two): at most %zu",
                           origin, lineno, written, sizeof(e->host) - 1);
    snprintf(e->host, sizeof(e->host), "%s", f[7]);
    return TPB_OK;
}

/* Entries (of the table in ctx) by key, then by their order in the file. */
static int index_cmp(const void *a, const void *b, void *ctx)
{
    const tpb_cal_entry_t *e = ctx;
    int i = *(const int *)a, j = *(const int *)b;
    int c = key_cmp(&e[i], &e[j]);
    return c ? c : (i > j) - (i < j);
}

/* Sort the table by key; of rows with one key the last in the file stays (as put would
 * leave it). O(n log n): a million rows load in about a second. */
static tpb_status_t sort_unique(tpb_calfile_t *t)
{
    if (t->n < 2)
        return TPB_OK;
    int *idx = malloc((size_t)t->n * sizeof(int));
    tpb_cal_entry_t *out = malloc((size_t)t->n * sizeof(*out));
    if (!idx || !out) {
        free(idx);
        free(out);
        return tpb_err_set(TPB_ERR_NOMEM, "calibration table: out of memory");
    }
    for (int i = 0; i < t->n; i++)
        idx[i] = i;
    qsort_r(idx, (size_t)t->n, sizeof(int), index_cmp, t->e);
    int n = 0;
    for (int i = 0; i < t->n; i++) {
        if (n && key_cmp(&out[n - 1], &t->e[idx[i]]) == 0)
            n--; /* a later row of the same key replaces the earlier */
        out[n++] = t->e[idx[i]];
    }
    free(idx);
    free(t->e);
    t->e = out;
    t->n = n;
    t->cap = t->n;
    return TPB_OK;
}

tpb_status_t tpb_calfile_parse(char *text, const char *origin, tpb_calfile_t *t)
{
    int lineno = 0, fields = 11;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        lineno++;
        line[strcspn(line, "\r")] = '\0';
        if (lineno == 1) {
            fields = strcmp(line, cal_header_v1) == 0 ? 9 : 11;
            if (fields == 11 && strcmp(line, cal_header) != 0)
                return tpb_err_set(TPB_ERR_INVALID,
                                   "--calibration-file %s: not a tpbal calibration file "
                                   "(first line must be '%s')",
                                   origin, cal_header);
            continue;
        }
        char *f[12];
        tpb_cal_entry_t e;
        if (tpb_csv_split(line, f, 12) != fields)
            return tpb_err_set(TPB_ERR_INVALID, "--calibration-file %s:%d: expected %d fields",
                               origin, lineno, fields);
        TPB_CHECK_RET(parse_entry(f, fields, origin, lineno, &e));
        TPB_CHECK_RET(grow(t, t->n + 1));
        t->e[t->n++] = e;
    }
    return sort_unique(t);
}

tpb_status_t tpb_calfile_load(const char *path, tpb_calfile_t *t)
{
    char *text;
    size_t len;
    int missing;
    TPB_CHECK_RET(
        tpb_infile_read(path, "--calibration-file", TPB_INFILE_MAX, &text, &len, &missing));
    tpb_status_t st = text ? tpb_calfile_parse(text, path, t) : TPB_OK;
    free(text);
    return st;
}

tpb_status_t tpb_calfile_save(const char *path, const tpb_calfile_t *t)
{
    tpb_buf_t b = TPB_BUF_INIT;
    tpb_buf_printf(&b, "%s\n", cal_header);
    for (int i = 0; i < t->n; i++) {
        const tpb_cal_entry_t *e = &t->e[i];
        tpb_buf_printf(&b, "%s,%ld,%ld,%ld,%d,%s,%d,", tpb_split_name((tpb_split_t)e->split), e->m,
                       e->n, e->k, e->tp, tpb_dtype_name(e->dtype), e->rank);
        tpb_csv_field(&b, e->host);
        tpb_buf_puts(&b, ",");
        tpb_csv_num(&b, e->gflops);
        tpb_buf_puts(&b, ",");
        tpb_csv_num(&b, e->spread);
        tpb_buf_printf(&b, ",%d\n", e->samples);
    }
    char dir[1024], name[1024];
    snprintf(dir, sizeof(dir), "%s", path);
    snprintf(name, sizeof(name), "%s", path);
    tpb_status_t st = tpb_buf_ok(&b)
                          ? tpb_outfile_replace(dirname(dir), basename(name), b.data, b.len)
                          : tpb_err_set(TPB_ERR_NOMEM, "calibration file: out of memory");
    tpb_buf_free(&b);
    if (st != TPB_OK) {
        char why[1024];
        snprintf(why, sizeof(why), "%s", tpb_err_msg());
        return tpb_err_set(TPB_ERR_IO, "--calibration-file %s: %s", path, why);
    }
    return TPB_OK;
}
