/* record.c - rank 0's outputs: per-config records and the result files (the run's header
 * and metadata record: record_run.c; the configs kept for later ones and the summary:
 * record_hist.c; the trace files: record_trace.c). */
#include <errno.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "record/record_impl.h"
#include "base/jsonread.h"

#include "base/placement.h"

#include "base/metrics.h"
#include "record/outfile.h"
#include "record/report.h"
#include "record/trace.h"
#include "record/verdict.h"
#include "tpb_config.h"

void tpb_record_init(tpb_record_t *r, const tpb_run_info_t *run, const tpb_clock_sample_t *sync0,
                     const tpb_clock_sample_t *sync1)
{
    memset(r, 0, sizeof(*r));
    r->run = *run;
    r->sync0 = sync0;
    r->sync1 = sync1;
    r->t0_us = sync0[0].at_us;
}

void tpb_record_free(tpb_record_t *r)
{
    for (int i = 0; i < r->nhist; i++)
        tpb_history_free(&r->hist[i]);
    free(r->hist);
    free(r->ohist);
    for (int i = 0; i < r->nbhist; i++)
        tpb_history_free(&r->bhist[i]);
    free(r->bhist);
    tpb_buf_free(&r->jsonl);
    tpb_buf_free(&r->csv);
    tpb_buf_free(&r->ranks_csv);
    tpb_buf_free(&r->trace_infos);
    tpb_buf_free(&r->pending_infos);
    tpb_buf_free(&r->warnings);
    free(r->files);
    memset(r, 0, sizeof(*r));
}

/* --timeline off: only the loop's span per rank is known. */
static void loop_only_stats(const tpb_result_t *res, const tpb_mark_t *marks,
                            tpb_rank_stats_t *ranks, tpb_config_stats_t *st)
{
    int iters = res->iters, size = res->world;
    double lo = INFINITY, hi = -INFINITY;
    memset(st, 0, sizeof(*st));
    for (int r = 0; r < size; r++) {
        lo = fmin(lo, marks[(size_t)r * iters].c0);
        hi = fmax(hi, marks[(size_t)r * iters].x1);
        ranks[r] = (tpb_rank_stats_t){.compute_med = NAN,
                                      .compute_p95 = NAN,
                                      .wait_med = NAN,
                                      .wait_p95 = NAN,
                                      .comm_med = NAN,
                                      .comm_p95 = NAN,
                                      .coll_med = NAN,
                                      .wait_free_med = NAN,
                                      .last_count = 0,
                                      .lateness_us = NAN,
                                      .score = NAN};
    }
    st->step_med = st->step_p95 = st->step_min = st->step_max = st->step_mean = (hi - lo) / iters;
    st->xfer_med = st->xfer_free_med = st->xfer_mean = st->comp_mean = NAN;
    st->straggler_rank = -1;
}

/* Causality violations beyond each pair's stated clock uncertainty: RTT/2 of a rank's start
 * sample or of its latest, whichever is larger (its marks were corrected between the two). */
static tpb_status_t clock_violations(const tpb_record_t *s, tpb_result_t *res,
                                     const tpb_mark_t *marks)
{
    double *unc = malloc((size_t)res->world * sizeof(double));
    if (!unc)
        return tpb_err_set(TPB_ERR_NOMEM, "out of memory for %d clock uncertainties", res->world);
    for (int p = 0; p < res->world; p++) {
        int w = tpb_result_world_rank(res, p);
        unc[p] = 0.5 * fmax(s->sync0[w].rtt_us, s->sync1[w].rtt_us);
    }
    res->stats.causality_violations =
        tpb_timeline_violations(marks, res->world, res->tp, res->iters, unc);
    free(unc);
    return TPB_OK;
}

/* A file this run wrote (once, in the run record's "files"). */
static tpb_status_t note_file(tpb_record_t *s, const char *name)
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

/* The most nodes any TP group of the config spans. */
static int group_nodes(const tpb_topo_t *t, const tpb_result_t *res)
{
    int host_of_pos[res->world], most = 0;
    for (int r = 0; r < res->world; r++)
        host_of_pos[r] = t->host_index[tpb_result_world_rank(res, r)];
    for (int g = 0; g < res->world / res->tp; g++) {
        int n = tpb_placement_group_nodes(host_of_pos, res->tp, g);
        most = n > most ? n : most;
    }
    return most;
}

