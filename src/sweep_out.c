/* sweep_out.c - rank 0's outputs: header, per-config records, files, summary. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "metrics.h"
#include "outfile.h"
#include "report.h"
#include "sweep.h"
#include "tpb_config.h"
#include "trace.h"

void tpb_sweep_print_header(const tpb_sweep_t *s)
{
    const tpb_options_t *o = s->o;
    char ver[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(ver, &len);
    ver[strcspn(ver, "\n,")] = '\0';
    fprintf(s->out,
            "# tpbal %s: backend %s, %d ranks on %d hosts, dtype %s, %d+%d iters, "
            "granularity %ld\n",
            PACKAGE_VERSION, s->backend_name, s->topo->size, s->topo->nhosts,
            tpb_dtype_name(o->dtype), o->warmup, o->iters, o->granularity);
    fprintf(s->out, "# versions: %s; %s\n", ver, s->devices[0].versions);
    for (int r = 0; r < s->topo->size; r++) {
        const tpb_device_info_t *d = &s->devices[r];
        fprintf(s->out,
                "#   rank %3d  host %-16s dev %2d  %s  units %d/%d  mem %.1f GiB%s%s%s%s%s%s\n", r,
                s->topo->hosts[r], d->index, d->name, d->sm_count, d->sm_total,
                d->mem_bytes / 1073741824.0, d->bus_id[0] ? "  bus " : "", d->bus_id,
                d->uuid[0] ? "  " : "", d->uuid, strcmp(d->emulation, "none") ? "  emulation " : "",
                strcmp(d->emulation, "none") ? d->emulation : "");
    }
    double worst = 0;
    for (int r = 0; r < s->topo->size; r++)
        worst = fmax(worst, fabs(s->sync0[r].offset_us) + 0.5 * s->sync0[r].rtt_us);
    fprintf(s->out, "# clock sync: %d ping-pongs per rank, max |offset| + rtt/2 = %.1f us\n",
            TPB_CLOCK_EXCHANGES, worst);
    tpb_buf_t b = TPB_BUF_INIT;
    tpb_report_table_header(&b);
    fputs(tpb_buf_str(&b), s->out);
    tpb_buf_free(&b);
    fflush(s->out);
}

static void json_clock(tpb_buf_t *b, const char *key, const tpb_clock_sample_t *v, int n,
                       double t0_us)
{
    tpb_json_key(b, key);
    tpb_json_arr_begin(b);
    for (int r = 0; r < n; r++) {
        tpb_json_obj_begin(b);
        tpb_json_kv_num(b, "offset_us", v[r].offset_us);
        tpb_json_kv_num(b, "rtt_us", v[r].rtt_us);
        tpb_json_kv_num(b, "uncertainty_us", 0.5 * v[r].rtt_us);
        tpb_json_kv_num(b, "at_us", v[r].at_us - t0_us); /* from the run start */
        tpb_json_obj_end(b);
    }
    tpb_json_arr_end(b);
}

static void json_devices(tpb_buf_t *b, const tpb_sweep_t *s)
{
    tpb_json_key(b, "ranks");
    tpb_json_arr_begin(b);
    for (int r = 0; r < s->topo->size; r++) {
        const tpb_device_info_t *d = &s->devices[r];
        tpb_json_obj_begin(b);
        tpb_json_kv_int(b, "rank", r);
        tpb_json_kv_str(b, "host", s->topo->hosts[r]);
        tpb_json_kv_int(b, "device", d->index);
        tpb_json_kv_str(b, "name", d->name);
        tpb_json_kv_str(b, "bus_id", d->bus_id);
        tpb_json_kv_str(b, "uuid", d->uuid);
        tpb_json_kv_int(b, "sm_count", d->sm_count);
        tpb_json_kv_int(b, "sm_total", d->sm_total);
        tpb_json_kv_num(b, "mem_bytes", d->mem_bytes);
        tpb_json_kv_num(b, "emulate_speed", s->o->nemulate ? s->o->emulate[r] : 1.0);
        tpb_json_kv_str(b, "emulation", d->emulation);
        tpb_json_obj_end(b);
    }
    tpb_json_arr_end(b);
}

