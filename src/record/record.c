/* record.c - rank 0's outputs: per-config records, result files and traces (the run's
 * header and metadata record: record_run.c). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "record/record.h"

#include "base/placement.h"

#include "base/metrics.h"
#include "record/outfile.h"
#include "record/report.h"
#include "record/trace.h"
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
    for (int i = 0; i < r->nhist; i++) {
        free(r->hist[i].t1_rank);
        free(r->hist[i].compute_rank);
        free(r->hist[i].work_rank);
    }
    free(r->hist);
    free(r->ohist);
    tpb_buf_free(&r->jsonl);
    tpb_buf_free(&r->csv);
    tpb_buf_free(&r->ranks_csv);
    tpb_buf_free(&r->trace_infos);
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

/* The world rank at position p of res. */
static int world_of(const tpb_result_t *res, int p)
{
    return res->rank_of ? res->rank_of[p] : p;
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
        int w = world_of(res, p);
        unc[p] = 0.5 * fmax(s->sync0[w].rtt_us, s->sync1[w].rtt_us);
    }
    res->stats.causality_violations =
        tpb_timeline_violations(marks, res->world, res->tp, res->iters, unc);
    free(unc);
    return TPB_OK;
}

/* What the closing summary needs of res beyond its identity. */
static void summary_facts(tpb_history_t *h, const tpb_result_t *res)
{
    snprintf(h->shape_name, sizeof(h->shape_name), "%s", res->shape_name);
    h->step_mean = res->stats.step_mean;
    h->xfer_mean = res->tp > 1 ? res->stats.xfer_mean : 0.0;
    h->comp_mean = res->stats.comp_mean;
    h->speedup = res->speedup;
    h->predicted_speedup = res->predicted_speedup;
    int clear = tpb_straggler_clear(&res->stats, res->tp);
    h->straggler_world = clear ? world_of(res, res->stats.straggler_rank) : -1;
    h->straggler_frac = res->stats.straggler_frac;
    h->straggler_late_us = res->stats.straggler_late_us;
    h->spread_worst = NAN;
    h->spread_world = -1;
    if (!tpb_speed_source_measured(res->speed_source) || res->comm_only)
        return;
    for (int r = 0; r < res->world; r++) {
        double sp = res->info[r].speed_spread;
        if (isfinite(sp) && !(sp <= h->spread_worst)) {
            h->spread_worst = sp;
            h->spread_world = world_of(res, r);
        }
    }
}

/* A chunked config: kept apart, with what the overlap answer needs. */
/* Room for one more entry of a history (*h, *n used of *cap): doubled when full. */
static tpb_status_t hist_room(tpb_history_t **h, int n, int *cap)
{
    if (n < *cap)
        return TPB_OK;
    int more = *cap ? 2 * *cap : 16;
    tpb_history_t *g = realloc(*h, (size_t)more * sizeof(*g));
    if (!g)
        return tpb_err_set(TPB_ERR_NOMEM, "out of memory");
    *h = g;
    *cap = more;
    return TPB_OK;
}

static tpb_status_t push_ohist(tpb_record_t *s, const tpb_result_t *res)
{
    TPB_CHECK_RET(hist_room(&s->ohist, s->nohist, &s->cap_ohist));
    s->ohist[s->nohist++] = (tpb_history_t){.tp = res->tp,
                                            .split = res->split,
                                            .policy = res->policy,
                                            .m = res->m,
                                            .n = res->n,
                                            .k = res->k,
                                            .placement = res->placement,
                                            .step_med = res->stats.step_med,
                                            .speedup = res->serial_step_us / res->stats.step_med,
                                            .chunks = res->chunks,
                                            .overlap = res->overlap};
    snprintf(s->ohist[s->nohist - 1].shape_name, sizeof(s->ohist[0].shape_name), "%s",
             res->shape_name);
    return TPB_OK;
}

