/* record_files.c - rank 0's result files: results.jsonl, results.csv and ranks.csv written
 * whole at the run's first record, then appended to config by config (record/outappend.h;
 * nothing rewritten per config), results.jsonl rewritten once at the end with its final run
 * line; a status sealed in place where that cannot be written (a full disk). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/record_impl.h"

#include "record/outappend.h"
#include "record/outfile.h"
#include "record/report.h"

/* The result files that grow by appending, in the order of tpb_record_t.app. */
static const char *const RESULT_FILE[3] = {"results.jsonl", "results.csv", "ranks.csv"};

tpb_status_t tpb_record_note_file(tpb_record_t *s, const char *name)
{
    for (int i = 0; i < s->nfiles; i++)
        if (strcmp(s->files[i], name) == 0)
            return TPB_OK;
    if (s->nfiles == s->cap_files) {
        int cap = s->cap_files ? 2 * s->cap_files : 16;
        char(*f)[TPB_OUTFILE_NAME] = realloc(s->files, (size_t)cap * sizeof(*f));
        if (!f)
            return tpb_err_set(TPB_ERR_NOMEM, "out of memory for the run's file list");
        s->files = f;
        s->cap_files = cap;
    }
    snprintf(s->files[s->nfiles++], TPB_OUTFILE_NAME, "%s", name);
    return TPB_OK;
}

void tpb_record_cut(tpb_buf_t *b, size_t len)
{
    if (b->data && len <= b->len) {
        b->len = len;
        b->data[len] = '\0';
    }
}

/* One of the result files, written in full into the set (*f: its stream). */
static tpb_status_t add_file(tpb_record_t *s, tpb_outset_t *set, const char *name,
                             const tpb_buf_t *b, FILE **out)
{
    FILE *f;
    if (!tpb_buf_ok(b))
        return tpb_err_set(TPB_ERR_NOMEM, "out of memory for %s", name);
    TPB_CHECK_RET(tpb_record_note_file(s, name));
    TPB_CHECK_RET(tpb_outset_add(set, s->run.out_dir, name, &f));
    *out = f;
    if (b->len && fwrite(b->data, 1, b->len, f) != b->len)
        return tpb_err_set(TPB_ERR_IO, "cannot write %s/%s: %s", s->run.out_dir, name,
                           strerror(errno));
    return TPB_OK;
}

static tpb_buf_t *pending(tpb_record_t *s, int i)
{
    return i == 0 ? &s->jsonl : i == 1 ? &s->csv : &s->ranks_csv;
}

/* The files hold every record the buffers held: the buffers start again empty (rank 0's
 * memory stays flat over a sweep). */
static void written(tpb_record_t *s)
{
    for (int i = 0; i < 3; i++)
        tpb_record_cut(pending(s, i), 0);
}

static void close_appends(tpb_record_t *s)
{
    for (int i = 0; i < 3; i++)
        tpb_outappend_close(&s->app[i]);
    tpb_outappend_close(&s->reserve);
    s->appending = 0;
}

/* The room the rewrite at the end needs beside the appended results.jsonl once its pending
 * records are in: the file, its run line again (the final one holds the closing clock sync
 * and the file list), and the summary (under 1 KiB a config here: held at 2 KiB a config,
 * one more, and 4 KiB). */
static long reserve_need(const tpb_record_t *s)
{
    long configs = s->nhist + s->nohist + s->nbhist;
    return s->app[0].len + (long)s->jsonl.len + 2 * s->run_line_len + 32L * s->nfiles +
           2048L * (configs + 1) + 4096L;
}

/* Keep the three result files of the set (written, not yet renamed) to append to. */
static tpb_status_t keep_files(tpb_record_t *s, FILE *const *f)
{
    for (int i = 0; i < 3; i++) {
        char path[1200];
        snprintf(path, sizeof(path), "%s/%s", s->run.out_dir, RESULT_FILE[i]);
        tpb_outappend_close(&s->app[i]);
        TPB_CHECK_RET(tpb_outappend_keep(&s->app[i], f[i], path));
    }
    return TPB_OK;
}

