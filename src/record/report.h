/*
 * report.h - formatting of results: the stdout table (nccl-tests style), the
 * results.jsonl object and the results.csv row (columns.c), and the ranks.csv rows. Pure:
 * everything is appended to a tpb_buf_t, nothing is printed or written here.
 */
#ifndef TPB_REPORT_H
#define TPB_REPORT_H

#include "base/buf.h"
#include "record/result.h"

/** The two '#' lines naming the table's columns. */
void tpb_report_table_header(tpb_buf_t *b);

/** One table row (with newline). */
void tpb_report_table_row(tpb_buf_t *b, const tpb_result_t *res);

/** --comm-only: the table's two '#' lines and one row (report_comm.c), nccl-tests' columns
 *  (size, count, type, time, algbw, busbw) beside tpbal's (wait, straggler, S). */
void tpb_report_comm_header(tpb_buf_t *b);
void tpb_report_comm_row(tpb_buf_t *b, const tpb_result_t *res);

/** The results.jsonl object of a config (one line, with newline). */
void tpb_report_json(tpb_buf_t *b, const tpb_result_t *res);

/** --overlap (report_overlap.c): the record's "overlap", "chunks" and "overlap_figures"
 *  (null for a serial config); the '#' line of figures after a chunked config's table
 *  row (nothing for a serial one); its results.csv fields (the 11 of the "overlap,..."
 *  column of record/columns.c, no newline). */
void tpb_report_overlap_json(tpb_buf_t *b, const tpb_result_t *res);
void tpb_report_overlap_line(tpb_buf_t *b, const tpb_result_t *res);
void tpb_report_overlap_csv(tpb_buf_t *b, const tpb_result_t *res);

/** results.csv: header line and one row per config (arrays joined by ';'); the fields of
 *  both and of the JSON object are the one list of record/columns.c. */
void tpb_report_csv_header(tpb_buf_t *b);
void tpb_report_csv_row(tpb_buf_t *b, const tpb_result_t *res);

/** ranks.csv: header and one row per rank of a config. hosts and devices are
 *  per-rank names (world entries). */
void tpb_report_ranks_header(tpb_buf_t *b);
void tpb_report_ranks_rows(tpb_buf_t *b, const tpb_result_t *res, const char *const *hosts,
                           const char *const *devices);

#endif /* TPB_REPORT_H */