static tpb_status_t push_hist(tpb_record_t *s, const tpb_result_t *res)
{
    if (res->chunks)
        return push_ohist(s, res);
    TPB_CHECK_RET(hist_room(&s->hist, s->nhist, &s->cap_hist));
    double *comp = malloc((size_t)res->world * sizeof(double));
    double *work = malloc((size_t)res->world * sizeof(double));
    if (!comp || !work) {
        free(comp);
        free(work);
        return tpb_err_set(TPB_ERR_NOMEM, "out of memory");
    }
    for (int r = 0; r < res->world; r++) {
        comp[r] = res->ranks[r].compute_med;
        work[r] = res->info[r].flop;
    }
    double *t1 = NULL;
    if (res->tp == 1) {
        t1 = malloc((size_t)res->world * sizeof(double));
        if (!t1) {
            free(comp);
            free(work);
            return tpb_err_set(TPB_ERR_NOMEM, "out of memory");
        }
        for (int r = 0; r < res->world; r++)
            t1[r] = res->ranks[r].compute_med;
    }
    s->hist[s->nhist++] = (tpb_history_t){.tp = res->tp,
                                          .split = res->split,
                                          .policy = res->policy,
                                          .m = res->m,
                                          .n = res->n,
                                          .k = res->k,
                                          .coll = res->coll,
                                          .comm_only = res->comm_only,
                                          .coll_bytes = res->coll_bytes,
                                          .placement = res->placement,
                                          .group_nodes = res->max_group_nodes,
                                          .step_med = res->stats.step_med,
                                          .xfer_med = res->stats.xfer_med,
                                          .t1_rank = t1,
                                          .compute_rank = comp,
                                          .work_rank = work};
    summary_facts(&s->hist[s->nhist - 1], res);
    return TPB_OK;
}

/* The topology in the result's position order (hosts and host indices permuted), for the
 * trace: one process per node, one thread per position. view->hosts is allocated. */
static tpb_status_t placed_view(const tpb_topo_t *t, const tpb_result_t *res, tpb_topo_t *view)
{
    *view = *t;
    view->hosts = calloc((size_t)t->size, sizeof(*view->hosts));
    view->host_index = calloc((size_t)t->size, sizeof(int));
    if (!view->hosts || !view->host_index) {
        tpb_topo_free(view);
        return tpb_err_set(TPB_ERR_NOMEM, "out of memory for the trace of %d ranks", t->size);
    }
    for (int r = 0; r < t->size; r++) {
        int w = tpb_result_world_rank(res, r);
        memcpy(view->hosts[r], t->hosts[w], TPB_HOST_LEN);
        view->host_index[r] = t->host_index[w];
    }
    return TPB_OK;
}

/* Iterations a trace keeps: --trace-iters N, all, or auto (all up to TPB_TRACE_BUDGET
 * rank-iterations, else that budget spread over the ranks, at least 16). */
static int trace_window(int opt, int world, int iters)
{
    if (opt < 0)
        return iters;
    if (opt > 0)
        return opt;
    if ((long)world * iters <= TPB_TRACE_BUDGET)
        return iters;
    int n = TPB_TRACE_BUDGET / world;
    return n < 16 ? 16 : n;
}

/* The first n bytes of dir/name into f (what this run wrote there before). */
static tpb_status_t copy_head(FILE *f, const char *dir, const char *name, long n)
{
    char path[4096], buf[1 << 16];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *in = fopen(path, "rb");
    if (!in)
        return tpb_err_set(TPB_ERR_IO, "cannot read back %s: %s", path, strerror(errno));
    while (n > 0) {
        size_t want = n < (long)sizeof(buf) ? (size_t)n : sizeof(buf);
        size_t got = fread(buf, 1, want, in);
        if (got == 0 || fwrite(buf, 1, got, f) != got)
            break;
        n -= (long)got;
    }
    fclose(in);
    if (n > 0)
        return tpb_err_set(TPB_ERR_IO, "cannot copy %s into its new version (%ld bytes short)",
                           path, n);
    return TPB_OK;
}

