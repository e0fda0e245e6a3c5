/* report_overlap.c - a chunked config's figures (--overlap chunked) in the record, the
 * table and results.csv (base/overlap.h defines them). */
#include <math.h>

#include "record/report.h"

void tpb_report_overlap_json(tpb_buf_t *b, const tpb_result_t *res)
{
    const tpb_overlap_t *o = &res->overlap;
    tpb_json_kv_str(b, "overlap",
                    tpb_overlap_name(res->chunks ? TPB_OVERLAP_CHUNKED : TPB_OVERLAP_NONE));
    tpb_json_kv_int(b, "chunks", res->chunks);
    tpb_json_key(b, "overlap_figures");
    if (!res->chunks) {
        tpb_json_str(b, NULL);
        return;
    }
    tpb_json_obj_begin(b);
    tpb_json_kv_int(b, "host_waits", o->host_waits); /* 1: nothing could overlap */
    tpb_json_kv_int(b, "polls", res->polls);
    tpb_json_kv_num(b, "t_gemm_us", o->t_gemm_us);
    tpb_json_kv_num(b, "t_gemm_whole_us", o->t_gemm_whole_us);
    tpb_json_kv_num(b, "t_comm_us", o->t_comm_us);
    tpb_json_kv_num(b, "t_comm_whole_us", o->t_comm_whole_us);
    tpb_json_kv_num(b, "t_serial_us", o->t_serial_us);
    tpb_json_kv_num(b, "t_overlap_us", o->t_overlap_us);
    tpb_json_kv_num(b, "gemm_busy_us", o->gemm_busy_us);
    tpb_json_kv_num(b, "exposed_us", o->exposed_us);
    tpb_json_kv_num(b, "efficiency", o->efficiency);
    tpb_json_kv_num(b, "interference", o->interference);
    tpb_json_kv_num(b, "chunking_cost", o->chunking_cost);
    tpb_json_kv_num(b, "speedup", o->speedup);
    tpb_json_obj_end(b);
}

void tpb_report_overlap_line(tpb_buf_t *b, const tpb_result_t *res, tpb_table_width_t w)
{
    const tpb_overlap_t *o = &res->overlap;
    if (!res->chunks)
        return;
    if (o->host_waits) /* the figures would describe an overlap that cannot happen */
        tpb_buf_printf(b,
                       "#     overlap %d chunks: serial %.1f us, chunked %.1f us; the host waits "
                       "for each --comm mpi collective (staged): nothing can overlap\n",
                       res->chunks, o->t_serial_us, o->t_overlap_us);
    else if (w == TPB_TABLE_WIDE)
        tpb_buf_printf(b,
                       "#     overlap %d chunks: GEMM %.1f us alone (%.2fx the whole GEMM), comm "
                       "%.1f us alone, serial %.1f us, overlapped %.1f us: exposed %.1f us, %.0f "
                       "%% hidden, interference %.2fx, %.2fx over serial\n",
                       res->chunks, o->t_gemm_us, o->chunking_cost, o->t_comm_us, o->t_serial_us,
                       o->t_overlap_us, o->exposed_us, 100.0 * o->efficiency, o->interference,
                       o->speedup);
    else
        tpb_buf_printf(b,
                       "#     overlap %d chunks: serial %.1f us, overlapped %.1f us (%.2fx), "
                       "%.0f %% of the comm hidden, interference %.2fx\n",
                       res->chunks, o->t_serial_us, o->t_overlap_us, o->speedup,
                       100.0 * o->efficiency, o->interference);
}

void tpb_report_overlap_csv(tpb_buf_t *b, const tpb_result_t *res)
{
    const tpb_overlap_t *o = &res->overlap;
    tpb_buf_printf(b, "%s,%d", res->chunks ? "chunked" : "none", res->chunks);
    double v[9] = {o->t_gemm_us,  o->t_comm_us,    o->t_serial_us,   o->t_overlap_us, o->exposed_us,
                   o->efficiency, o->interference, o->chunking_cost, o->speedup};
    for (int i = 0; i < 9; i++) {
        tpb_buf_puts(b, ",");
        tpb_csv_num(b, res->chunks ? v[i] : NAN);
    }
}
