/* report.c - table, JSON and CSV formatting of results. */
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

void tpb_report_table_header(tpb_buf_t *b)
{
    tpb_buf_printf(b,
                   "#%4s %3s %-5s %-8s %7s %7s %7s %-5s %10s %10s %10s %9s %9s %5s %5s %5s "
                   "%8s %5s %8s %10s %8s %8s %5s %5s %s\n",
                   "id", "tp", "split", "policy", "M", "N", "K", "dtype", "step(us)", "p95(us)",
                   "comp(us)", "wait(us)", "comm(us)", "LB", "U", "E", "TFLOP/s", "%peak", "busbw",
                   "straggler", "late(us)", "spikes", "S", "check", "layer");
    tpb_buf_printf(b,
                   "#%4s %3s %-5s %-8s %7s %7s %7s %-5s %10s %10s %10s %9s %9s %5s %5s %5s "
                   "%8s %5s %8s %10s %8s %8s %5s %5s %s\n",
                   "", "", "", "", "", "", "", "", "median", "", "max rank", "max rank", "xfer", "",
                   "", "", "group", "group", "GB/s", "rank:%last", "mean", "n@rank", "what-if", "",
                   "");
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

void tpb_report_table_row(tpb_buf_t *b, const tpb_result_t *res)
{
    if (res->comm_only) {
        tpb_report_comm_row(b, res);
        return;
    }
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
    if (s->straggler_rank >= 0) { /* in parentheses: last by chance, not beyond noise */
        int clear = tpb_straggler_clear(s, res->tp);
        snprintf(strag, sizeof(strag), clear ? "%d:%.0f%%" : "(%d:%.0f%%)", s->straggler_rank,
                 100.0 * s->straggler_frac);
        snprintf(late, sizeof(late), "%.1f", s->straggler_late_us);
    } else {
        snprintf(strag, sizeof(strag), "-");
        snprintf(late, sizeof(late), "-");
    }
    tpb_buf_printf(b,
                   " %4d %3d %-5s %-8s %7ld %7ld %7ld %-5s %10.1f %10.1f %10s %9s %9s "
                   "%5s %5s %5s %8.3f %5s %8s %10s %8s %8s %5s %5s %s\n",
                   res->id, res->tp, tpb_split_name(res->split), tpb_policy_name(res->policy),
                   res->m, res->n, res->k, tpb_dtype_name(res->dtype), s->step_med, s->step_p95,
                   comp, wait, xfer, lb, u, e, res->tflops, pk, bw, strag, late, spikes, slow,
                   tpb_check_name(res->check), res->shape_name[0] ? res->shape_name : "-");
}

/* A per-rank array of one double field of the rank info or stats. */
static void kv_rank_field(tpb_buf_t *b, const char *key, const tpb_result_t *res, const void *base,
                          size_t stride, size_t off)
{
    tpb_json_key(b, key);
    tpb_json_arr_begin(b);
    for (int r = 0; r < res->world; r++)
        tpb_json_num(b, *(const double *)((const char *)base + r * stride + off));
    tpb_json_arr_end(b);
}

#define KV_STATS(b, key, res, field)                                                               \
    kv_rank_field(b, key, res, (res)->ranks, sizeof(tpb_rank_stats_t),                             \
                  offsetof(tpb_rank_stats_t, field))
#define KV_INFO(b, key, res, field)                                                                \
    kv_rank_field(b, key, res, (res)->info, sizeof(tpb_rank_info_t),                               \
                  offsetof(tpb_rank_info_t, field))

static void json_straggler(tpb_buf_t *b, const tpb_result_t *res)
{
    const tpb_config_stats_t *s = &res->stats;
    tpb_json_key(b, "straggler");
    tpb_json_obj_begin(b);
    tpb_json_kv_int(b, "rank", s->straggler_rank);
    tpb_json_kv_num(b, "last_frac", s->straggler_rank >= 0 ? s->straggler_frac : NAN);
    tpb_json_kv_num(b, "lateness_us", s->straggler_rank >= 0 ? s->straggler_late_us : NAN);
    tpb_json_obj_end(b);
    tpb_json_kv_int(b, "nspikes", s->nspikes);
    tpb_json_key(b, "spikes");
    tpb_json_arr_begin(b);
    for (int i = 0; i < s->nspikes && i < TPB_MAX_SPIKES; i++) {
        tpb_json_obj_begin(b);
        tpb_json_kv_int(b, "iter", s->spikes[i].iter);
        tpb_json_kv_int(b, "rank", s->spikes[i].rank);
        tpb_json_kv_num(b, "step_us", s->spikes[i].step_us);
        tpb_json_obj_end(b);
    }
    tpb_json_arr_end(b);
}

/* Per-rank peaks (TFLOP/s), each rank's share of its peak, and the config's (%). */
static void json_peak(tpb_buf_t *b, const tpb_result_t *res)
{
    tpb_json_key(b, "peak_tflops");
    tpb_json_arr_begin(b);
    for (int r = 0; r < res->world; r++)
        tpb_json_num(b, res->info[r].peak_gflops > 0 ? res->info[r].peak_gflops * 1e-3 : NAN);
    tpb_json_arr_end(b);
    tpb_json_key(b, "pct_peak_rank");
    tpb_json_arr_begin(b);
    for (int r = 0; r < res->world; r++)
        tpb_json_num(b, tpb_result_rank_pct_peak(res, r));
    tpb_json_arr_end(b);
    tpb_json_kv_num(b, "pct_peak", res->pct_peak);
    tpb_json_kv_int(b, "device_shared", tpb_result_device_shared(res));
}

/* What the emulation was asked for and what it achieved, per rank. */
static void json_emulation(tpb_buf_t *b, const tpb_result_t *res)
{
    tpb_json_kv_str(b, "emulate_mode", tpb_emulate_mode_name(res->emulate_mode));
    tpb_json_key(b, "emulate_asked");
    tpb_json_arr_begin(b);
    for (int r = 0; r < res->world; r++)
        tpb_json_num(b,
                     res->emulate_asked ? res->emulate_asked[tpb_result_world_rank(res, r)] : 1.0);
    tpb_json_arr_end(b);
    tpb_json_key(b, "emulate_switch_iter");
    res->emulate_switch_iter >= 0 ? tpb_json_int(b, res->emulate_switch_iter)
                                  : tpb_json_str(b, NULL);
    KV_INFO(b, "emulate_achieved", res, emulate_achieved);
}

/* The adaptive policy's rounds (empty for the other policies). */
static void json_rounds(tpb_buf_t *b, const tpb_result_t *res)
{
    tpb_json_key(b, "rounds");
    tpb_json_arr_begin(b);
    for (int i = 0; i < res->nrounds; i++) {
        const tpb_round_t *r = &res->rounds[i];
        tpb_json_obj_begin(b);
        tpb_json_kv_int(b, "iters", r->iters);
        tpb_json_kv_longs(b, "shards", res->round_shards + (size_t)i * res->world,
                          (size_t)res->world);
        tpb_json_kv_num(b, "lb", r->lb);
        tpb_json_kv_num(b, "step_us", r->step_us);
        tpb_json_kv_num(b, "gain", r->gain);
        tpb_json_kv_str(b, "rebalanced", r->rebalanced ? "yes" : "no");
        tpb_json_obj_end(b);
    }
    tpb_json_arr_end(b);
}

static void json_identity(tpb_buf_t *b, const tpb_result_t *res)
{
    tpb_json_kv_str(b, "type", "config");
    tpb_json_kv_int(b, "id", res->id);
    tpb_json_kv_str(b, "backend", res->backend);
    tpb_json_kv_int(b, "world_size", res->world);
    tpb_json_kv_int(b, "tp", res->tp);
    tpb_json_kv_str(b, "split", tpb_split_name(res->split));
    tpb_json_kv_str(b, "policy", tpb_policy_name(res->policy));
    tpb_json_kv_str(b, "placement", tpb_placement_name(res->placement));
    tpb_json_kv_int(b, "group_nodes", res->max_group_nodes);
    tpb_json_key(b, "world_ranks");
    tpb_json_arr_begin(b);
    for (int r = 0; r < res->world; r++)
        tpb_json_int(b, tpb_result_world_rank(res, r));
    tpb_json_arr_end(b);
    tpb_json_kv_str(b, "col_collective", tpb_coll_name(res->col_collective));
    tpb_json_kv_str(b, "shape", res->shape_name);
    tpb_json_kv_str(b, "comm_only", res->comm_only ? "yes" : "no");
    tpb_json_kv_str(b, "collective", tpb_coll_label(res->coll));
    tpb_json_kv_num(b, "comm_bytes", res->coll_bytes);
    tpb_json_kv_int(b, "m", res->m);
    tpb_json_kv_int(b, "n", res->n);
    tpb_json_kv_int(b, "k", res->k);
    tpb_json_kv_str(b, "dtype", tpb_dtype_name(res->dtype));
    tpb_json_kv_int(b, "iters", res->iters);
    tpb_json_kv_int(b, "warmup", res->warmup);
    tpb_report_overlap_json(b, res);
}

void tpb_report_json(tpb_buf_t *b, const tpb_result_t *res)
{
    tpb_json_obj_begin(b);
    json_identity(b, res);
    tpb_json_key(b, "shards");
    tpb_json_arr_begin(b);
    for (int r = 0; r < res->world; r++)
        tpb_json_int(b, res->info[r].shard);
    tpb_json_arr_end(b);
    tpb_json_kv_str(b, "speed_source", tpb_speed_source_name(res->speed_source));
    KV_INFO(b, "speeds", res, speed);
    KV_INFO(b, "speed_spread", res, speed_spread);
    tpb_json_key(b, "speed_samples");
    tpb_json_arr_begin(b);
    for (int r = 0; r < res->world; r++)
        tpb_json_int(b, res->info[r].speed_samples);
    tpb_json_arr_end(b);
    json_emulation(b, res);
    KV_INFO(b, "fractions", res, fraction);
    tpb_json_key(b, "step_us");
    tpb_json_obj_begin(b);
    tpb_json_kv_num(b, "median", res->stats.step_med);
    tpb_json_kv_num(b, "p95", res->stats.step_p95);
    tpb_json_kv_num(b, "min", res->stats.step_min);
    tpb_json_kv_num(b, "max", res->stats.step_max);
    tpb_json_obj_end(b);
    KV_STATS(b, "compute_us", res, compute_med);
    KV_STATS(b, "compute_p95_us", res, compute_p95);
    KV_STATS(b, "wait_us", res, wait_med);
    KV_STATS(b, "comm_us", res, comm_med);
    KV_STATS(b, "wait_free_us", res, wait_free_med);
    tpb_json_kv_num(b, "xfer_us", res->stats.xfer_med);
    tpb_json_kv_num(b, "xfer_free_us", res->stats.xfer_free_med);
    tpb_json_kv_num(b, "lb", res->lb);
    tpb_json_kv_num(b, "u", res->u);
    tpb_json_kv_num(b, "e", res->e);
    tpb_json_kv_num(b, "e_het", res->e_het);
    tpb_json_kv_num(b, "t1_us", res->t1_us);
    tpb_json_kv_num(b, "r", res->r);
    tpb_json_kv_num(b, "tflops", res->tflops);
    json_peak(b, res);
    tpb_json_kv_num(b, "algbw_gbs", res->algbw_gbs);
    tpb_json_kv_num(b, "busbw_gbs", res->busbw_gbs);
    tpb_json_kv_num(b, "predicted_speedup", res->predicted_speedup);
    tpb_json_kv_num(b, "speedup", res->speedup);
    tpb_json_kv_int(b, "straggler_rank", res->stats.straggler_rank);
    json_straggler(b, res);
    tpb_json_kv_num(b, "whatif_step_us", res->whatif.step_us);
    tpb_json_kv_num(b, "slowdown", res->whatif.slowdown);
    tpb_json_kv_num(b, "whatif_straggler_step_us", res->whatif.straggler_step_us);
    tpb_json_kv_num(b, "slowdown_straggler", res->whatif.straggler_slowdown);
    tpb_json_kv_int(b, "causality_violations", res->stats.causality_violations);
    tpb_json_kv_str(b, "check", tpb_check_name(res->check));
    tpb_json_kv_num(b, "max_rel_err", res->max_rel_err);
    json_rounds(b, res);
    double samples[TPB_STEP_SAMPLES];
    int quantiles, n = tpb_result_step_samples(res, samples, &quantiles);
    tpb_json_kv_str(b, "step_samples", !n ? "none" : quantiles ? "quantiles" : "all");
    tpb_json_kv_nums(b, "step_samples_us", samples, (size_t)n);
    tpb_json_obj_end(b);
    tpb_buf_puts(b, "\n");
}

static const char csv_header[] =
    "id,backend,world_size,tp,split,policy,col_collective,shape,m,n,k,dtype,iters,shards,"
    "speeds,speed_source,step_us_median,step_us_p95,step_us_min,step_us_max,compute_us,"
    "wait_us,comm_us,xfer_us,xfer_free_us,lb,u,e,e_het,r,tflops,algbw_gbs,busbw_gbs,"
    "predicted_speedup,speedup,straggler_rank,straggler_last_frac,straggler_lateness_us,"
    "nspikes,causality_violations,check,max_rel_err,pct_peak,whatif_step_us,slowdown,"
    "comm_only,collective,comm_bytes" TPB_REPORT_OVERLAP_CSV_HEADER "\n";

void tpb_report_csv_header(tpb_buf_t *b)
{
    tpb_buf_puts(b, csv_header);
}

static void csv_rank_list(tpb_buf_t *b, const tpb_result_t *res, const void *base, size_t stride,
                          size_t off)
{
    for (int r = 0; r < res->world; r++) {
        if (r)
            tpb_buf_puts(b, ";");
        tpb_csv_num(b, *(const double *)((const char *)base + r * stride + off));
    }
    tpb_buf_puts(b, ",");
}

#define CSV_STATS(b, res, f)                                                                       \
    csv_rank_list(b, res, (res)->ranks, sizeof(tpb_rank_stats_t), offsetof(tpb_rank_stats_t, f))
#define CSV_INFO(b, res, f)                                                                        \
    csv_rank_list(b, res, (res)->info, sizeof(tpb_rank_info_t), offsetof(tpb_rank_info_t, f))

static void csv_nums(tpb_buf_t *b, const double *v, int n)
{
    for (int i = 0; i < n; i++) {
        tpb_csv_num(b, v[i]);
        tpb_buf_puts(b, ",");
    }
}

void tpb_report_csv_row(tpb_buf_t *b, const tpb_result_t *res)
{
    tpb_buf_printf(b, "%d,%s,%d,%d,%s,%s,%s,", res->id, res->backend, res->world, res->tp,
                   tpb_split_name(res->split), tpb_policy_name(res->policy),
                   tpb_coll_name(res->col_collective));
    tpb_csv_field(b, res->shape_name);
    tpb_buf_printf(b, ",%ld,%ld,%ld,%s,%d,", res->m, res->n, res->k, tpb_dtype_name(res->dtype),
                   res->iters);
    for (int r = 0; r < res->world; r++)
        tpb_buf_printf(b, "%s%ld", r ? ";" : "", res->info[r].shard);
    tpb_buf_puts(b, ",");
    CSV_INFO(b, res, speed);
    tpb_buf_printf(b, "%s,", tpb_speed_source_name(res->speed_source));
    const tpb_config_stats_t *s = &res->stats;
    double steps[4] = {s->step_med, s->step_p95, s->step_min, s->step_max};
    csv_nums(b, steps, 4);
    CSV_STATS(b, res, compute_med);
    CSV_STATS(b, res, wait_med);
    CSV_STATS(b, res, comm_med);
    double m[11] = {s->xfer_med,
                    s->xfer_free_med,
                    res->lb,
                    res->u,
                    res->e,
                    res->e_het,
                    res->r,
                    res->tflops,
                    res->algbw_gbs,
                    res->busbw_gbs,
                    res->predicted_speedup};
    csv_nums(b, m, 11);
    tpb_csv_num(b, res->speedup);
    tpb_buf_printf(b, ",%d,", s->straggler_rank);
    double st[2] = {s->straggler_rank >= 0 ? s->straggler_frac : NAN,
                    s->straggler_rank >= 0 ? s->straggler_late_us : NAN};
    csv_nums(b, st, 2);
    tpb_buf_printf(b, "%d,%d,%s,", s->nspikes, s->causality_violations, tpb_check_name(res->check));
    tpb_csv_num(b, res->max_rel_err);
    tpb_buf_puts(b, ",");
    tpb_csv_num(b, res->pct_peak);
    tpb_buf_puts(b, ",");
    tpb_csv_num(b, res->whatif.step_us);
    tpb_buf_puts(b, ",");
    tpb_csv_num(b, res->whatif.slowdown);
    tpb_buf_printf(b, ",%s,%s,%.0f", res->comm_only ? "yes" : "no", tpb_coll_label(res->coll),
                   res->coll_bytes);
    tpb_report_overlap_csv(b, res);
    tpb_buf_puts(b, "\n");
}

void tpb_report_ranks_header(tpb_buf_t *b)
{
    tpb_buf_puts(b, "id,tp,split,policy,m,n,k,dtype,rank,host,device,speed,shard,"
                    "compute_med_us,compute_p95_us,wait_med_us,wait_p95_us,comm_med_us,"
                    "comm_p95_us,last_count,last_frac,lateness_us,score,mem_bytes,peak_gflops,"
                    "pct_peak,emulate_achieved,world_rank,placement\n");
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
        tpb_buf_printf(b, "%d,%s\n", tpb_result_world_rank(res, r),
                       tpb_placement_name(res->placement));
    }
}
