/* record_run.c - what rank 0 says about the run as a whole: the header it prints and
 * the run record (metadata) that heads results.jsonl. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clocktree.h"
#include "record/record.h"
#include "record/report.h"
#include "tpb_config.h"

const char *tpb_run_status_name(tpb_run_status_t st)
{
    static const char *const names[] = {"running", "finished", "timeout", "interrupted", "failed"};
    return (unsigned)st < 5 ? names[st] : "?";
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
/* The warnings held in the device facts at offset `field` (advice, threads_note), each
 * text once with the ranks that share it. */
static const char *note_of(const tpb_run_info_t *o, int r, size_t field)
{
    return (const char *)&o->devices[r] + field;
}

static void print_notes(const tpb_run_info_t *o, size_t field)
{
    for (int r = 0; r < o->topo->size; r++) {
        const char *a = note_of(o, r, field);
        int first = 1;
        for (int q = 0; q < r && first; q++)
            first = strcmp(note_of(o, q, field), a) != 0;
        if (!a[0] || !first)
            continue;
        int n = 0;
        for (int q = r; q < o->topo->size; q++)
            n += strcmp(note_of(o, q, field), a) == 0;
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
            "# tpbal %s: backend %s, %d rank%s on %d host%s, dtype %s, %d+%d iters, "
            "granularity %ld\n",
            PACKAGE_VERSION, o->backend, o->topo->size, o->topo->size == 1 ? "" : "s",
            o->topo->nhosts, o->topo->nhosts == 1 ? "" : "s", tpb_dtype_name(o->dtype), o->warmup,
            o->iters, o->granularity);
    fprintf(o->table, "# versions: %s; %s\n", ver, o->devices[0].versions);
    if (o->cost_profile)
        fprintf(o->table,
                "# cost profile: %s, %d blocks along the split dimension; W block-sparse (a "
                "block's density = its cost / the largest), GEMMs skip the zeros\n",
                o->cost_profile->source, o->cost_profile->nblocks);
    for (int r = 0; r < o->topo->size; r++) {
        const tpb_device_info_t *d = &o->devices[r];
        char units[96];
        if (d->index < 0) /* host: BLAS threads, and the cores they may use */
            snprintf(units, sizeof(units), "threads %d (%s) on %.2f of %d cores", d->threads,
                     d->threads_from, d->cores_share, d->cores > 0 ? d->cores : d->sm_total);
        else
            snprintf(units, sizeof(units), "units %d/%d", d->sm_count, d->sm_total);
        /* three lines at most, each within 120 columns for a usual name: who and what,
         * then its units or threads and the device's bus and UUID, then its emulation */
        fprintf(o->table,
                "#   rank %3d  host %-16s dev %2d  %s  mem %.1f GiB  peak %.2f TFLOP/s  cpus %s\n"
                "#              %s%s%s%s%s\n",
                r, o->topo->hosts[r], d->index, d->name, d->mem_bytes / 1073741824.0,
                d->peak_gflops * 1e-3, d->cpuset, units, d->bus_id[0] ? "  bus " : "", d->bus_id,
                d->uuid[0] ? "  " : "", d->uuid);
        if (strcmp(d->emulation, "none") != 0)
            fprintf(o->table, "#              emulation %s\n", d->emulation);
    }
    print_notes(o, offsetof(tpb_device_info_t, advice));
    print_notes(o, offsetof(tpb_device_info_t, threads_note));
    if (o->slurm && o->slurm->present)
        print_slurm(o->table, o->slurm);
    double worst = 0;
    for (int q = 0; q < o->topo->size; q++)
        worst = fmax(worst, fabs(s->sync0[q].offset_us) + 0.5 * s->sync0[q].rtt_us);
    fprintf(o->table,
            "# clock sync: %d ping-pongs per pair, %d rounds of a tree, max |offset| + rtt/2 = "
            "%.1f us\n",
            o->clock_exchanges, tpb_clock_tree_rounds(o->topo->size), worst);
    if (o->comm_gap_us)
        fprintf(o->table,
                "# comm gap: every rank spins %d us before each collective (its step counts "
                "it, its xfer and bandwidths do not)\n",
                o->comm_gap_us);
    tpb_buf_t b = TPB_BUF_INIT;
    if (o->comm_only)
        tpb_report_comm_header(&b, o->width);
    else
        tpb_report_table_header(&b, o->width);
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

/* Empty strings are unknown: null, never invented. */
static void kv_str_or_null(tpb_buf_t *b, const char *key, const char *v)
{
    tpb_json_kv_str(b, key, v && v[0] ? v : NULL);
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
        tpb_json_kv_int(b, "threads", d->threads);
        kv_str_or_null(b, "threads_from", d->threads_from);
        tpb_json_kv_num(b, "cores_share", d->index < 0 ? d->cores_share : NAN);
        tpb_json_kv_int(b, "sharing_ranks", d->sharing);
        kv_str_or_null(b, "threads_note", d->threads_note);
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
    char(*names)[TPB_SLURM_NAME_LEN] =
        sl->nodelist[0] ? malloc(sizeof(*names) * TPB_SLURM_MAX_NODES) : NULL;
    int n = names ? tpb_hostlist_expand(sl->nodelist, names, TPB_SLURM_MAX_NODES) : -1;
    tpb_json_key(b, "nodes");
    if (n < 0) {
        tpb_json_str(b, NULL);
    } else {
        tpb_json_arr_begin(b);
        for (int i = 0; i < n; i++)
            tpb_json_str(b, names[i]);
        tpb_json_arr_end(b);
    }
    free(names);
    kv_str_or_null(b, "tasks_per_node", sl->tasks_per_node);
    tpb_json_key(b, "ntasks");
    sl->ntasks ? tpb_json_int(b, sl->ntasks) : tpb_json_str(b, NULL);
    tpb_json_key(b, "cpus_per_task");
    sl->cpus_per_task ? tpb_json_int(b, sl->cpus_per_task) : tpb_json_str(b, NULL);
    kv_str_or_null(b, "gpus_per_task", sl->gpus_per_task);
    kv_str_or_null(b, "gpus_per_node", sl->gpus_per_node);
    tpb_json_obj_end(b);
}

void tpb_record_run_json(const tpb_record_t *s, tpb_buf_t *b, tpb_run_status_t status)
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
    tpb_json_key(b, "cost_profile");
    if (o->cost_profile) {
        tpb_json_obj_begin(b);
        tpb_json_kv_str(b, "source", o->cost_profile->source);
        tpb_json_kv_nums(b, "costs", o->cost_profile->cost, (size_t)o->cost_profile->nblocks);
        tpb_json_obj_end(b);
    } else {
        tpb_json_str(b, NULL);
    }
    tpb_json_kv_str(b, "timeline", o->timeline ? "on" : "off");
    tpb_json_kv_str(b, "comm_only", o->comm_only ? "yes" : "no");
    tpb_json_kv_int(b, "comm_gap_us", o->comm_gap_us);
    tpb_json_kv_str(b, "collectives", tpb_collectives_name(o->collectives));
    json_slurm(b, o->slurm);
    tpb_json_kv_int(b, "inject_delay_rank", o->inject_delay_rank);
    tpb_json_kv_int(b, "inject_clock_rank", o->inject_clock_rank);
    tpb_json_key(b, "emulate_schedule");
    if (o->sched) {
        tpb_json_obj_begin(b);
        tpb_json_kv_int(b, "iter", o->sched_iter);
        tpb_json_kv_nums(b, "speeds", o->sched, (size_t)o->topo->size);
        tpb_json_obj_end(b);
    } else {
        tpb_json_str(b, NULL);
    }
    json_devices(b, o);
    tpb_json_key(b, "clock");
    tpb_json_obj_begin(b);
    tpb_json_kv_str(b, "method",
                    "min-RTT ping-pong pairs down a binomial tree to rank 0 (offsets and "
                    "uncertainties added along each path), linear drift correction");
    tpb_json_kv_int(b, "exchanges", o->clock_exchanges);
    tpb_json_kv_int(b, "rounds", tpb_clock_tree_rounds(o->topo->size));
    json_clock(b, "start", s->sync0, o->topo->size, s->t0_us);
    if (status != TPB_RUN_RUNNING)
        json_clock(b, "end", s->sync1, o->topo->size, s->t0_us);
    tpb_json_obj_end(b);
    tpb_json_kv_int(b, "configs", s->nhist + s->nohist);
    tpb_json_kv_int(b, "skipped", s->skipped);
    tpb_json_key(b, "files"); /* what this run wrote in out_dir: what --force may remove */
    tpb_json_arr_begin(b);
    for (int i = 0; i < s->nfiles; i++)
        tpb_json_str(b, s->files[i]);
    tpb_json_arr_end(b);
    if (status != TPB_RUN_RUNNING && status != TPB_RUN_FINISHED && s->stop_reason[0])
        tpb_json_kv_str(b, "stop_reason", s->stop_reason); /* a timeout names rank and phase */
    tpb_json_kv_str(b, "status", tpb_run_status_name(status));
    /* room to seal the status in place on a full disk (record.c: seal_in_place) */
    tpb_buf_printf(b, "%*s", TPB_RUN_STATUS_WIDTH - (int)strlen(tpb_run_status_name(status)), "");
    tpb_json_obj_end(b);
    tpb_buf_puts(b, "\n");
}