/* Where the run line (the first of results.jsonl) holds its status' opening quote: the
 * last "status" key of that line (nested objects come before it), or -1. */
static long status_offset(const char *line)
{
    const char *key = "\"status\":", *end = strchr(line, '\n'), *at = NULL;
    for (const char *p = strstr(line, key); p && (!end || p < end); p = strstr(p + 1, key))
        at = p;
    return at ? (long)(at - line + (long)strlen(key)) : -1;
}

/* The three result files of the record written whole into the set, the first time (status
 * as written: "running" becomes "interrupted" once a stop was asked for), and kept to
 * append to; *status_at: where the status is. */
static tpb_status_t add_results(tpb_record_t *s, tpb_outset_t *set, tpb_run_status_t *status,
                                long *status_at)
{
    tpb_buf_t j = TPB_BUF_INIT, c = TPB_BUF_INIT, r = TPB_BUF_INIT;
    FILE *f[3] = {NULL, NULL, NULL};
    if (*status == TPB_RUN_RUNNING && s->stopping)
        *status = TPB_RUN_INTERRUPTED;
    for (int i = 0; i < 3; i++) /* listed in the record that is written with them */
        TPB_CHECK_RET(tpb_record_note_file(s, RESULT_FILE[i]));
    tpb_record_run_json(s, &j, *status);
    *status_at = status_offset(tpb_buf_str(&j));
    s->run_line_len = (long)j.len;
    tpb_buf_puts(&j, tpb_buf_str(&s->jsonl));
    if (!tpb_buf_ok(&s->jsonl))
        j.failed = 1;
    tpb_report_csv_header(&c);
    tpb_buf_puts(&c, tpb_buf_str(&s->csv));
    tpb_report_ranks_header(&r);
    tpb_buf_puts(&r, tpb_buf_str(&s->ranks_csv));
    tpb_status_t st = add_file(s, set, RESULT_FILE[0], &j, &f[0]);
    if (st == TPB_OK)
        st = add_file(s, set, RESULT_FILE[1], &c, &f[1]);
    if (st == TPB_OK)
        st = add_file(s, set, RESULT_FILE[2], &r, &f[2]);
    if (st == TPB_OK)
        st = keep_files(s, f);
    tpb_buf_free(&j);
    tpb_buf_free(&c);
    tpb_buf_free(&r);
    return st;
}

/* A config's records (and its trace, in the set) while the run goes on: the trace put in
 * place first (no record names a config whose trace is missing), then each file's records
 * appended; a file that cannot take them takes the others back to where they were (and the
 * trace is removed: no record names it). */
static tpb_status_t append_results(tpb_record_t *s, tpb_outset_t *set, const char *trace)
{
    long was[3];
    for (int i = 0; i < 3; i++) {
        was[i] = s->app[i].len;
        if (!tpb_buf_ok(pending(s, i)))
            return tpb_err_set(TPB_ERR_NOMEM, "out of memory for %s", RESULT_FILE[i]);
    }
    /* the room for the end first: a disk too full for it fails this config, not the end */
    TPB_CHECK_RET(tpb_outreserve_grow(&s->reserve, reserve_need(s)));
    TPB_CHECK_RET(tpb_outset_commit(set));
    tpb_record_trace_placed(s);
    for (int i = 0; i < 3; i++) {
        const tpb_buf_t *b = pending(s, i);
        tpb_status_t st = tpb_outappend_write(&s->app[i], b->data ? b->data : "", b->len);
        if (st != TPB_OK) {
            for (int k = 0; k < i; k++)
                tpb_outappend_truncate(&s->app[k], was[k]);
            if (trace && trace[0])
                tpb_outdir_remove(s->run.out_dir, &trace, 1);
            return st;
        }
    }
    written(s);
    return TPB_OK;
}

