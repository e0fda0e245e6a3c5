/*
 * options_set.h - the values of options.c's flags that take more than a plain parse:
 * lists into the option struct, bounded integers, the emulation factors and schedule,
 * --trace-iters. Pure; TPB_ERR_INVALID with one line naming the flag otherwise.
 */
#ifndef TPB_OPTIONS_SET_H
#define TPB_OPTIONS_SET_H

#include "cli/options.h"

tpb_status_t tpb_optset_int(const char *flag, const char *v, long min, long max, int *out);

/** Seconds: a number, or one with the unit s, m or h ("90", "90s", "2m", "1h"), in
 *  [min, max], else TPB_ERR_INVALID naming the flag. */
tpb_status_t tpb_optset_seconds(const char *flag, const char *v, double min, double max,
                                double *out);
tpb_status_t tpb_optset_tp(tpb_options_t *o, const char *flag, const char *v);
tpb_status_t tpb_optset_chunks(tpb_options_t *o, const char *flag, const char *v);
tpb_status_t tpb_optset_gpu_map(tpb_options_t *o, const char *flag, const char *v);
tpb_status_t tpb_optset_emulate(tpb_options_t *o, const char *flag, const char *v);
tpb_status_t tpb_optset_schedule(tpb_options_t *o, const char *flag, const char *v);
tpb_status_t tpb_optset_trace_iters(tpb_options_t *o, const char *flag, const char *v);

#endif /* TPB_OPTIONS_SET_H */
