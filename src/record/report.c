/* report.c - the table rows and ranks.csv (the per-config JSON and CSV fields are
 * record/columns.c's list). */
#include "record/report.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

/* Largest per-rank value of a field. */
static double max_field(const tpb_result_t *res, size_t off)
{
    double m = -INFINITY;
    for (int r = 0; r < res->world; r++)
        m = fmax(m, *(const double *)((const char *)&res->ranks[r] + off));
    return m;
}

#define RANK_MAX(res, field) max_field((res), offsetof(tpb_rank_stats_t, field))

static void wide_header(tpb_buf_t *b)
{
    static const char fmt[] = "#%4s %3s %-6s %-8s %7s %7s %7s %-5s %10s %10s %10s %9s %9s %5s %5s "
                              "%5s %8s %5s %8s %10s %8s %8s %5s %5s %s\n";
    tpb_buf_printf(b, fmt, "id", "tp", "split", "policy", "M", "N", "K", "dtype", "step(us)",
                   "p95(us)", "comp(us)", "wait(us)", "comm(us)", "LB", "U", "E", "TFLOP/s",
                   "%peak", "busbw", "straggler", "late(us)", "spikes", "S", "check", "layer");
    tpb_buf_printf(b, fmt, "", "", "", "", "", "", "", "", "median", "", "max rank", "max rank",
                   "xfer", "", "", "", "group", "group", "GB/s", "rank:%last", "mean", "n@rank",
                   "what-if", "", "");
}

/* The compact table's columns (at most 120 characters with a layer name of up to 13). */
#define GLOSSARY                                                                                   \
    "LB load balance, E parallel efficiency, xfer the collective's own time, %last: share of "     \
    "iterations last, (): by chance"
static const char compact_fmt[] = "%-5s %3s %-6s %-8s %-17s %9s %8s %4s %4s %-9s %-5s %-17s %s\n";

void tpb_report_table_header(tpb_buf_t *b, tpb_table_width_t w)
{
    if (w == TPB_TABLE_WIDE) {
        wide_header(b);
        return;
    }
    tpb_buf_printf(b, compact_fmt, "#  id", "tp", "split", "policy", "MxNxK", "step(us)",
                   "comm(us)", "LB", "E", "straggler", "check", "vs even [95 %]", "layer");
    tpb_buf_printf(b, compact_fmt, "#", "", "", "", "", "median", "xfer", "", "", "rank:%last", "",
                   "speed-up", "");
    while (b->len && b->data[b->len - 2] == ' ') { /* no trailing blanks */
        b->data[b->len - 2] = '\n';
        b->data[--b->len] = '\0';
    }
    /* the one-line glossary of the compact table's abbreviations (doc/METRICS.md) */
    tpb_buf_puts(b, "# " GLOSSARY "\n");
}

static void fmt_opt(char *out, size_t cap, const char *fmt, double v)
{
    if (isfinite(v))
        snprintf(out, cap, fmt, v);
    else
        snprintf(out, cap, "-");
}

/* "n@rank" for the spikes: their count and the rank blamed most often. */
static void fmt_spikes(char *out, size_t cap, const tpb_config_stats_t *s)
{
    if (s->nspikes == 0) {
        snprintf(out, cap, "0");
        return;
    }
    int best = -1, best_n = 0, kept = s->nspikes < TPB_MAX_SPIKES ? s->nspikes : TPB_MAX_SPIKES;
    for (int i = 0; i < kept; i++) {
        int n = 0;
        for (int j = 0; j < kept; j++)
            n += s->spikes[j].rank == s->spikes[i].rank;
        if (n > best_n) {
            best_n = n;
            best = s->spikes[i].rank;
        }
    }
    snprintf(out, cap, "%d@%d", s->nspikes, best);
}

/* "1:97%", "(1:55%)" when it was last by chance (not beyond noise), or "-". */
static void fmt_straggler(char *out, size_t cap, const tpb_result_t *res)
{
    const tpb_config_stats_t *s = &res->stats;
    if (s->straggler_rank < 0)
        snprintf(out, cap, "-");
    else
        snprintf(out, cap, tpb_straggler_clear(s, res->tp) ? "%d:%.0f%%" : "(%d:%.0f%%)",
                 s->straggler_rank, 100.0 * s->straggler_frac);
}

static void wide_row(tpb_buf_t *b, const tpb_result_t *res)
{
    char e[16], bw[16], strag[24], late[16], spikes[24], comp[16], wait[16], xfer[16], lb[8], u[8],
        pk[16], slow[16];
    const tpb_config_stats_t *s = &res->stats;
    /* unknown values (--timeline off, TP = 1) print "-" as JSON prints null */
    fmt_opt(e, sizeof(e), "%.2f", res->e);
    fmt_opt(bw, sizeof(bw), "%.2f", res->busbw_gbs);
    fmt_opt(comp, sizeof(comp), "%.1f", RANK_MAX(res, compute_med));
    fmt_opt(wait, sizeof(wait), "%.1f", RANK_MAX(res, wait_med));
    fmt_opt(xfer, sizeof(xfer), "%.1f", s->xfer_med);
    fmt_opt(lb, sizeof(lb), "%.2f", res->lb);
    fmt_opt(u, sizeof(u), "%.2f", res->u);
    fmt_opt(pk, sizeof(pk), tpb_result_device_shared(res) > 1 ? "%.1f*" : "%.1f", res->pct_peak);
    fmt_opt(slow, sizeof(slow), "%.2f", res->whatif.slowdown);
    fmt_spikes(spikes, sizeof(spikes), s);
    fmt_straggler(strag, sizeof(strag), res);
    fmt_opt(late, sizeof(late), "%.1f", s->straggler_rank >= 0 ? s->straggler_late_us : NAN);
    char med[24];
    if (res->disturb.bimodal) /* the median lies between two modes: no step (the note below) */
        snprintf(med, sizeof(med), "bimodal");
    else
        snprintf(med, sizeof(med), "%.1f", s->step_med);
    tpb_buf_printf(b,
                   " %4d %3d %-6s %-8s %7ld %7ld %7ld %-5s %10s %10.1f %10s %9s %9s "
                   "%5s %5s %5s %8.3f %5s %8s %10s %8s %8s %5s %5s %s\n",
                   res->id, res->tp, tpb_config_key_split(&res->key), tpb_policy_name(res->policy),
                   res->m, res->n, res->k, tpb_dtype_name(res->dtype), med, s->step_p95, comp, wait,
                   xfer, lb, u, e, res->tflops, pk, bw, strag, late, spikes, slow,
                   tpb_check_name(res->check), res->shape_name[0] ? res->shape_name : "-");
}