/* The end of the run: results.jsonl rewritten once, its run line with the final facts
 * (status, configs, files, the closing clock sync) and after it the configs' records as
 * the run appended them, then the end's (summary); the CSV files get what is left. A
 * rewrite that fails leaves the appended file, the end's records appended to it. */
static tpb_status_t rewrite_results(tpb_record_t *s, tpb_run_status_t status, long *status_at)
{
    tpb_outset_t set = {.n = 0};
    tpb_buf_t j = TPB_BUF_INIT;
    FILE *f = NULL;
    tpb_status_t st = TPB_OK;
    tpb_outappend_close(&s->reserve); /* its room is the new version's */
    for (int i = 1; i < 3 && st == TPB_OK; i++)
        st = tpb_outappend_write(&s->app[i], pending(s, i)->data ? pending(s, i)->data : "",
                                 pending(s, i)->len);
    tpb_record_run_json(s, &j, status);
    long line = (long)j.len;
    *status_at = status_offset(tpb_buf_str(&j));
    if (st == TPB_OK && !tpb_buf_ok(&j))
        st = tpb_err_set(TPB_ERR_NOMEM, "out of memory for the run record");
    if (st == TPB_OK)
        st = add_file(s, &set, RESULT_FILE[0], &j, &f);
    if (st == TPB_OK)
        st = tpb_outappend_copy(&s->app[0], s->run_line_len, f);
    if (st == TPB_OK && s->jsonl.len && fwrite(s->jsonl.data, 1, s->jsonl.len, f) != s->jsonl.len)
        st = tpb_err_set(TPB_ERR_IO, "cannot write %s/%s: %s", s->run.out_dir, RESULT_FILE[0],
                         strerror(errno));
    tpb_outappend_t kept = TPB_OUTAPPEND_NONE;
    if (st == TPB_OK)
        st = tpb_outappend_keep(&kept, f, s->app[0].path);
    if (st == TPB_OK)
        st = tpb_outset_commit(&set);
    tpb_buf_free(&j);
    if (st != TPB_OK) { /* the records stay where they were appended, the end's after them */
        char msg[1024];
        snprintf(msg, sizeof(msg), "%s", tpb_err_msg());
        tpb_outset_abort(&set);
        tpb_outappend_close(&kept);
        if (tpb_outappend_write(&s->app[0], s->jsonl.data ? s->jsonl.data : "", s->jsonl.len) ==
            TPB_OK)
            tpb_record_cut(&s->jsonl, 0);
        return tpb_err_set(st, "%s", msg);
    }
    tpb_outappend_close(&s->app[0]);
    s->app[0] = kept;
    s->run_line_len = line;
    written(s);
    return TPB_OK;
}

/* The record (and whatever the set holds already: the trace named trace) put in place: the
 * first time written in full (with --force, the earlier run's other files removed after),
 * then appended to config by config, and rewritten once at the end (rewrite_results). */
