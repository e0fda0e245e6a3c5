/* record_trace.c - the trace files of a config (record/trace.h writes their events): one
 * trace-NNN.json per config, or with --trace-per run one trace.json rewritten with every
 * config appended; written in full into the set of files the record puts in place. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/outfile.h"
#include "record/record_impl.h"
#include "record/trace.h"

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

/* The iterations a trace keeps (keep[iters], 1 each): --trace-iters N (a window and up to N
 * spikes), all (-1), or auto (0: TPB_TRACE_BUDGET rank-iterations, base/timeline.h). */
static void trace_keep(int opt, int rows, const double *steps, int iters, unsigned char *keep)
{
    if (opt < 0)
        memset(keep, 1, (size_t)iters);
    else if (opt > 0)
        tpb_timeline_trace_window(steps, iters, opt, keep);
    else
        tpb_timeline_trace_budget(steps, iters, rows, TPB_TRACE_BUDGET, keep);
}

/* --trace-per run: trace.json again with res's events appended (record/trace.h). */
static tpb_status_t write_run_trace(tpb_record_t *s, const tpb_result_t *res,
                                    const tpb_mark_t *marks, const double *steps,
                                    const unsigned char *keep, tpb_outset_t *set)
{
    FILE *f;
    TPB_CHECK_RET(tpb_outset_add(set, s->run.out_dir, TPB_TRACE_RUN_NAME, &f));
    tpb_outstream_t *os = &set->s[set->n - 1];
    tpb_status_t st = TPB_OK;
    if (s->trace_end == 0)
        tpb_trace_run_begin(f, s->run.topo);
    else
        st = tpb_outstream_copy_head(os, TPB_TRACE_RUN_NAME, s->trace_end);
    if (st == TPB_OK)
        st = tpb_trace_run_config(f, res, marks, s->t0_us, s->run.topo, keep);
    long end = ftell(f);
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
        st = tpb_buf_ok(&infos) ? tpb_trace_run_end(f, tpb_buf_str(&infos))
                                : tpb_err_set(TPB_ERR_NOMEM, "out of memory for the run's trace");
    }
    free(info);
    tpb_buf_free(&s->pending_infos);
    if (st == TPB_OK) { /* the record follows the file only once it is in place */
        s->pending_infos = infos;
        s->pending_end = end;
    } else {
        tpb_buf_free(&infos);
    }
    return st;
}

void tpb_record_trace_placed(tpb_record_t *s)
{
    if (!s->pending_end)
        return;
    tpb_buf_free(&s->trace_infos);
    s->trace_infos = s->pending_infos;
    s->trace_end = s->pending_end;
    s->pending_infos = (tpb_buf_t)TPB_BUF_INIT;
    s->pending_end = 0;
}

tpb_status_t tpb_record_trace(tpb_record_t *s, const tpb_result_t *res, const tpb_mark_t *marks,
                              const double *steps, tpb_outset_t *set, char *name)
{
    unsigned char *keep = malloc((size_t)res->iters);
    if (!keep)
        return tpb_err_set(TPB_ERR_NOMEM, "out of memory for the trace window");
    trace_keep(s->run.trace_iters, tpb_trace_rows(res), steps, res->iters, keep);
    if (s->run.trace_per_run) {
        snprintf(name, TPB_OUTFILE_NAME, "%s", TPB_TRACE_RUN_NAME);
        tpb_status_t st = write_run_trace(s, res, marks, steps, keep, set);
        free(keep);
        return st;
    }
    FILE *f;
    tpb_trace_name(res->id, name, TPB_OUTFILE_NAME);
    tpb_topo_t view;
    tpb_status_t st = placed_view(s->run.topo, res, &view);
    if (st != TPB_OK) {
        free(keep);
        return st;
    }
    st = tpb_outset_add(set, s->run.out_dir, name, &f);
    if (st == TPB_OK)
        st = tpb_trace_write(f, res, marks, steps, s->t0_us, &view, keep);
    tpb_topo_free(&view);
    free(keep);
    return st;
}