/* "1.02x [0.97,1.08]" (the paired or unpaired 95 % interval), "1.02x" without one, "-". */
static void fmt_speedup(char *out, size_t cap, const tpb_policy_verdict_t *v)
{
    if (!v || !isfinite(v->speedup))
        snprintf(out, cap, "-");
    else if (isfinite(v->lo) && isfinite(v->hi))
        snprintf(out, cap, "%.2fx [%.2f,%.2f]", v->speedup, v->lo, v->hi);
    else
        snprintf(out, cap, "%.2fx", v->speedup);
}

void tpb_report_table_row(tpb_buf_t *b, const tpb_result_t *res, tpb_table_width_t w,
                          const tpb_policy_verdict_t *v)
{
    if (res->comm_only) {
        tpb_report_comm_row(b, res, w);
        return;
    }
    if (w == TPB_TABLE_WIDE) {
        wide_row(b, res);
        return;
    }
    char id[16], tp[16], shape[64], step[24], xfer[16], lb[8], e[8], strag[24], sp[48];
    snprintf(id, sizeof(id), " %4d", res->id);
    snprintf(tp, sizeof(tp), "%d", res->tp);
    snprintf(shape, sizeof(shape), "%ldx%ldx%ld", res->m, res->n, res->k);
    if (res->disturb.bimodal) /* the median lies between two modes: no step (the note below) */
        snprintf(step, sizeof(step), "bimodal");
    else
        snprintf(step, sizeof(step), "%.1f", res->stats.step_med);
    fmt_opt(xfer, sizeof(xfer), "%.1f", res->stats.xfer_med);
    fmt_opt(lb, sizeof(lb), "%.2f", res->lb);
    fmt_opt(e, sizeof(e), "%.2f", res->e);
    fmt_straggler(strag, sizeof(strag), res);
    fmt_speedup(sp, sizeof(sp), v);
    tpb_buf_printf(b, compact_fmt, id, tp, tpb_config_key_split(&res->key),
                   tpb_policy_name(res->policy), shape, step, xfer, lb, e, strag,
                   tpb_check_name(res->check), sp, res->shape_name[0] ? res->shape_name : "-");
}

static void csv_nums(tpb_buf_t *b, const double *v, int n)
{
    for (int i = 0; i < n; i++) {
        tpb_csv_num(b, v[i]);
        tpb_buf_puts(b, ",");
    }
}

void tpb_report_ranks_header(tpb_buf_t *b)
{
    tpb_buf_puts(b, "id,tp,split,policy,m,n,k,dtype,rank,host,device,speed,shard,"
                    "compute_med_us,compute_p95_us,wait_med_us,wait_p95_us,comm_med_us,"
                    "comm_p95_us,last_count,last_frac,lateness_us,score,mem_bytes,peak_gflops,"
                    "pct_peak,emulate_achieved,world_rank,placement,sequence_parallel\n");
}

void tpb_report_ranks_rows(tpb_buf_t *b, const tpb_result_t *res, const char *const *hosts,
                           const char *const *devices)
{
    for (int r = 0; r < res->world; r++) {
        const tpb_rank_stats_t *s = &res->ranks[r];
        tpb_buf_printf(b, "%d,%d,%s,%s,%ld,%ld,%ld,%s,%d,", res->id, res->tp,
                       tpb_split_name(res->split), tpb_policy_name(res->policy), res->m, res->n,
                       res->k, tpb_dtype_name(res->dtype), r);
        tpb_csv_field(b, hosts[r]);
        tpb_buf_puts(b, ",");
        tpb_csv_field(b, devices[r]);
        tpb_buf_puts(b, ",");
        csv_nums(b, &res->info[r].speed, 1);
        tpb_buf_printf(b, "%ld,", res->info[r].shard);
        double v[6] = {s->compute_med, s->compute_p95, s->wait_med,
                       s->wait_p95,    s->comm_med,    s->comm_p95};
        csv_nums(b, v, 6);
        tpb_buf_printf(b, "%d,", s->last_count);
        double w[3] = {(double)s->last_count / res->iters, s->lateness_us, s->score};
        csv_nums(b, w, 3);
        double x[4] = {res->info[r].mem, res->info[r].peak_gflops, tpb_result_rank_pct_peak(res, r),
                       res->info[r].emulate_achieved};
        csv_nums(b, x, 4);
        tpb_buf_printf(b, "%d,%s,%s\n", tpb_result_world_rank(res, r),
                       tpb_placement_name(res->placement), tpb_seqpar_name(res->seqpar));
    }
}