/* --trace-per run: trace.json again with res's events appended (record/trace.h). */
static tpb_status_t write_run_trace(tpb_record_t *s, const tpb_result_t *res,
                                    const tpb_mark_t *marks, const double *steps,
                                    const unsigned char *keep)
{
    tpb_outstream_t os;
    TPB_CHECK_RET(tpb_outstream_open(&os, s->run.out_dir, TPB_TRACE_RUN_NAME));
    tpb_status_t st = TPB_OK;
    if (s->trace_end == 0)
        tpb_trace_run_begin(os.f, s->run.topo);
    else
        st = copy_head(os.f, s->run.out_dir, TPB_TRACE_RUN_NAME, s->trace_end);
    if (st == TPB_OK)
        st = tpb_trace_run_config(os.f, res, marks, s->t0_us, s->run.topo, keep);
    long end = ftell(os.f);
    char *info = NULL;
    size_t len = 0;
    FILE *m = st == TPB_OK ? open_memstream(&info, &len) : NULL;
    if (st == TPB_OK && !m)
        st = tpb_err_set(TPB_ERR_NOMEM, "out of memory for the run's trace");
    if (m) {
        tpb_trace_info(m, res, steps, keep);
        fclose(m);
    }
    tpb_buf_t infos = TPB_BUF_INIT;
    if (st == TPB_OK) {
        tpb_buf_printf(&infos, "%s%s%s", tpb_buf_str(&s->trace_infos),
                       s->trace_infos.len ? "," : "", info);
        st = tpb_buf_ok(&infos) ? tpb_trace_run_end(os.f, tpb_buf_str(&infos))
                                : tpb_err_set(TPB_ERR_NOMEM, "out of memory for the run's trace");
    }
    free(info);
    if (st == TPB_OK)
        st = tpb_outstream_commit(&os);
    else
        tpb_outstream_abort(&os);
    if (st == TPB_OK) { /* the record follows the file only once it is in place */
        tpb_buf_free(&s->trace_infos);
        s->trace_infos = infos;
        s->trace_end = end;
    } else {
        tpb_buf_free(&infos);
    }
    return st;
}

static tpb_status_t write_trace(tpb_record_t *s, const tpb_result_t *res, const tpb_mark_t *marks,
                                const double *steps)
{
    unsigned char *keep = NULL;
    int n = trace_window(s->run.trace_iters, res->world, res->iters);
    if (n < res->iters) { /* --trace-iters: a window around the slowest step, and the spikes */
        if (!(keep = malloc((size_t)res->iters)))
            return tpb_err_set(TPB_ERR_NOMEM, "out of memory for the trace window");
        tpb_timeline_trace_window(steps, res->iters, n, keep);
    }
    if (s->run.trace_per_run) {
        tpb_status_t st = write_run_trace(s, res, marks, steps, keep);
        free(keep);
        return st;
    }
    char name[64];
    tpb_outstream_t os;
    tpb_trace_name(res->id, name, sizeof(name));
    tpb_topo_t view;
    tpb_status_t st = placed_view(s->run.topo, res, &view);
    if (st == TPB_OK && (st = tpb_outstream_open(&os, s->run.out_dir, name)) != TPB_OK)
        tpb_topo_free(&view);
    if (st != TPB_OK) {
        free(keep);
        return st;
    }
    st = tpb_trace_write(os.f, res, marks, steps, s->t0_us, &view, keep);
    free(keep);
    tpb_topo_free(&view);
    if (st != TPB_OK) {
        tpb_outstream_abort(&os);
        return st;
    }
    return tpb_outstream_commit(&os);
}