tpb_status_t tpb_record_commit(tpb_record_t *s, tpb_run_status_t status, tpb_outset_t *set,
                               const char *trace)
{
    enum { MAX_EARLIER = 4096 };
    static char earlier[MAX_EARLIER][TPB_OUTFILE_NAME];
    if (!s->run.out_dir[0] || s->sealed) {
        tpb_outset_abort(set);
        return TPB_OK;
    }
    long at = -1;
    if (s->appending && status == TPB_RUN_RUNNING) { /* a config (or a block) while it runs */
        tpb_status_t st = append_results(s, set, trace);
        if (st != TPB_OK)
            tpb_outset_abort(set);
        return st;
    }
    if (s->appending) { /* the end */
        tpb_outset_abort(set);
        TPB_CHECK_RET(rewrite_results(s, status, &at));
        s->status_at = at;
        s->status_written = status;
        return TPB_OK;
    }
    int first = !s->claimed,
        n = first && s->run.force ? tpb_record_earlier_files(s, earlier, MAX_EARLIER) : 0;
    tpb_status_t st = add_results(s, set, &status, &at);
    if (st == TPB_OK)
        st = tpb_outreserve_open(&s->reserve, s->run.out_dir);
    if (st == TPB_OK)
        st = tpb_outreserve_grow(&s->reserve, reserve_need(s));
    if (st == TPB_OK)
        st = tpb_outset_commit(set);
    if (st != TPB_OK) {
        tpb_outset_abort(set);
        close_appends(s);
        return st;
    }
    tpb_record_trace_placed(s);
    s->appending = 1;
    written(s);
    s->claimed = 1;
    s->status_at = at;
    s->status_written = status;
    return n ? tpb_record_replace_earlier(s, earlier, n) : TPB_OK;
}

tpb_status_t tpb_record_begin(tpb_record_t *s)
{
    tpb_outset_t set = {.n = 0};
    if (s->claimed || s->run.force) /* --force: the earlier run's files stay until a result */
        return TPB_OK;
    return tpb_record_commit(s, TPB_RUN_RUNNING, &set, NULL);
}

/* A status as the run line holds it: quoted, padded to the longest name. */
static void status_field(char *out, size_t cap, tpb_run_status_t st)
{
    const char *name = tpb_run_status_name(st);
    snprintf(out, cap, "\"%s\"%*s", name, TPB_RUN_STATUS_WIDTH - (int)strlen(name), "");
}

/* The final status written over the one in results.jsonl as last written, in place, where
 * the record could not be rewritten (a full disk): the configs it holds are whole, and now
 * say how the run ended. */
static void seal_in_place(tpb_record_t *s, tpb_run_status_t status)
{
    char was[TPB_RUN_STATUS_WIDTH + 3], now[TPB_RUN_STATUS_WIDTH + 3];
    if (s->status_at < 0 || s->status_written == status)
        return;
    status_field(was, sizeof(was), s->status_written);
    status_field(now, sizeof(now), status);
    if (tpb_outfile_patch(s->run.out_dir, "results.jsonl", s->status_at, was, now,
                          TPB_RUN_STATUS_WIDTH + 2) == TPB_OK)
        s->status_written = status;
}

tpb_status_t tpb_record_write(tpb_record_t *s, tpb_run_status_t status)
{
    tpb_outset_t set = {.n = 0};
    if (!s->claimed) /* nothing of this run yet: touch nothing */
        return TPB_OK;
    tpb_status_t st = tpb_record_commit(s, status, &set, NULL);
    if (st != TPB_OK && status != TPB_RUN_RUNNING && !s->sealed) {
        char msg[1024];
        snprintf(msg, sizeof(msg), "%s", tpb_err_msg()); /* the reason stays the message */
        seal_in_place(s, status);
        tpb_err_set(st, "%s", msg);
    }
    s->ended |= st == TPB_OK && status != TPB_RUN_RUNNING;
    return st;
}

tpb_status_t tpb_record_discard(tpb_record_t *s)
{
    if (!s->claimed || s->sealed || s->nhist + s->nohist + s->nbhist > 0 || s->nfiles > 3)
        return TPB_OK;
    const char *names[3];
    int n = 0;
    for (int i = 0; i < s->nfiles && n < 3; i++) /* its start wrote only the result files */
        names[n++] = s->files[i];
    close_appends(s);
    s->sealed = 1;
    s->claimed = 0;
    return tpb_outdir_remove(s->run.out_dir, names, n);
}

tpb_status_t tpb_record_stop(tpb_record_t *s, int seal)
{
    s->stopping = 1;
    tpb_status_t st = s->ended ? TPB_OK : tpb_record_write(s, TPB_RUN_INTERRUPTED);
    s->sealed |= seal;
    return st;
}