/* Where the record's buffers end, to take a config back out if its files cannot be written. */
typedef struct {
    size_t jsonl, csv, ranks;
    int nhist, nohist, nfiles;
} mark_t;

static mark_t mark_of(const tpb_record_t *s)
{
    return (mark_t){s->jsonl.len, s->csv.len, s->ranks_csv.len, s->nhist, s->nohist, s->nfiles};
}

static void cut(tpb_buf_t *b, size_t len)
{
    if (b->data && len <= b->len) {
        b->len = len;
        b->data[len] = '\0';
    }
}

/* The record back to where it was at m (the config's records and history removed). */
static void roll_back(tpb_record_t *s, mark_t m)
{
    cut(&s->jsonl, m.jsonl);
    cut(&s->csv, m.csv);
    cut(&s->ranks_csv, m.ranks);
    while (s->nhist > m.nhist)
        tpb_history_free(&s->hist[--s->nhist]);
    s->nohist = m.nohist;
    s->nfiles = m.nfiles; /* its trace is not in the folder */
}

/* The records of a finished config and its table row into *row, printed once its files are
 * in place (its history already pushed: a weighted row shows its speed-up over the even
 * config of its group). */
static void append(tpb_record_t *s, const tpb_result_t *res, tpb_buf_t *row)
{
    int size = res->world;
    const tpb_history_t *ev = NULL, *h = s->nhist ? &s->hist[s->nhist - 1] : NULL;
    tpb_policy_verdict_t v;
    if (h && !res->chunks && !res->comm_only && res->policy != TPB_POLICY_EVEN)
        ev = tpb_verdict_even_of(s->hist, s->nhist - 1, h);
    if (ev)
        v = tpb_verdict_of(ev, h, TPB_VERDICT_TOL);
    tpb_report_table_row(row, res, s->run.width, ev ? &v : NULL);
    tpb_report_overlap_line(row, res, s->run.width);
    tpb_report_json(&s->jsonl, res);
    tpb_report_csv_row(&s->csv, res);
    const char *hosts[size], *devs[size];
    for (int r = 0; r < size; r++) {
        int w = tpb_result_world_rank(res, r);
        hosts[r] = s->run.topo->hosts[w];
        devs[r] = s->run.devices[w].name;
    }
    tpb_report_ranks_rows(&s->ranks_csv, res, hosts, devs);
}

void tpb_record_warn(tpb_record_t *s, const char *fmt, ...)
{
    size_t at = s->warnings.len;
    va_list ap;
    va_start(ap, fmt);
    tpb_buf_vprintf(&s->warnings, fmt, ap);
    va_end(ap);
    tpb_buf_puts(&s->warnings, "\n");
    if (!s->warnings.data || s->warnings.len <= at)
        return;
    const char *all = s->warnings.data, *line = all + at;
    size_t n = s->warnings.len - at; /* with its newline */
    for (const char *p = all; p < line; p = strchr(p, '\n') + 1)
        if (strncmp(p, line, n) == 0) { /* said before: once is enough */
            cut(&s->warnings, at);
            return;
        }
}

static tpb_status_t commit(tpb_record_t *s, tpb_run_status_t status, tpb_outset_t *set);

/* The analysis of all the marks (rank 0 holds every rank's): statistics, violations at the
 * clocks' uncertainties, the what-if replays, the steps and the blocks. */
