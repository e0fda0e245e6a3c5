/*
 * options_table.h - the option table that parsing (options.c) and --help (options_help.c)
 * both read; nothing else includes it.
 */
#ifndef TPB_OPTIONS_TABLE_H
#define TPB_OPTIONS_TABLE_H

#include <stddef.h>

enum {
    OPT_BACKEND,
    OPT_TP,
    OPT_SPLIT,
    OPT_SEQPAR,
    OPT_POLICY,
    OPT_M,
    OPT_N,
    OPT_K,
    OPT_SHAPE,
    OPT_PRESET,
    OPT_BLOCK,
    OPT_MODEL,
    OPT_DTYPE,
    OPT_ITERS,
    OPT_WARMUP,
    OPT_SPEEDS,
    OPT_CALFILE,
    OPT_SHARDS_FROM,
    OPT_COST_PROFILE,
    OPT_OVERLAP,
    OPT_CHUNKS,
    OPT_OVERLAP_POLLS,
    OPT_EMULATE,
    OPT_EMULATE_MODE,
    OPT_SCHEDULE,
    OPT_REBALANCE,
    OPT_INTERLEAVE,
    OPT_BUDGET,
    OPT_REPEAT,
    OPT_PLACEMENT,
    OPT_GRAN,
    OPT_CHECK,
    OPT_DRY_RUN,
    OPT_OUT,
    OPT_FORCE,
    OPT_WIDE,
    OPT_COLCOLL,
    OPT_COMM,
    OPT_COLLECTIVES,
    OPT_GPUMAP,
    OPT_BIND,
    OPT_TIMEOUT,
    OPT_THREADS,
    OPT_TIMELINE,
    OPT_TRACE_ITERS,
    OPT_TRACE_PER,
    OPT_GATHER,
    OPT_TRACE_RANKS,
    OPT_INJ_DELAY,
    OPT_INJ_CLOCK,
    OPT_SEED,
    OPT_QUIET,
    OPT_COMM_ONLY,
    OPT_COMM_SIZES,
    OPT_COMM_GAP,
    OPT_FLEET,
    OPT_FLEET_THRESHOLD,
    OPT_FLEET_BYTES,
    OPT_HELP,
    OPT_VERSION,
    OPT_SCHEMA
};

/* One entry per flag: parsing and --help come from this table alone. */
typedef struct {
    const char *name;
    char short_name;
    const char *arg; /**< the value's name in --help, NULL for a flag without value */
    int id;
    const char *section; /**< starts a --help section when not NULL */
    const char *label;   /**< the whole --help left column when not "  -x, --name ARG" */
    const char *help;    /**< lines separated by \n; NULL: listed with the entry before */
} tpb_opt_spec_t;

/** Every flag, in --help's order. */
extern const tpb_opt_spec_t tpb_opt_table[];
extern const size_t tpb_opt_nflags;

#endif /* TPB_OPTIONS_TABLE_H */
