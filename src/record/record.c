/* record.c - rank 0's outputs: header, per-config records, result files and traces. */
#include <math.h>
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
    for (int i = 0; i < r->nhist; i++)
        free(r->hist[i].t1_rank);
    free(r->hist);
    tpb_buf_free(&r->jsonl);
    tpb_buf_free(&r->csv);
    tpb_buf_free(&r->ranks_csv);
    memset(r, 0, sizeof(*r));
}

/* The MPI library's version up to the first of the characters in stop. */
static void mpi_version(const tpb_record_t *r, const char *stop, char *out, size_t cap)
{
    snprintf(out, cap, "%s", r->run.mpi_version ? r->run.mpi_version : "");
    out[strcspn(out, stop)] = '\0';
}

static const char *or_dash(const char *v)
{
    return v[0] ? v : "-";
}

/* The Slurm job step the run is part of, in one header line. */
static void print_slurm(FILE *f, const tpb_slurm_t *sl)
{
    fprintf(f, "# slurm: job %s step %s, cluster %s, partition %s, nodes %s, tasks per node %s",
            sl->job_id, or_dash(sl->step_id), or_dash(sl->cluster), or_dash(sl->partition),
            or_dash(sl->nodelist), or_dash(sl->tasks_per_node));
    if (sl->cpus_per_task)
        fprintf(f, ", cpus per task %d", sl->cpus_per_task);
    if (sl->gpus_per_task[0])
        fprintf(f, ", gpus per task %s", sl->gpus_per_task);
    if (sl->gpus_per_node[0])
        fprintf(f, ", gpus per node %s", sl->gpus_per_node);
    fputc('\n', f);
}

/* One "# warning:" line per distinct advice of the devices, naming the ranks. */
static void print_advice(const tpb_run_info_t *o)
{
    for (int r = 0; r < o->topo->size; r++) {
        const char *a = o->devices[r].advice;
        int first = 1;
        for (int q = 0; q < r && first; q++)
            first = strcmp(o->devices[q].advice, a) != 0;
        if (!a[0] || !first)
            continue;
        int n = 0;
        for (int q = r; q < o->topo->size; q++)
            n += strcmp(o->devices[q].advice, a) == 0;
        if (n == o->topo->size)
            fprintf(o->table, "# warning: all ranks: %s\n", a);
        else
            fprintf(o->table, "# warning: %d rank%s from rank %d: %s\n", n, n == 1 ? "" : "s", r,
                    a);
    }
}

void tpb_record_header(const tpb_record_t *s)
{
    const tpb_run_info_t *o = &s->run;
    char ver[512];
    mpi_version(s, "\n,", ver, sizeof(ver));
    fprintf(o->table,
            "# tpbal %s: backend %s, %d ranks on %d hosts, dtype %s, %d+%d iters, "
            "granularity %ld\n",
            PACKAGE_VERSION, o->backend, o->topo->size, o->topo->nhosts, tpb_dtype_name(o->dtype),
            o->warmup, o->iters, o->granularity);
    fprintf(o->table, "# versions: %s; %s\n", ver, o->devices[0].versions);
    for (int r = 0; r < o->topo->size; r++) {
        const tpb_device_info_t *d = &o->devices[r];
        fprintf(o->table,
                "#   rank %3d  host %-16s dev %2d  %s  units %d/%d  mem %.1f GiB  peak %.2f "
                "TFLOP/s  cpus %s%s%s%s%s%s%s\n",
                r, o->topo->hosts[r], d->index, d->name, d->sm_count, d->sm_total,
                d->mem_bytes / 1073741824.0, d->peak_gflops * 1e-3, d->cpuset,
                d->bus_id[0] ? "  bus " : "", d->bus_id, d->uuid[0] ? "  " : "", d->uuid,
                strcmp(d->emulation, "none") ? "  emulation " : "",
                strcmp(d->emulation, "none") ? d->emulation : "");
    }
    print_advice(o);
    if (o->slurm && o->slurm->present)
        print_slurm(o->table, o->slurm);
    double worst = 0;
    for (int q = 0; q < o->topo->size; q++)
        worst = fmax(worst, fabs(s->sync0[q].offset_us) + 0.5 * s->sync0[q].rtt_us);
    fprintf(o->table, "# clock sync: %d ping-pongs per rank, max |offset| + rtt/2 = %.1f us\n",
            o->clock_exchanges, worst);
    tpb_buf_t b = TPB_BUF_INIT;
    if (o->comm_only)
        tpb_report_comm_header(&b);
    else
        tpb_report_table_header(&b);
    fputs(tpb_buf_str(&b), o->table);
    tpb_buf_free(&b);
    fflush(o->table);
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

static void json_devices(tpb_buf_t *b, const tpb_run_info_t *s)
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
        tpb_json_kv_int(b, "gpu_numa_node", d->gpu_numa);
        tpb_json_kv_str(b, "uuid", d->uuid);
        tpb_json_kv_int(b, "sm_count", d->sm_count);
        tpb_json_kv_int(b, "sm_total", d->sm_total);
        tpb_json_kv_num(b, "mem_bytes", d->mem_bytes);
        tpb_json_kv_num(b, "emulate_speed", s->emulate ? s->emulate[r] : 1.0);
        tpb_json_kv_str(b, "emulation", d->emulation);
        tpb_json_kv_num(b, "peak_tflops", d->peak_gflops > 0 ? d->peak_gflops * 1e-3 : NAN);
        tpb_json_kv_str(b, "peak_basis", d->peak_basis);
        tpb_json_kv_str(b, "advice", d->advice);
        tpb_json_kv_str(b, "cpuset", d->cpuset);
        tpb_json_key(b, "node");
        tpb_json_obj_begin(b);
        tpb_json_kv_int(b, "packages", d->packages);
        tpb_json_kv_int(b, "numa_nodes", d->numa_nodes);
        tpb_json_kv_int(b, "cores", d->cores);
        tpb_json_kv_int(b, "pus", d->pus);
        tpb_json_obj_end(b);
        tpb_json_obj_end(b);
    }
    tpb_json_arr_end(b);
}