static tpb_status_t analyse(const tpb_record_t *s, tpb_result_t *res, const tpb_mark_t *marks,
                            tpb_rank_stats_t *ranks, double *steps)
{
    int size = res->world;
    tpb_status_t st = TPB_OK;
    if (!s->run.timeline) {
        loop_only_stats(res, marks, ranks, &res->stats);
        return TPB_OK;
    }
    st = tpb_timeline_analyse(marks, size, res->tp, res->iters, ranks, &res->stats);
    if (st == TPB_OK)
        st = clock_violations(s, res, marks);
    if (st == TPB_OK)
        st = tpb_whatif_replay(marks, size, res->tp, res->iters, res->stats.straggler_rank,
                               res->stats.step_med, &res->whatif);
    if (st != TPB_OK)
        return st;
    tpb_timeline_steps(marks, size, res->tp, res->iters, steps);
    res->steps = steps;
    if (res->tp > 1 && !res->comm_only && !res->chunks) { /* who was slowest in each block */
        int nb = tpb_detect_nblocks(res->iters, res->interleave_rounds);
        double work[size];
        for (int r = 0; r < size; r++)
            work[r] = res->info[r].flop;
        tpb_slow_t *slow = malloc((size_t)nb * (size_t)(size / res->tp) * sizeof(*slow));
        double *dev = malloc((size_t)nb * (size_t)size * sizeof(*dev));
        if (!slow || !dev) {
            free(slow);
            free(dev);
            return tpb_err_set(TPB_ERR_NOMEM, "out of memory for the blocks");
        }
        tpb_detect_blocks(marks, work, size, res->tp, res->iters, nb, slow, dev);
        res->slow = slow;
        res->slow_dev = dev;
        res->nslow = nb * (size / res->tp);
    }
    return TPB_OK;
}

tpb_status_t tpb_record_config(tpb_record_t *s, const tpb_result_t *in, const tpb_mark_t *marks)
{
    if (s->sealed) /* stopped: what the files cannot hold is not printed either */
        return TPB_OK;
    tpb_result_t res = *in;
    int size = res.world, own = !in->analysed; /* the record owns ranks, steps and slow */
    tpb_rank_stats_t *ranks = own ? calloc((size_t)size, sizeof(*ranks)) : NULL;
    double *steps = own ? malloc((size_t)res.iters * sizeof(double)) : NULL;
    if (own && (!ranks || !steps)) {
        free(ranks);
        free(steps);
        return tpb_err_set(TPB_ERR_NOMEM, "out of memory for %d rank statistics", size);
    }
    tpb_status_t st = TPB_OK;
    if (own) {
        res.whatif = (tpb_whatif_t){NAN, NAN, NAN, NAN};
        res.slow = NULL;
        res.slow_dev = NULL;
        res.nslow = 0;
        st = analyse(s, &res, marks, ranks, steps);
        res.ranks = ranks;
    }
    if (!res.emulate_asked)
        res.emulate_asked = s->run.emulate;
    res.max_group_nodes = group_nodes(s->run.topo, &res);
    if (st == TPB_OK) {
        tpb_result_finish(&res, s->hist, s->nhist, s->run.check);
        s->check_failed |= res.check == TPB_CHECK_FAIL;
    }
    /* the trace and the records written in full, then put in place together (the trace
     * first: no record ever names a config whose trace is missing); a config whose files
     * cannot be written is taken back out of the record */
    tpb_outset_t set = {.n = 0};
    mark_t before = mark_of(s);
    char trace[TPB_OUTFILE_NAME];
    if (st == TPB_OK && s->run.out_dir[0] && s->run.timeline && !s->sealed) {
        st = tpb_record_trace(s, &res, marks, res.steps, &set, trace);
        if (st == TPB_OK)
            st = note_file(s, trace);
    }
    if (st == TPB_OK)
        st = tpb_record_push_hist(s, &res);
    tpb_buf_t row = TPB_BUF_INIT;
    if (st == TPB_OK)
        append(s, &res, &row);
    if (st == TPB_OK)
        st = commit(s, TPB_RUN_RUNNING, &set);
    if (st != TPB_OK) {
        tpb_outset_abort(&set);
        roll_back(s, before);
    } else { /* printed once it is in the files: nothing printed that they do not hold */
        fputs(tpb_buf_str(&row), s->run.table);
        fflush(s->run.table);
    }
    tpb_buf_free(&row);
    if (own) {
        free(ranks);
        free(steps);
        free((void *)res.slow);
        free((void *)res.slow_dev);
    }
    return st;
}

void tpb_record_skip(tpb_record_t *s, const char *why)
{
    if (s->sealed)
        return;
    s->skipped++;
    fprintf(s->run.table, "# skipped: %s\n", why);
    fflush(s->run.table);
}

