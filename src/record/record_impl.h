/*
 * record_impl.h - what the files of the record share (record.c, record_files.c,
 * record_hist.c, record_trace.c, record_force.c) and nothing else includes.
 */
#ifndef TPB_RECORD_IMPL_H
#define TPB_RECORD_IMPL_H

#include "record/record.h"

/** Keep res for the configs after it and the summary (record_hist.c), its per-rank arrays
 *  in the record's spill file: TPB_ERR_NOMEM, or TPB_ERR_IO where that file cannot be
 *  written (the entry then stays, whole, for the caller to take back). */
tpb_status_t tpb_record_push_hist(tpb_record_t *s, const tpb_result_t *res);

/** The record's spill file (record/spill.h), opened in --out at the first call. */
tpb_spill_t *tpb_record_spill(tpb_record_t *s);

/** Write res's trace (record_trace.c) in full into set, to be put in place with the
 *  record: trace-NNN.json, or trace.json again with res appended (--trace-per run); steps:
 *  its steps (iters); the file's name into name[TPB_OUTFILE_NAME]. */
tpb_status_t tpb_record_trace(tpb_record_t *s, const tpb_result_t *res, const tpb_mark_t *marks,
                              const double *steps, tpb_outset_t *set, char *name);

/** The trace written by tpb_record_trace is in place: the record follows it (--trace-per
 *  run: where trace.json's events end now). */
void tpb_record_trace_placed(tpb_record_t *s);

/** --force: the files an earlier run in out_dir wrote, as its run record lists them (else
 *  by tpbal's names), and tpbal's temporaries; how many into names (at most max)
 *  (record_force.c). */
int tpb_record_earlier_files(const tpb_record_t *s, char (*names)[TPB_OUTFILE_NAME], int max);

/** --force, once this run's first files are in place: remove names[n] but those this run
 *  wrote (record_force.c). */
tpb_status_t tpb_record_replace_earlier(tpb_record_t *s, char (*names)[TPB_OUTFILE_NAME], int n);

/** A file this run wrote, listed once in the run record's "files" (record_files.c). */
tpb_status_t tpb_record_note_file(tpb_record_t *s, const char *name);

/** b cut back to len bytes (record_files.c). */
void tpb_record_cut(tpb_buf_t *b, size_t len);

/** The record's pending records (and the set's trace, named trace, or NULL) put in the
 *  files (record_files.c): the first time written whole, then appended while status is
 *  "running", and results.jsonl rewritten once for any other status (the end). */
tpb_status_t tpb_record_commit(tpb_record_t *s, tpb_run_status_t status, tpb_outset_t *set,
                               const char *trace);

#endif /* TPB_RECORD_IMPL_H */