/* Empty strings are unknown: null, never invented. */
static void kv_str_or_null(tpb_buf_t *b, const char *key, const char *v)
{
    tpb_json_kv_str(b, key, v && v[0] ? v : NULL);
}

/* Slurm's facts about the job step, or null outside Slurm. */
static void json_slurm(tpb_buf_t *b, const tpb_slurm_t *sl)
{
    tpb_json_key(b, "slurm");
    if (!sl || !sl->present) {
        tpb_json_str(b, NULL);
        return;
    }
    tpb_json_obj_begin(b);
    kv_str_or_null(b, "job_id", sl->job_id);
    kv_str_or_null(b, "step_id", sl->step_id);
    kv_str_or_null(b, "cluster", sl->cluster);
    kv_str_or_null(b, "partition", sl->partition);
    kv_str_or_null(b, "nodelist", sl->nodelist);
    static char names[TPB_SLURM_MAX_NODES][TPB_SLURM_NAME_LEN];
    int n = sl->nodelist[0] ? tpb_hostlist_expand(sl->nodelist, names, TPB_SLURM_MAX_NODES) : -1;
    tpb_json_key(b, "nodes");
    if (n < 0) {
        tpb_json_str(b, NULL);
    } else {
        tpb_json_arr_begin(b);
        for (int i = 0; i < n; i++)
            tpb_json_str(b, names[i]);
        tpb_json_arr_end(b);
    }
    kv_str_or_null(b, "tasks_per_node", sl->tasks_per_node);
    tpb_json_key(b, "ntasks");
    sl->ntasks ? tpb_json_int(b, sl->ntasks) : tpb_json_str(b, NULL);
    tpb_json_key(b, "cpus_per_task");
    sl->cpus_per_task ? tpb_json_int(b, sl->cpus_per_task) : tpb_json_str(b, NULL);
    kv_str_or_null(b, "gpus_per_task", sl->gpus_per_task);
    kv_str_or_null(b, "gpus_per_node", sl->gpus_per_node);
    tpb_json_obj_end(b);
}

