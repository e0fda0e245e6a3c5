/*
 * trace.h - the timelines of a config as a Chrome trace-event JSON file, which
 * Perfetto UI and chrome://tracing open: one process per host, one thread per
 * rank (named "rank R"), and per measured iteration the spans compute
 * [c0, c1], wait [c1, A] and comm [A, x1], in microseconds from the run start.
 */
#ifndef TPB_TRACE_H
#define TPB_TRACE_H

#include <stdio.h>

#include "record/result.h"
#include "base/timeline.h"
#include "base/topo.h"

/**
 * Write the trace of one config to f. marks[world * iters] are on rank 0's clock;
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

/** File name of config id's trace: "trace-%03d.json". */
void tpb_trace_name(int id, char *out, size_t cap);

#endif /* TPB_TRACE_H */
