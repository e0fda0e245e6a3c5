/*
 * tpb_types.h - the vocabulary of tpbal: the enums every layer shares, with
 * their names and parsers, and the shape of a layer.
 *
 * Layering (checked by scripts/check-layers, run by ./scripts/test):
 *   src/base/     pure building blocks: includes nothing else of ours, no MPI
 *   src/backend/  includes base/ only
 *   src/record/   includes base/ and backend/ (device facts) only
 *   src/cli/      includes base/ and backend/ only
 *   src/run/      includes anything below it; nothing below run/ includes run/
 *   src/tpbal.c   on top
 */
#ifndef TPB_TYPES_H
#define TPB_TYPES_H

#include "base/tpb_status.h"

typedef enum { TPB_SPLIT_ROW = 1, TPB_SPLIT_COL = 2 } tpb_split_t;
/** How a TP group's shards are sized: evenly, by rank speed, re-balanced from measured
 *  compute times, or by cost / speed along a --cost-profile. */
typedef enum {
    TPB_POLICY_EVEN = 1,
    TPB_POLICY_WEIGHTED = 2,
    TPB_POLICY_ADAPTIVE = 4,
    TPB_POLICY_COST = 8
} tpb_policy_t;
/** The collective of a TP layer (and of --col-collective: the first two): an all-gather(-v)
 *  of blocks, a sum-all-reduce of full-size partial outputs, or a sum-reduce-scatter(-v) of
 *  them (sequence parallelism's row layer). One row each: X(ID, name, label); the enum and
 *  the names (types.c) are made from them; every backend dispatches a kind in a switch
 *  without a default, so a new row fails the build (-Wswitch-enum) wherever it lacks a call
 *  (tests/dispatch.sh plants one). */
#define TPB_COLLS(X)                                                                               \
    X(ALLGATHER, "allgather", "all-gather")                                                        \
    X(ALLREDUCE, "allreduce", "all-reduce")                                                        \
    X(REDUCE_SCATTER, "reducescatter", "reduce-scatter")

typedef enum {
#define TPB_COLL_ENUM_(id, name, label) TPB_COLL_##id,
    TPB_COLLS(TPB_COLL_ENUM_)
#undef TPB_COLL_ENUM_
} tpb_coll_t;
/** How many collective kinds there are (not a tpb_coll_t). */
#define TPB_COLL_COUNT (0 TPB_COLLS(TPB_COLL_ONE_))
#define TPB_COLL_ONE_(id, name, label) +1
/** Sequence parallelism (--sequence-parallel, a sweep dimension): off, or on (Megatron's:
 *  the row layer ends in a reduce-scatter of Y along M, the column layer starts with an
 *  all-gather of X along M). */
typedef enum { TPB_SEQPAR_OFF = 1, TPB_SEQPAR_ON = 2 } tpb_seqpar_t;
typedef enum { TPB_COMM_CCL = 0, TPB_COMM_MPI } tpb_comm_kind_t;
/** How an MPI collective is called (--collectives): the blocking call, or the non-blocking
 *  one polled (backend/mpi_watch.h). */
typedef enum { TPB_COLLS_BLOCKING = 0, TPB_COLLS_NONBLOCKING } tpb_collectives_t;
/** How a rank is bound to CPU cores (--bind). */
typedef enum { TPB_BIND_NONE = 0, TPB_BIND_CORE, TPB_BIND_NUMA, TPB_BIND_GPU } tpb_bind_t;

/** How an iteration orders GEMM and collective (--overlap): one after the other, or in
 *  chunks whose collectives run beside the next chunk's GEMM. */
typedef enum { TPB_OVERLAP_NONE = 1, TPB_OVERLAP_CHUNKED = 2 } tpb_overlap_mode_t;

/** How the ranks of a TP group are chosen (--tp-placement). */
typedef enum { TPB_PLACE_PACKED = 1, TPB_PLACE_SPREAD = 2 } tpb_placement_t;

