/*
 * trace.h - the timelines of a config as a Chrome trace-event JSON file, which
 * Perfetto UI and chrome://tracing open: one process per host (pid = host + 1), one
 * thread per rank (named "rank R, TP group G"), and per measured iteration the spans
 * compute [c0, c1], wait [c1, A] and comm [A, x1] (its args: collective and bytes), in
 * microseconds from the run start, with a flow arrow ("waited for") from the last
 * arrival of each group to every rank that waited for it at least 1 us and 1 % of the
 * step.
 */
#ifndef TPB_TRACE_H
#define TPB_TRACE_H

#include <stdio.h>

#include "record/result.h"
#include "base/timeline.h"
#include "base/topo.h"

/** The ranks whose marks a trace has: every position, or (res->kept_groups) the kept
 *  groups' ranks; row j of the marks is position tpb_trace_position(res, j). */
static inline int tpb_trace_rows(const tpb_result_t *res)
{
    return res->kept_groups ? res->nkept_groups * res->tp : res->world;
}

static inline int tpb_trace_position(const tpb_result_t *res, int j)
{
    return res->kept_groups ? res->kept_groups[j / res->tp] * res->tp + j % res->tp : j;
}

/**
 * Write the trace of one config to f. marks[rows * iters] are on rank 0's clock (rows:
 * tpb_trace_rows; otherData's "ranks_kept" lists the positions when only some are kept);
 * t0_us is the run's start on that clock; step[iters] is every iteration's step
 * (tpb_timeline_steps): otherData's "slowest_iter" names the slowest and "steps_us"
 * gives the step of each iteration written, so that readers need not re-derive them;
 * keep[iters] selects the iterations written (NULL: all; otherData's "iters_kept"
 * counts them and "kept" lists them when some are left out). Returns TPB_ERR_IO if
 * the stream reports an error.
 */
tpb_status_t tpb_trace_write(FILE *f, const tpb_result_t *res, const tpb_mark_t *marks,
                             const double *step, double t0_us, const tpb_topo_t *topo,
                             const unsigned char *keep);

/**
 * --trace-per run: one trace.json for the run, every config on the run's time axis (even
 * beside weighted in one view). Its layout lets each config be appended by copying the
 * events written so far:
 *   {"traceEvents":[ names, then per config its instant and spans ],
 *    "displayTimeUnit":"ms","otherData":{"tool":"tpbal","trace_per":"run","configs":[...]}}
 * with tid = world rank and each span's args naming its TP group ("group"). run_begin
 * writes the head and the names of topo's world ranks; run_config one config's events;
 * trace_info a config's otherData object (as tpb_trace_write's otherData); run_end the
 * tail with infos, the comma-separated info objects. Those returning a status return
 * TPB_ERR_IO when the stream reports an error, TPB_ERR_NOMEM when memory runs out.
 */
void tpb_trace_run_begin(FILE *f, const tpb_topo_t *topo);
tpb_status_t tpb_trace_run_config(FILE *f, const tpb_result_t *res, const tpb_mark_t *marks,
                                  double t0_us, const tpb_topo_t *topo, const unsigned char *keep);
void tpb_trace_info(FILE *f, const tpb_result_t *res, const double *step,
                    const unsigned char *keep);
tpb_status_t tpb_trace_run_end(FILE *f, const char *infos);

/** File name of the run's trace under --trace-per run. */
#define TPB_TRACE_RUN_NAME "trace.json"

/** File name of config id's trace: "trace-%03d.json". */
void tpb_trace_name(int id, char *out, size_t cap);

#endif /* TPB_TRACE_H */
