/* calibrate.c - GEMM speed measurement and the calibration file. */
#include "calibrate.h"

#include <errno.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "metrics.h"
#include "outfile.h"

tpb_status_t tpb_calibrate_gemm(const tpb_backend_ops_t *ops, tpb_backend_t *be, long m, long n,
                                long k, tpb_dtype_t dt, int reps, double *gflops)
{
    void *a = NULL, *b = NULL, *c = NULL;
    size_t in = tpb_dtype_in_size(dt), out = tpb_dtype_out_size(dt);
    double marks[2 * reps + 2], dur[reps];
    tpb_status_t st;
    TPB_CHECK_GOTO(ops->alloc(be, (size_t)m * k * in, &a), st, done);
    TPB_CHECK_GOTO(ops->alloc(be, (size_t)k * n * in, &b), st, done);
    TPB_CHECK_GOTO(ops->alloc(be, (size_t)m * n * out, &c), st, done);
    TPB_CHECK_GOTO(tpb_backend_fill(ops, be, a, m, k, 0, 0, 7, 9, 1.0, dt), st, done);
    TPB_CHECK_GOTO(tpb_backend_fill(ops, be, b, n, k, 0, 0, 7, 10, 1.0, dt), st, done);
    TPB_CHECK_GOTO(ops->marks_prepare(be, (size_t)(2 * reps + 2)), st, done);
    tpb_gemm_t g = {m, n, k, a, k, b, k, c, n, dt, 0.0};
    for (int i = 0; i <= reps; i++) {
        TPB_CHECK_GOTO(ops->mark(be, (size_t)(2 * i)), st, done);
        TPB_CHECK_GOTO(ops->gemm(be, &g), st, done);
        TPB_CHECK_GOTO(ops->mark(be, (size_t)(2 * i + 1)), st, done);
    }
    TPB_CHECK_GOTO(ops->marks_read(be, (size_t)(2 * reps + 2), marks), st, done);
    for (int i = 0; i < reps; i++) /* repetition 0 is the warm-up */
        dur[i] = marks[2 * i + 3] - marks[2 * i + 2];
    *gflops = 2.0 * m * n * k / (tpb_median(dur, (size_t)reps) * 1e3);
done:
    if (a)
        ops->free(be, a);
    if (b)
        ops->free(be, b);
    if (c)
        ops->free(be, c);
    return st;
}

/* ---- the calibration file ---- */

static const char cal_header[] = "split,m,n,k,tp,dtype,rank,host,gflops";

void tpb_caltable_free(tpb_cal_table_t *t)
{
    free(t->e);
    memset(t, 0, sizeof(*t));
}

static int same_key(const tpb_cal_entry_t *a, const tpb_cal_entry_t *b)
{
    return a->split == b->split && a->m == b->m && a->n == b->n && a->k == b->k && a->tp == b->tp &&
           a->dtype == b->dtype && a->rank == b->rank;
}

tpb_status_t tpb_caltable_put(tpb_cal_table_t *t, const tpb_cal_entry_t *e)
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

int tpb_caltable_lookup(const tpb_cal_table_t *t, int split, long m, long n, long k, int tp,
                        tpb_dtype_t dt, int r0, int count, double *gflops)
{
    for (int r = r0; r < r0 + count; r++) {
        tpb_cal_entry_t key = {split, m, n, k, tp, dt, r, "", 0};
        int found = 0;
        for (int i = 0; i < t->n && !found; i++) {
            if (same_key(&t->e[i], &key)) {
                gflops[r - r0] = t->e[i].gflops;
                found = 1;
            }
        }
        if (!found)
            return 0;
    }
    return 1;
}

static tpb_status_t parse_entry(char **f, const char *origin, int lineno, tpb_cal_entry_t *e)
{
    char *end;
    memset(e, 0, sizeof(*e));
    e->split = strcmp(f[0], "row") == 0   ? TPB_SPLIT_ROW
               : strcmp(f[0], "col") == 0 ? TPB_SPLIT_COL
                                          : 0;
    e->m = strtol(f[1], &end, 10);
    int bad = *end || !e->split;
    e->n = strtol(f[2], &end, 10);
    bad |= *end;
    e->k = strtol(f[3], &end, 10);
    bad |= *end;
    e->tp = (int)strtol(f[4], &end, 10);
    bad |= *end;
    bad |= tpb_dtype_parse(f[5], &e->dtype) != TPB_OK;
    e->rank = (int)strtol(f[6], &end, 10);
    bad |= *end || e->rank < 0;
    snprintf(e->host, sizeof(e->host), "%s", f[7]);
    e->gflops = strtod(f[8], &end);
    bad |= *end || !(e->gflops > 0.0);
    if (bad)
        return tpb_err_set(TPB_ERR_INVALID,
                           "--calibration-file %s:%d: malformed line (expected %s with a "
                           "positive gflops): fix or delete the file",
                           origin, lineno, cal_header);
    return TPB_OK;
}

tpb_status_t tpb_caltable_parse(char *text, const char *origin, tpb_cal_table_t *t)
{
    int lineno = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        lineno++;
        line[strcspn(line, "\r")] = '\0';
        if (lineno == 1) {
            if (strcmp(line, cal_header) != 0)
                return tpb_err_set(TPB_ERR_INVALID,
                                   "--calibration-file %s: not a tpbal calibration file "
                                   "(first line must be '%s')",
                                   origin, cal_header);
            continue;
        }
        char *f[10];
        tpb_cal_entry_t e;
        if (tpb_csv_split(line, f, 10) != 9)
            return tpb_err_set(TPB_ERR_INVALID, "--calibration-file %s:%d: expected 9 fields",
                               origin, lineno);
        TPB_CHECK_RET(parse_entry(f, origin, lineno, &e));
        TPB_CHECK_RET(tpb_caltable_put(t, &e));
    }
    return TPB_OK;
}

tpb_status_t tpb_caltable_load(const char *path, tpb_cal_table_t *t)
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
        st = b.data ? tpb_caltable_parse(b.data, path, t) : TPB_OK;
    tpb_buf_free(&b);
    return st;
}

tpb_status_t tpb_caltable_save(const char *path, const tpb_cal_table_t *t)
{
    tpb_buf_t b = TPB_BUF_INIT;
    tpb_buf_printf(&b, "%s\n", cal_header);
    for (int i = 0; i < t->n; i++) {
        const tpb_cal_entry_t *e = &t->e[i];
        tpb_buf_printf(&b, "%s,%ld,%ld,%ld,%d,%s,%d,", e->split == TPB_SPLIT_ROW ? "row" : "col",
                       e->m, e->n, e->k, e->tp, tpb_dtype_name(e->dtype), e->rank);
        tpb_csv_field(&b, e->host);
        tpb_buf_puts(&b, ",");
        tpb_csv_num(&b, e->gflops);
        tpb_buf_puts(&b, "\n");
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