/** Where the weighted policy's speeds came from. */
typedef enum {
    TPB_SPEEDS_NONE = 0,
    TPB_SPEEDS_CALIBRATION,
    TPB_SPEEDS_FILE,
    TPB_SPEEDS_GIVEN,
    TPB_SPEEDS_PLAN /**< --shards-from: the shards (and speeds) of a shard plan */
} tpb_speed_source_t;
/** How --emulate-speed imitates a slower device. */
typedef enum {
    TPB_EMULATE_TIME = 0, /**< stretch the compute phase in time (host: spin; GPU: fewer SMs) */
    TPB_EMULATE_WORK      /**< do more work: repeat (a fraction of) the GEMM */
} tpb_emulate_mode_t;

/** The --check verdict of a config. */
typedef enum { TPB_CHECK_OFF = 0, TPB_CHECK_PASS, TPB_CHECK_FAIL } tpb_check_t;

/** One layer shape; splits is the preset's natural split mask (0: use --split). A
 *  collective-only shape (comm_only) is split along n for both splits. */
typedef struct {
    long m, n, k;
    unsigned splits;
    char name[48];
    int comm_only; /**< --comm-only: a message of 1 x n output elements, no GEMM */
} tpb_shape_t;

/** "row", "col". */
const char *tpb_split_name(tpb_split_t s);
/** "even", "weighted", "adaptive", "cost". */
const char *tpb_policy_name(tpb_policy_t p);
/** "allgather", "allreduce", "reducescatter" (as --col-collective spells the first two). */
const char *tpb_coll_name(tpb_coll_t c);
/** "all-gather", "all-reduce", "reduce-scatter" (in prose, tables and the record's
 *  "collective"). */
const char *tpb_coll_label(tpb_coll_t c);
/** "ccl", "mpi". */
const char *tpb_comm_kind_name(tpb_comm_kind_t c);
/** "blocking", "nonblocking". */
const char *tpb_collectives_name(tpb_collectives_t c);
/** "none", "core", "numa", "gpu". */
const char *tpb_bind_name(tpb_bind_t b);
/** "none", "chunked". */
const char *tpb_overlap_name(tpb_overlap_mode_t m);
/** "off", "on". */
const char *tpb_seqpar_name(tpb_seqpar_t s);
/** A split as the table and the answer print it: "row", "col", with sequence parallelism
 *  "row+sp", "col+sp". */
const char *tpb_split_label(tpb_split_t s, tpb_seqpar_t sp);
/** "packed", "spread". */
const char *tpb_placement_name(tpb_placement_t p);
/** "time", "work". */
const char *tpb_emulate_mode_name(tpb_emulate_mode_t m);
/** "none", "calibration", "file", "speeds". */
const char *tpb_speed_source_name(tpb_speed_source_t s);
/** "off", "pass", "fail". */
const char *tpb_check_name(tpb_check_t c);
/** 1 if the speeds were measured (calibration or a calibration file), so in GFLOP/s. */
int tpb_speed_source_measured(tpb_speed_source_t s);

/**
 * Name tables for the option parser: the names of an enum's values in order
 * (index i names the value the parser returns for it), and their count.
 */
typedef struct {
    const char *const *names;
    const unsigned *values;
    int count;
    const char *accepted; /**< how --help and errors list them ("row and/or col") */
} tpb_name_table_t;

extern const tpb_name_table_t tpb_splits, tpb_policies, tpb_colls, tpb_comm_kinds,
    tpb_emulate_modes, tpb_placements, tpb_binds, tpb_collectives, tpb_overlaps, tpb_seqpars;

/** The value named s in t; TPB_ERR_INVALID (no message) if none. Pure. */
tpb_status_t tpb_name_parse(const tpb_name_table_t *t, const char *s, unsigned *value);

#endif /* TPB_TYPES_H */
