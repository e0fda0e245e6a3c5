/* calibrate.c - GEMM speed measurement and the calibration file. */
#include "run/calibrate.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>

#include "run/agree.h"
#include "base/buf.h"
#include "base/metrics.h"
#include "out/outfile.h"

/* Relative interquartile range of v[n]: (q75 - q25) / median. */
static double rel_iqr(const double *v, size_t n)
{
    return (tpb_quantile(v, n, 0.75) - tpb_quantile(v, n, 0.25)) / tpb_median(v, n);
}

/* Time `batch` GEMMs into dur[0, batch) (microseconds). */
static tpb_status_t time_batch(const tpb_backend_ops_t *ops, tpb_backend_t *be, const tpb_gemm_t *g,
                               int batch, double *marks, double *dur)
{
    for (int i = 0; i < batch; i++) {
        TPB_CHECK_RET(ops->mark(be, (size_t)(2 * i)));
        TPB_CHECK_RET(ops->gemm(be, g));
        TPB_CHECK_RET(ops->mark(be, (size_t)(2 * i + 1)));
    }
    TPB_CHECK_RET(ops->marks_read(be, (size_t)(2 * batch), marks));
    for (int i = 0; i < batch; i++)
        dur[i] = marks[2 * i + 1] - marks[2 * i];
    return TPB_OK;
}

/* Whether every rank may stop: all are stable, one has used its budget, or one failed
 * (its status is agreed on afterwards, so no rank is left waiting in a collective). */
