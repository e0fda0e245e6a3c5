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
#include "record/outfile.h"

static const char cal_header[] = "split,m,n,k,tp,dtype,rank,host,gflops,spread,samples";
/* the first format, still read: no spread and sample count */
static const char cal_header_v1[] = "split,m,n,k,tp,dtype,rank,host,gflops";

void tpb_calfile_free(tpb_calfile_t *t)
{
    free(t->e);
    memset(t, 0, sizeof(*t));
}

static int same_key(const tpb_cal_entry_t *a, const tpb_cal_entry_t *b)
{
    return a->split == b->split && a->m == b->m && a->n == b->n && a->k == b->k && a->tp == b->tp &&
           a->dtype == b->dtype && a->rank == b->rank;
}

tpb_status_t tpb_calfile_put(tpb_calfile_t *t, const tpb_cal_entry_t *e)
{
    for (int i = 0; i < t->n; i++) {
        if (same_key(&t->e[i], e)) {
            t->e[i] = *e;
            return TPB_OK;
        }
    }
    if (t->n == t->cap) {
        int cap = t->cap ? 2 * t->cap : 64;
        tpb_cal_entry_t *p = realloc(t->e, (size_t)cap * sizeof(*p));
        if (!p)
            return tpb_err_set(TPB_ERR_NOMEM, "calibration table: out of memory");
        t->e = p;
        t->cap = cap;
    }
    t->e[t->n++] = *e;
    return TPB_OK;
}

int tpb_calfile_lookup(const tpb_calfile_t *t, int split, long m, long n, long k, int tp,
                       tpb_dtype_t dt, int r0, int count, tpb_cal_speed_t *speeds)
{
    for (int r = r0; r < r0 + count; r++) {
        tpb_cal_entry_t key = {
            .split = split, .m = m, .n = n, .k = k, .tp = tp, .dtype = dt, .rank = r};
        int found = 0;
        for (int i = 0; i < t->n && !found; i++) {
            if (same_key(&t->e[i], &key)) {
                speeds[r - r0] = (tpb_cal_speed_t){
                    .speed = t->e[i].gflops, .spread = t->e[i].spread, .samples = t->e[i].samples};
                found = 1;
            }
        }
        if (!found)
            return 0;
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
             parse_num(f[8], 0.0, HUGE_VAL, &e->gflops) && e->gflops > 0.0;
    e->spread = NAN;
    if (ok && nf == 11)
        ok = (parse_num(f[9], 0.0, HUGE_VAL, &e->spread) || strcmp(f[9], "") == 0) &&
             parse_long(f[10], 0, INT_MAX, &samples);
    if (!ok)
        return tpb_err_set(TPB_ERR_INVALID,
                           "--calibration-file %s:%d: malformed line (expected %s with a "
                           "positive finite gflops): fix or delete the file",
                           origin, lineno, cal_header);
    e->split = (int)split;
    e->m = v[0];
    e->n = v[1];
    e->k = v[2];
    e->tp = (int)v[3];
    e->rank = (int)v[4];
    e->samples = (int)samples;
    snprintf(e->host, sizeof(e->host), "%s", f[7]);
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
        TPB_CHECK_RET(tpb_calfile_put(t, &e));
    }
    return TPB_OK;
}

tpb_status_t tpb_calfile_load(const char *path, tpb_calfile_t *t)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        if (errno == ENOENT)
            return TPB_OK;
        return tpb_err_set(TPB_ERR_INVALID, "--calibration-file %s: cannot read: %s", path,
                           strerror(errno));
    }
    tpb_buf_t b = TPB_BUF_INIT;
    char chunk[4096];
    size_t got;
    while ((got = fread(chunk, 1, sizeof(chunk), f)) > 0)
        tpb_buf_append(&b, chunk, got);
    int err = ferror(f);
    fclose(f);
    tpb_status_t st;
    if (err || !tpb_buf_ok(&b))
        st = tpb_err_set(TPB_ERR_INVALID, "--calibration-file %s: cannot read", path);
    else
        st = b.data ? tpb_calfile_parse(b.data, path, t) : TPB_OK;
    tpb_buf_free(&b);
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