void tpb_sweep_metadata(const tpb_sweep_t *s, tpb_buf_t *b, int finished)
{
    const tpb_options_t *o = s->o;
    char ver[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(ver, &len);
    ver[strcspn(ver, "\n")] = '\0';
    tpb_json_obj_begin(b);
    tpb_json_kv_str(b, "type", "run");
    tpb_json_kv_int(b, "schema", TPB_SCHEMA_VERSION);
    tpb_json_kv_str(b, "tool", "tpbal");
    tpb_json_kv_str(b, "version", PACKAGE_VERSION);
    tpb_json_kv_str(b, "command_line", s->command_line);
    tpb_json_kv_str(b, "backend", s->backend_name);
    tpb_json_kv_int(b, "world_size", s->topo->size);
    tpb_json_kv_int(b, "nhosts", s->topo->nhosts);
    tpb_json_kv_str(b, "mpi_version", ver);
    tpb_json_kv_str(b, "backend_versions", s->devices[0].versions);
    tpb_json_kv_str(b, "dtype", tpb_dtype_name(o->dtype));
    tpb_json_kv_int(b, "iters", o->iters);
    tpb_json_kv_int(b, "warmup", o->warmup);
    tpb_json_kv_int(b, "granularity", o->granularity);
    tpb_json_kv_int(b, "seed", (long long)o->seed);
    tpb_json_kv_str(b, "timeline", o->timeline ? "on" : "off");
    tpb_json_kv_int(b, "inject_delay_rank", o->inject_delay.rank);
    tpb_json_kv_int(b, "inject_clock_rank", o->inject_clock.rank);
    json_devices(b, s);
    tpb_json_key(b, "clock");
    tpb_json_obj_begin(b);
    tpb_json_kv_str(b, "method", "min-RTT ping-pong with rank 0, linear drift correction");
    tpb_json_kv_int(b, "exchanges", TPB_CLOCK_EXCHANGES);
    json_clock(b, "start", s->sync0, s->topo->size, s->t0_us);
    if (finished)
        json_clock(b, "end", s->sync1, s->topo->size, s->t0_us);
    tpb_json_obj_end(b);
    tpb_json_kv_int(b, "configs", s->nhist);
    tpb_json_kv_int(b, "skipped", s->skipped);
    tpb_json_kv_str(b, "status", finished ? "finished" : "running");
    tpb_json_obj_end(b);
    tpb_buf_puts(b, "\n");
}

/* --timeline off: only the loop's span per rank is known. */
static void loop_only_stats(const tpb_sweep_t *s, const tpb_mark_t *marks, tpb_rank_stats_t *ranks,
                            tpb_config_stats_t *st)
{
    int iters = s->o->iters, size = s->topo->size;
    double lo = INFINITY, hi = -INFINITY;
    memset(st, 0, sizeof(*st));
    for (int r = 0; r < size; r++) {
        lo = fmin(lo, marks[(size_t)r * iters].c0);
        hi = fmax(hi, marks[(size_t)r * iters].x1);
        ranks[r] = (tpb_rank_stats_t){NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, 0, NAN, NAN};
    }
    st->step_med = st->step_p95 = st->step_min = st->step_max = (hi - lo) / iters;
    st->xfer_med = st->xfer_free_med = NAN;
    st->straggler_rank = -1;
}

static const tpb_history_t *find_hist(const tpb_sweep_t *s, const tpb_result_t *res, int tp,
                                      tpb_policy_t policy)
{
    for (int i = 0; i < s->nhist; i++) {
        const tpb_history_t *h = &s->hist[i];
        if (h->tp == tp && h->split == res->split && h->m == res->m && h->n == res->n &&
            h->k == res->k && (policy == 0 || h->policy == policy))
            return h;
    }
    return NULL;
}

static tpb_status_t push_hist(tpb_sweep_t *s, const tpb_result_t *res)
{
    if (s->nhist == s->cap_hist) {
        int cap = s->cap_hist ? 2 * s->cap_hist : 32;
        tpb_history_t *h = realloc(s->hist, (size_t)cap * sizeof(*h));
        if (!h)
            return tpb_err_set(TPB_ERR_NOMEM, "out of memory");
        s->hist = h;
        s->cap_hist = cap;
    }
    double *t1 = NULL;
    if (res->tp == 1) {
        t1 = malloc((size_t)res->world * sizeof(double));
        if (!t1)
            return tpb_err_set(TPB_ERR_NOMEM, "out of memory");
        for (int r = 0; r < res->world; r++)
            t1[r] = res->ranks[r].compute_med;
    }
    s->hist[s->nhist++] =
        (tpb_history_t){res->tp, res->split,          res->policy,         res->m, res->n,
                        res->k,  res->stats.step_med, res->stats.xfer_med, t1};
    return TPB_OK;
}

static void judge_check(const tpb_sweep_t *s, tpb_result_t *res)
{
    res->max_rel_err = NAN;
    res->check = "off";
    if (!s->o->check)
        return;
    double worst = 0.0;
    for (int r = 0; r < res->world; r++)
        if (!isnan(res->info[r].max_err))
            worst = fmax(worst, res->info[r].max_err);
    res->max_rel_err = worst;
    res->check = worst <= tpb_dtype_tolerance(res->dtype) ? "pass" : "fail";
}

/* The fastest rank's compute time (T_1 at TP = 1). */
static double tpb_min_compute(const tpb_rank_stats_t *ranks, int n)
{
    double m = INFINITY;
    for (int r = 0; r < n; r++)
        m = fmin(m, ranks[r].compute_med);
    return m;
}

static tpb_status_t write_trace(const tpb_sweep_t *s, const tpb_result_t *res,
                                const tpb_mark_t *marks)
{
    char name[64];
    tpb_outstream_t os;
    tpb_trace_name(res->id, name, sizeof(name));
    TPB_CHECK_RET(tpb_outstream_open(&os, s->o->out_dir, name));
    tpb_status_t st = tpb_trace_write(os.f, res, marks, s->t0_us, s->topo);
    if (st != TPB_OK) {
        tpb_outstream_abort(&os);
        return st;
    }
    return tpb_outstream_commit(&os);
}

tpb_status_t tpb_sweep_emit(tpb_sweep_t *s, const tpb_result_t *in, const tpb_mark_t *marks)
{
    tpb_result_t res = *in;
    int size = s->topo->size;
    tpb_rank_stats_t *ranks = calloc((size_t)size, sizeof(*ranks));
    if (!ranks)
        return tpb_err_set(TPB_ERR_NOMEM, "out of memory for %d rank statistics", size);
    tpb_status_t st = TPB_OK;
    if (s->o->timeline)
        st = tpb_timeline_analyse(marks, size, res.tp, res.iters, ranks, &res.stats);
    else
        loop_only_stats(s, marks, ranks, &res.stats);
    res.ranks = ranks;
    if (st == TPB_OK) {
        const tpb_history_t *t1 = res.tp == 1 ? NULL : find_hist(s, &res, 1, 0);
        double t1_us = res.tp == 1         ? tpb_min_compute(ranks, size)
                       : t1 && t1->t1_rank ? tpb_min(t1->t1_rank, (size_t)size)
                                           : NAN;
        tpb_result_derive(&res, t1_us);
        const tpb_history_t *ev =
            res.policy == TPB_POLICY_WEIGHTED ? find_hist(s, &res, res.tp, TPB_POLICY_EVEN) : NULL;
        res.speedup = ev ? ev->step_med / res.stats.step_med : NAN;
        judge_check(s, &res);
        s->check_failed |= strcmp(res.check, "fail") == 0;
        tpb_buf_t row = TPB_BUF_INIT;
        tpb_report_table_row(&row, &res);
        fputs(tpb_buf_str(&row), s->out);
        fflush(s->out);
        tpb_buf_free(&row);
        tpb_report_json(&s->jsonl, &res);
        tpb_report_csv_row(&s->csv, &res);
        const char *hosts[size], *devs[size];
        for (int r = 0; r < size; r++) {
            hosts[r] = s->topo->hosts[r];
            devs[r] = s->devices[r].name;
        }
        tpb_report_ranks_rows(&s->ranks_csv, &res, hosts, devs);
        st = push_hist(s, &res);
    }
    if (st == TPB_OK && s->o->out_dir[0]) {
        st = tpb_sweep_write_files(s, 0);
        if (st == TPB_OK && s->o->timeline)
            st = write_trace(s, &res, marks);
    }
    free(ranks);
    return st;
}

tpb_status_t tpb_sweep_write_files(tpb_sweep_t *s, int finished)
{
    tpb_buf_t b = TPB_BUF_INIT;
    tpb_sweep_metadata(s, &b, finished);
    tpb_buf_puts(&b, tpb_buf_str(&s->jsonl));
    tpb_status_t st = tpb_buf_ok(&b) && tpb_buf_ok(&s->jsonl)
                          ? tpb_outfile_replace(s->o->out_dir, "results.jsonl", b.data, b.len)
                          : tpb_err_set(TPB_ERR_NOMEM, "out of memory for results.jsonl");
    tpb_buf_reset(&b);
    tpb_report_csv_header(&b);
    tpb_buf_puts(&b, tpb_buf_str(&s->csv));
    if (st == TPB_OK)
        st = tpb_outfile_replace(s->o->out_dir, "results.csv", b.data, b.len);
    tpb_buf_reset(&b);
    tpb_report_ranks_header(&b);
    tpb_buf_puts(&b, tpb_buf_str(&s->ranks_csv));
    if (st == TPB_OK)
        st = tpb_outfile_replace(s->o->out_dir, "ranks.csv", b.data, b.len);
    tpb_buf_free(&b);
    return st;
}
