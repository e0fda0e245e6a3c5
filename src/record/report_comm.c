/* report_comm.c - the table of a --comm-only sweep: one row per message size. */
#include <math.h>
#include <stdio.h>

#include "record/report.h"

/* The wide table's columns; the compact one leaves out the policy (4th) and p95 (9th). */
static const char wide_fmt[] =
    "#%4s %3s %-10s %-8s %12s %11s %-5s %10s %10s %10s %9s %9s %9s %9s %5s\n";
static const char compact_fmt[] = "#%4s %3s %-10s %12s %11s %-5s %10s %10s %9s %9s %9s %9s %5s\n";

void tpb_report_comm_header(tpb_buf_t *b, tpb_table_width_t w)
{
    if (w == TPB_TABLE_WIDE) {
        tpb_buf_printf(b, wide_fmt, "id", "tp", "collective", "policy", "size(B)", "count", "type",
                       "step(us)", "p95(us)", "time(us)", "algbw", "busbw", "wait(us)", "straggler",
                       "S");
        tpb_buf_printf(b, wide_fmt, "", "", "", "", "", "elements", "", "median", "", "xfer",
                       "GB/s", "GB/s", "max rank", "rank:%last", "what-if");
        return;
    }
    tpb_buf_printf(b, compact_fmt, "id", "tp", "collective", "size(B)", "count", "type", "step(us)",
                   "time(us)", "algbw", "busbw", "wait(us)", "straggler", "S");
    tpb_buf_printf(b, compact_fmt, "", "", "", "", "elements", "", "median", "xfer", "GB/s", "GB/s",
                   "max rank", "rank:%last", "what-if");
}

static void opt(char *out, size_t cap, const char *fmt, double v)
{
    if (isfinite(v))
        snprintf(out, cap, fmt, v);
    else
        snprintf(out, cap, "-");
}

void tpb_report_comm_row(tpb_buf_t *b, const tpb_result_t *res, tpb_table_width_t w)
{
    const tpb_config_stats_t *s = &res->stats;
    char xfer[16], alg[16], bus[16], wait[16], strag[24], slow[16];
    double wmax = -INFINITY;
    for (int r = 0; r < res->world; r++)
        wmax = fmax(wmax, res->ranks[r].wait_med);
    opt(xfer, sizeof(xfer), "%.1f", s->xfer_med);
    opt(alg, sizeof(alg), "%.3f", res->algbw_gbs);
    opt(bus, sizeof(bus), "%.3f", res->busbw_gbs);
    opt(wait, sizeof(wait), "%.1f", wmax);
    opt(slow, sizeof(slow), "%.2f", res->whatif.slowdown);
    if (s->straggler_rank >= 0)
        snprintf(strag, sizeof(strag),
                 tpb_straggler_clear(s, res->tp) ? "%d:%.0f%%" : "(%d:%.0f%%)", s->straggler_rank,
                 100.0 * s->straggler_frac);
    else
        snprintf(strag, sizeof(strag), "-");
    if (w == TPB_TABLE_WIDE)
        tpb_buf_printf(b,
                       " %4d %3d %-10s %-8s %12.0f %11ld %-5s %10.1f %10.1f %10s %9s %9s %9s %9s "
                       "%5s\n",
                       res->id, res->tp, tpb_coll_label(res->coll), tpb_policy_name(res->policy),
                       res->coll_bytes, res->m * res->n, tpb_dtype_name(tpb_dtype_out(res->dtype)),
                       s->step_med, s->step_p95, xfer, alg, bus, wait, strag, slow);
    else
        tpb_buf_printf(b, " %4d %3d %-10s %12.0f %11ld %-5s %10.1f %10s %9s %9s %9s %9s %5s\n",
                       res->id, res->tp, tpb_coll_label(res->coll), res->coll_bytes,
                       res->m * res->n, tpb_dtype_name(tpb_dtype_out(res->dtype)), s->step_med,
                       xfer, alg, bus, wait, strag, slow);
}