/* One of the result files, written in full into the set. */
static tpb_status_t add_file(tpb_record_t *s, tpb_outset_t *set, const char *name,
                             const tpb_buf_t *b)
{
    FILE *f;
    if (!tpb_buf_ok(b))
        return tpb_err_set(TPB_ERR_NOMEM, "out of memory for %s", name);
    TPB_CHECK_RET(note_file(s, name));
    TPB_CHECK_RET(tpb_outset_add(set, s->run.out_dir, name, &f));
    if (b->len && fwrite(b->data, 1, b->len, f) != b->len)
        return tpb_err_set(TPB_ERR_IO, "cannot write %s/%s: %s", s->run.out_dir, name,
                           strerror(errno));
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

/* The three result files of the record (status as written: "running" becomes
 * "interrupted" once a stop was asked for) into the set; *status_at: where the status is. */
static tpb_status_t add_results(tpb_record_t *s, tpb_outset_t *set, tpb_run_status_t *status,
                                long *status_at)
{
    tpb_buf_t j = TPB_BUF_INIT, c = TPB_BUF_INIT, r = TPB_BUF_INIT;
    if (*status == TPB_RUN_RUNNING && s->stopping)
        *status = TPB_RUN_INTERRUPTED;
    const char *names[3] = {"results.jsonl", "results.csv", "ranks.csv"};
    for (int i = 0; i < 3; i++) /* listed in the record that is written with them */
        TPB_CHECK_RET(note_file(s, names[i]));
    tpb_record_run_json(s, &j, *status);
    *status_at = status_offset(tpb_buf_str(&j));
    tpb_buf_puts(&j, tpb_buf_str(&s->jsonl));
    if (!tpb_buf_ok(&s->jsonl))
        j.failed = 1;
    tpb_report_csv_header(&c);
    tpb_buf_puts(&c, tpb_buf_str(&s->csv));
    tpb_report_ranks_header(&r);
    tpb_buf_puts(&r, tpb_buf_str(&s->ranks_csv));
    tpb_status_t st = add_file(s, set, "results.jsonl", &j);
    if (st == TPB_OK)
        st = add_file(s, set, "results.csv", &c);
    if (st == TPB_OK)
        st = add_file(s, set, "ranks.csv", &r);
    tpb_buf_free(&j);
    tpb_buf_free(&c);
    tpb_buf_free(&r);
    return st;
}

/* The record (and whatever the set holds already: a trace) written in full, then put in
 * place; the first time with --force, the earlier run's other files removed after. */
static tpb_status_t commit(tpb_record_t *s, tpb_run_status_t status, tpb_outset_t *set)
{
    enum { MAX_EARLIER = 4096 };
    static char earlier[MAX_EARLIER][TPB_OUTFILE_NAME];
    if (!s->run.out_dir[0] || s->sealed) {
        tpb_outset_abort(set);
        return TPB_OK;
    }
    int first = !s->claimed,
        n = first && s->run.force ? tpb_record_earlier_files(s, earlier, MAX_EARLIER) : 0;
    long at = -1;
    tpb_status_t st = add_results(s, set, &status, &at);
    if (st != TPB_OK) {
        tpb_outset_abort(set);
        return st;
    }
    TPB_CHECK_RET(tpb_outset_commit(set));
    tpb_record_trace_placed(s);
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
    return commit(s, TPB_RUN_RUNNING, &set);
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
    tpb_status_t st = commit(s, status, &set);
    if (st != TPB_OK && status != TPB_RUN_RUNNING && !s->sealed) {
        char msg[1024];
        snprintf(msg, sizeof(msg), "%s", tpb_err_msg()); /* the reason stays the message */
        seal_in_place(s, status);
        tpb_err_set(st, "%s", msg);
    }
    s->ended |= st == TPB_OK && status != TPB_RUN_RUNNING;
    return st;
}

tpb_status_t tpb_record_stop(tpb_record_t *s)
{
    s->stopping = 1;
    tpb_status_t st = s->ended ? TPB_OK : tpb_record_write(s, TPB_RUN_INTERRUPTED);
    s->sealed = 1;
    return st;
}