static tpb_status_t all_done(MPI_Comm comm, int stable, int exhausted, int failed, int *done)
{
    int v[3] = {stable, -exhausted, -failed};
    if (MPI_Allreduce(MPI_IN_PLACE, v, 3, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
        return tpb_err_call(TPB_ERR_MPI, "MPI_Allreduce", "calibration", __FILE__, __LINE__);
    *done = v[0] || v[1] || v[2];
    return TPB_OK;
}

/* The sampling loop: every rank times GEMMs in lock-step rounds until all are stable. */
static tpb_status_t sample(const tpb_backend_ops_t *ops, tpb_backend_t *be, MPI_Comm comm,
                           const tpb_gemm_t *g, const tpb_cal_policy_t *p, double *dur, int *n)
{
    double marks[2 * TPB_CAL_BATCH];
    tpb_status_t st = time_batch(ops, be, g, 1, marks, dur); /* warm-up, not kept */
    if (MPI_Barrier(comm) != MPI_SUCCESS)
        return tpb_err_call(TPB_ERR_MPI, "MPI_Barrier", "calibration", __FILE__, __LINE__);
    double t0 = tpb_clock_now_us(NULL);
    int done = 0;
    *n = 0;
    while (!done) {
        int batch = *n + TPB_CAL_BATCH <= p->max_samples ? TPB_CAL_BATCH : p->max_samples - *n;
        if (st == TPB_OK && (st = time_batch(ops, be, g, batch, marks, dur + *n)) == TPB_OK)
            *n += batch;
        int stable = *n >= p->min_samples && rel_iqr(dur, (size_t)*n) <= p->target_spread;
        int exhausted = *n >= p->max_samples ||
                        (*n >= p->min_samples && tpb_clock_now_us(NULL) - t0 >= p->budget_us);
        TPB_CHECK_RET(all_done(comm, stable, exhausted, st != TPB_OK, &done));
    }
    return tpb_agree(comm, st);
}

tpb_status_t tpb_calibrate_gemm(const tpb_backend_ops_t *ops, tpb_backend_t *be, MPI_Comm comm,
                                const tpb_gemm_shape_t *sh, const tpb_cal_policy_t *p,
                                tpb_cal_speed_t *out)
{
    void *a = NULL, *b = NULL, *c = NULL;
    double *dur = NULL;
    long m = sh->m, n = sh->n, k = sh->k;
    size_t in = tpb_dtype_in_size(sh->dtype), outsz = tpb_dtype_out_size(sh->dtype);
    tpb_status_t st = TPB_OK;
    if (!(dur = malloc((size_t)p->max_samples * sizeof(*dur))))
        st = tpb_err_set(TPB_ERR_NOMEM, "calibration: no memory for %d samples", p->max_samples);
    TPB_CHECK_GOTO(st, st, agree);
    TPB_CHECK_GOTO(ops->alloc(be, (size_t)m * k * in, &a), st, agree);
    TPB_CHECK_GOTO(ops->alloc(be, (size_t)k * n * in, &b), st, agree);
    TPB_CHECK_GOTO(ops->alloc(be, (size_t)m * n * outsz, &c), st, agree);
    TPB_CHECK_GOTO(tpb_backend_fill(ops, be, a, m, k, 0, 0, 7, 9, 1.0, sh->dtype), st, agree);
    TPB_CHECK_GOTO(tpb_backend_fill(ops, be, b, n, k, 0, 0, 7, 10, 1.0, sh->dtype), st, agree);
    st = ops->marks_prepare(be, 2 * TPB_CAL_BATCH);
agree:
    /* every rank enters the lock-step loop, or none does */
    TPB_CHECK_GOTO(tpb_agree(comm, st), st, done);
    tpb_gemm_t g = {.m = m,
                    .n = n,
                    .k = k,
                    .a = a,
                    .lda = k,
                    .b = b,
                    .ldb = k,
                    .c = c,
                    .ldc = n,
                    .dtype = sh->dtype,
                    .delay_us = 0.0};
    int ns = 0;
    TPB_CHECK_GOTO(sample(ops, be, comm, &g, p, dur, &ns), st, done);
    out->gflops = 2.0 * m * n * k / (tpb_median(dur, (size_t)ns) * 1e3);
    out->spread = rel_iqr(dur, (size_t)ns);
    out->samples = ns;
done:
    if (a)
        ops->free(be, a);
    if (b)
        ops->free(be, b);
    if (c)
        ops->free(be, c);
    free(dur);
    return st;
}

/* ---- the calibration file ---- */

static const char cal_header[] = "split,m,n,k,tp,dtype,rank,host,gflops,spread,samples";
/* the first format, still read: no spread and sample count */
static const char cal_header_v1[] = "split,m,n,k,tp,dtype,rank,host,gflops";

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
                        tpb_dtype_t dt, int r0, int count, tpb_cal_speed_t *speeds)
{
    for (int r = r0; r < r0 + count; r++) {
        tpb_cal_entry_t key = {
            .split = split, .m = m, .n = n, .k = k, .tp = tp, .dtype = dt, .rank = r};
        int found = 0;
        for (int i = 0; i < t->n && !found; i++) {
            if (same_key(&t->e[i], &key)) {
                speeds[r - r0] = (tpb_cal_speed_t){
                    .gflops = t->e[i].gflops, .spread = t->e[i].spread, .samples = t->e[i].samples};
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
    memset(e, 0, sizeof(*e));
    e->split = strcmp(f[0], "row") == 0   ? TPB_SPLIT_ROW
               : strcmp(f[0], "col") == 0 ? TPB_SPLIT_COL
                                          : 0;
    int ok = e->split && parse_long(f[1], 1, LONG_MAX, &v[0]) &&
             parse_long(f[2], 1, LONG_MAX, &v[1]) && parse_long(f[3], 1, LONG_MAX, &v[2]) &&
             parse_long(f[4], 1, INT_MAX, &v[3]) && tpb_dtype_parse(f[5], &e->dtype) == TPB_OK &&
             parse_long(f[6], 0, INT_MAX, &v[4]) && parse_num(f[8], 0.0, HUGE_VAL, &e->gflops) &&
             e->gflops > 0.0;
    e->spread = NAN;
    if (ok && nf == 11)
        ok = (parse_num(f[9], 0.0, HUGE_VAL, &e->spread) || strcmp(f[9], "") == 0) &&
             parse_long(f[10], 0, INT_MAX, &samples);
    if (!ok)
        return tpb_err_set(TPB_ERR_INVALID,
                           "--calibration-file %s:%d: malformed line (expected %s with a "
                           "positive finite gflops): fix or delete the file",
                           origin, lineno, cal_header);
    e->m = v[0];
    e->n = v[1];
    e->k = v[2];
    e->tp = (int)v[3];
    e->rank = (int)v[4];
    e->samples = (int)samples;
    snprintf(e->host, sizeof(e->host), "%s", f[7]);
    return TPB_OK;
}

tpb_status_t tpb_caltable_parse(char *text, const char *origin, tpb_cal_table_t *t)
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
