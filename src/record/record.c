/* record.c - rank 0's outputs: per-config records (the result files they go to:
 * record_files.c; the run's header and metadata record: record_run.c; the configs kept for
 * later ones and the summary: record_hist.c; the trace files: record_trace.c). */
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
    for (int i = 0; i < 3; i++)
        r->app[i] = (tpb_outappend_t)TPB_OUTAPPEND_NONE;
    r->reserve = (tpb_outappend_t)TPB_OUTAPPEND_NONE;
    r->spill = (tpb_spill_t)TPB_SPILL_NONE;
    r->cpu_others = NAN;
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
    for (int i = 0; i < 3; i++)
        tpb_outappend_close(&r->app[i]);
    tpb_outappend_close(&r->reserve);
    tpb_spill_close(&r->spill);
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
    long spill;
} mark_t;

static mark_t mark_of(const tpb_record_t *s)
{
    return (mark_t){s->jsonl.len, s->csv.len, s->ranks_csv.len, s->nhist,
                    s->nohist,    s->nfiles,  s->spill.end};
}

/* The record back to where it was at m (the config's records and history removed). */
static void roll_back(tpb_record_t *s, mark_t m)
{
    tpb_record_cut(&s->jsonl, m.jsonl);
    tpb_record_cut(&s->csv, m.csv);
    tpb_record_cut(&s->ranks_csv, m.ranks);
    while (s->nhist > m.nhist)
        tpb_history_free(&s->hist[--s->nhist]);
    s->nohist = m.nohist;
    s->nfiles = m.nfiles; /* its trace is not in the folder */
    tpb_spill_truncate(&s->spill, m.spill);
}

/* The records of a finished config and its table row into *row, printed once its files are
 * in place (its history already pushed: a weighted row shows its speed-up over the even
 * config of its group). */
/* A disturbed config: said under its row (its median may lie between two modes: no step at
 * all) and once more after the table, beside the answer. */
static void disturbed_line(tpb_record_t *s, const tpb_result_t *res, tpb_buf_t *row)
{
    char why[160];
    tpb_disturb_describe(&res->disturb, why, sizeof(why));
    if (!why[0])
        return;
    tpb_buf_printf(row, "#       disturbed: %s%s\n", why,
                   res->disturb.bimodal ? " (the median lies between: no step)" : "");
    tpb_record_warn(s,
                    "# warning: config %d (tp %d %s %s %ldx%ldx%ld) is disturbed, %s: another "
                    "process or a clock step interfered; its figures are not one step's "
                    "(measure it again on a quiet device)",
                    res->id, res->tp, tpb_split_name(res->split), tpb_policy_name(res->policy),
                    res->m, res->n, res->k, why);
}

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
    disturbed_line(s, res, row);
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
            tpb_record_cut(&s->warnings, at);
            return;
        }
}

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
    /* the trace written in full and put in place, then the records (the trace first: no
     * record ever names a config whose trace is missing); a config whose files cannot be
     * written is taken back out of the record */
    tpb_outset_t set = {.n = 0};
    mark_t before = mark_of(s);
    char trace[TPB_OUTFILE_NAME] = "";
    if (st == TPB_OK && s->run.out_dir[0] && s->run.timeline && !s->sealed) {
        st = tpb_record_trace(s, &res, marks, res.steps, &set, trace);
        if (st == TPB_OK)
            st = tpb_record_note_file(s, trace);
    }
    res.trace = trace[0] ? trace : NULL;
    if (st == TPB_OK)
        st = tpb_record_push_hist(s, &res);
    tpb_buf_t row = TPB_BUF_INIT;
    if (st == TPB_OK)
        append(s, &res, &row);
    if (st == TPB_OK)
        st = tpb_record_commit(s, TPB_RUN_RUNNING, &set, s->run.trace_per_run ? NULL : trace);
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
