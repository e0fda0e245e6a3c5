/*
 * report.h - formatting of results: the stdout table (nccl-tests style), the
 * results.jsonl object and the results.csv row (columns.c), and the ranks.csv rows. Pure:
 * everything is appended to a tpb_buf_t, nothing is printed or written here.
 */
#ifndef TPB_REPORT_H
#define TPB_REPORT_H

#include "base/buf.h"
#include "record/result.h"
#include "record/verdict.h"

/** The table's width: the columns a user's question needs in at most 120 characters
 *  (id, TP, split, policy, shape, step, comm, LB, E, straggler, check, the speed-up over
 *  even with its interval, the layer's name), or every column (--wide; the CSV has them
 *  all either way). */
typedef enum { TPB_TABLE_COMPACT = 0, TPB_TABLE_WIDE = 1 } tpb_table_width_t;

/** The two '#' lines naming the table's columns. */
void tpb_report_table_header(tpb_buf_t *b, tpb_table_width_t w);

/** One table row (with newline); v: a weighted or cost-aware config's speed-up over its
 *  even config (record/verdict.h), NULL where there is none. */
void tpb_report_table_row(tpb_buf_t *b, const tpb_result_t *res, tpb_table_width_t w,
                          const tpb_policy_verdict_t *v);

/** --comm-only: the table's two '#' lines and one row (report_comm.c), nccl-tests' columns
 *  (size, count, type, time, algbw, busbw) beside tpbal's (wait, straggler, S; the policy
 *  and p95 only in the wide table). */
void tpb_report_comm_header(tpb_buf_t *b, tpb_table_width_t w);
void tpb_report_comm_row(tpb_buf_t *b, const tpb_result_t *res, tpb_table_width_t w);

/** The results.jsonl object of a config (one line, with newline). */
void tpb_report_json(tpb_buf_t *b, const tpb_result_t *res);

/** --overlap (report_overlap.c): the record's "overlap", "chunks" and "overlap_figures"
 *  (null for a serial config); the '#' line of figures after a chunked config's table
 *  row (nothing for a serial one); its results.csv fields (the 11 of the "overlap,..."
 *  column of record/columns.c, no newline). */
void tpb_report_overlap_json(tpb_buf_t *b, const tpb_result_t *res);
void tpb_report_overlap_line(tpb_buf_t *b, const tpb_result_t *res, tpb_table_width_t w);
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