/* The run-metadata JSON object (one line). */
static void metadata(const tpb_record_t *s, tpb_buf_t *b, tpb_run_status_t status)
{
    const tpb_run_info_t *o = &s->run;
    char ver[512];
    mpi_version(s, "\n", ver, sizeof(ver));
    tpb_json_obj_begin(b);
    tpb_json_kv_str(b, "type", "run");
    tpb_json_kv_int(b, "schema", TPB_SCHEMA_VERSION);
    tpb_json_kv_str(b, "tool", "tpbal");
    tpb_json_kv_str(b, "version", PACKAGE_VERSION);
    tpb_json_kv_str(b, "command_line", o->command_line);
    tpb_json_kv_str(b, "backend", o->backend);
    tpb_json_kv_int(b, "world_size", o->topo->size);
    tpb_json_kv_int(b, "nhosts", o->topo->nhosts);
    tpb_json_kv_str(b, "mpi_version", ver);
    tpb_json_kv_str(b, "backend_versions", o->devices[0].versions);
    tpb_json_kv_str(b, "dtype", tpb_dtype_name(o->dtype));
    tpb_json_kv_int(b, "iters", o->iters);
    tpb_json_kv_int(b, "warmup", o->warmup);
    tpb_json_kv_int(b, "granularity", o->granularity);
    tpb_json_kv_int(b, "seed", (long long)o->seed);
    tpb_json_kv_str(b, "timeline", o->timeline ? "on" : "off");
    tpb_json_kv_str(b, "comm_only", o->comm_only ? "yes" : "no");
    json_slurm(b, o->slurm);
    tpb_json_kv_int(b, "inject_delay_rank", o->inject_delay_rank);
    tpb_json_kv_int(b, "inject_clock_rank", o->inject_clock_rank);
    json_devices(b, o);
    tpb_json_key(b, "clock");
    tpb_json_obj_begin(b);
    tpb_json_kv_str(b, "method", "min-RTT ping-pong with rank 0, linear drift correction");
    tpb_json_kv_int(b, "exchanges", o->clock_exchanges);
    json_clock(b, "start", s->sync0, o->topo->size, s->t0_us);
    if (status != TPB_RUN_RUNNING)
        json_clock(b, "end", s->sync1, o->topo->size, s->t0_us);
    tpb_json_obj_end(b);
    tpb_json_kv_int(b, "configs", s->nhist);
    tpb_json_kv_int(b, "skipped", s->skipped);
    tpb_json_kv_str(b, "status", tpb_run_status_name(status));
    tpb_json_obj_end(b);
    tpb_buf_puts(b, "\n");
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
    st->step_med = st->step_p95 = st->step_min = st->step_max = (hi - lo) / iters;
    st->xfer_med = st->xfer_free_med = NAN;
    st->straggler_rank = -1;
}

static tpb_status_t push_hist(tpb_record_t *s, const tpb_result_t *res)
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
                                          .t1_rank = t1};
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

static tpb_status_t write_trace(const tpb_record_t *s, const tpb_result_t *res,
                                const tpb_mark_t *marks, const double *steps)
{
    char name[64];
    tpb_outstream_t os;
    tpb_trace_name(res->id, name, sizeof(name));
    tpb_topo_t view;
    TPB_CHECK_RET(placed_view(s->run.topo, res, &view));
    tpb_status_t st = tpb_outstream_open(&os, s->run.out_dir, name);
    if (st != TPB_OK) {
        tpb_topo_free(&view);
        return st;
    }
    unsigned char *keep = NULL;
    int n = trace_window(s->run.trace_iters, res->world, res->iters);
    if (n < res->iters) { /* --trace-iters: a window around the slowest step, and the spikes */
        keep = malloc((size_t)res->iters);
        if (!keep) {
            tpb_topo_free(&view);
            tpb_outstream_abort(&os);
            return tpb_err_set(TPB_ERR_NOMEM, "out of memory for the trace window");
        }
        tpb_timeline_trace_window(steps, res->iters, n, keep);
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
    if (s->run.timeline)
        st = tpb_timeline_analyse(marks, size, res.tp, res.iters, ranks, &res.stats);
    else
        loop_only_stats(&res, marks, ranks, &res.stats);
    if (st == TPB_OK && s->run.timeline)
        st = tpb_whatif_replay(marks, size, res.tp, res.iters, res.stats.straggler_rank,
                               res.stats.step_med, &res.whatif);
    res.ranks = ranks;
    res.emulate_asked = s->run.emulate;
    res.max_group_nodes = group_nodes(s->run.topo, &res);
    if (st == TPB_OK) {
        tpb_result_finish(&res, s->hist, s->nhist, s->run.check);
        s->check_failed |= res.check == TPB_CHECK_FAIL;
        append(s, &res);
        st = push_hist(s, &res);
    }
    /* the trace first: no record ever names a config whose trace is missing */
    if (st == TPB_OK && s->run.out_dir[0])
        st = claim_dir(s);
    if (st == TPB_OK && s->run.out_dir[0] && s->run.timeline) {
        tpb_timeline_steps(marks, size, res.tp, res.iters, steps);
        st = write_trace(s, &res, marks, steps);
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

const char *tpb_run_status_name(tpb_run_status_t st)
{
    static const char *const names[] = {"running", "finished", "timeout", "interrupted", "failed"};
    return (unsigned)st < 5 ? names[st] : "?";
}

tpb_status_t tpb_record_write(tpb_record_t *s, tpb_run_status_t status)
{
    if (!s->run.out_dir[0] || !s->claimed) /* nothing of this run yet: touch nothing */
        return TPB_OK;
    tpb_buf_t b = TPB_BUF_INIT;
    metadata(s, &b, status);
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