/* Before this run's first file: with --force, remove what an earlier run left. */
static tpb_status_t claim_dir(tpb_record_t *s)
{
    if (s->claimed)
        return TPB_OK;
    if (s->run.force)
        TPB_CHECK_RET(tpb_outdir_clear(s->run.out_dir));
    s->claimed = 1;
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

/* The table row and the records of a finished config. */
static void append(tpb_record_t *s, const tpb_result_t *res)
{
    int size = res->world;
    tpb_buf_t row = TPB_BUF_INIT;
    tpb_report_table_row(&row, res);
    tpb_report_overlap_line(&row, res);
    fputs(tpb_buf_str(&row), s->run.table);
    fflush(s->run.table);
    tpb_buf_free(&row);
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

tpb_status_t tpb_record_config(tpb_record_t *s, const tpb_result_t *in, const tpb_mark_t *marks)
{
    tpb_result_t res = *in;
    int size = res.world;
    tpb_rank_stats_t *ranks = calloc((size_t)size, sizeof(*ranks));
    double *steps = malloc((size_t)res.iters * sizeof(double));
    if (!ranks || !steps) {
        free(ranks);
        free(steps);
        return tpb_err_set(TPB_ERR_NOMEM, "out of memory for %d rank statistics", size);
    }
    tpb_status_t st = TPB_OK;
    res.whatif = (tpb_whatif_t){NAN, NAN, NAN, NAN};
    if (s->run.timeline) {
        st = tpb_timeline_analyse(marks, size, res.tp, res.iters, ranks, &res.stats);
        if (st == TPB_OK)
            st = clock_violations(s, &res, marks);
    } else {
        loop_only_stats(&res, marks, ranks, &res.stats);
    }
    if (st == TPB_OK && s->run.timeline)
        st = tpb_whatif_replay(marks, size, res.tp, res.iters, res.stats.straggler_rank,
                               res.stats.step_med, &res.whatif);
    res.ranks = ranks;
    if (!res.emulate_asked)
        res.emulate_asked = s->run.emulate;
    res.max_group_nodes = group_nodes(s->run.topo, &res);
    if (st == TPB_OK) {
        tpb_result_finish(&res, s->hist, s->nhist, s->run.check);
        s->check_failed |= res.check == TPB_CHECK_FAIL;
    }
    /* the trace first: no record (not even the one rewritten after an error) ever names a
     * config whose trace is missing */
    if (st == TPB_OK && s->run.out_dir[0])
        st = claim_dir(s);
    if (st == TPB_OK && s->run.timeline) {
        tpb_timeline_steps(marks, size, res.tp, res.iters, steps);
        res.steps = steps;
    }
    if (st == TPB_OK && s->run.out_dir[0] && s->run.timeline)
        st = write_trace(s, &res, marks, steps);
    if (st == TPB_OK) {
        append(s, &res);
        st = push_hist(s, &res);
    }
    if (st == TPB_OK)
        st = tpb_record_write(s, TPB_RUN_RUNNING);
    free(ranks);
    free(steps);
    return st;
}

void tpb_record_skip(tpb_record_t *s, const char *why)
{
    s->skipped++;
    fprintf(s->run.table, "# skipped: %s\n", why);
    fflush(s->run.table);
}

tpb_status_t tpb_record_write(tpb_record_t *s, tpb_run_status_t status)
{
    if (!s->run.out_dir[0] || !s->claimed) /* nothing of this run yet: touch nothing */
        return TPB_OK;
    tpb_buf_t b = TPB_BUF_INIT;
    tpb_record_run_json(s, &b, status);
    tpb_buf_puts(&b, tpb_buf_str(&s->jsonl));
    tpb_status_t st = tpb_buf_ok(&b) && tpb_buf_ok(&s->jsonl)
                          ? tpb_outfile_replace(s->run.out_dir, "results.jsonl", b.data, b.len)
                          : tpb_err_set(TPB_ERR_NOMEM, "out of memory for results.jsonl");
    tpb_buf_reset(&b);
    tpb_report_csv_header(&b);
    tpb_buf_puts(&b, tpb_buf_str(&s->csv));
    if (st == TPB_OK)
        st = tpb_outfile_replace(s->run.out_dir, "results.csv", b.data, b.len);
    tpb_buf_reset(&b);
    tpb_report_ranks_header(&b);
    tpb_buf_puts(&b, tpb_buf_str(&s->ranks_csv));
    if (st == TPB_OK)
        st = tpb_outfile_replace(s->run.out_dir, "ranks.csv", b.data, b.len);
    tpb_buf_free(&b);
    return st;
}
