/*
 * options.h - the command line of tpbal as one struct passed by pointer. The
 * main header of src/cli/ (options, parsing, presets, --help): cli/ includes
 * base/ and backend/ only (see base/tpb_types.h for the layering rules).
 *
 * tpb_options_parse() is pure (no MPI, no files): every rank parses the same
 * argv and reaches the same verdict, so bad input is agreed on without
 * communication. Checks that need the world size or the backend are done by
 * tpb_options_resolve().
 */
#ifndef TPB_OPTIONS_H
#define TPB_OPTIONS_H

#include <stdint.h>
#include <stdio.h>

#include "base/dtype.h"
#include "base/tpb_types.h"
#include "backend/backend.h"
#include "base/costprofile.h"
#include "base/fleet.h"
#include "cli/shardplan.h"

#define TPB_MAX_TP 64           /**< entries of a --tp list */
#define TPB_MAX_SHAPES 256      /**< shapes of a sweep */
#define TPB_MAX_ITERS 10000000L /**< --iters, --warmup */
#define TPB_MAX_DIM 2147483647L /**< largest M, N or K: BLAS and cuBLAS take int dimensions */
#define TPB_MIN_EMULATE 0.01    /**< slowest --emulate-speed factor (100x slower) */
#define TPB_MAX_THREADS 1024    /**< --threads */

/** --gather: every mark to rank 0, or the analysis in parts (run/gather.h); auto: in parts
 *  where every rank's marks would pass TPB_GATHER_AUTO_BYTES on rank 0. */
enum { TPB_GATHER_AUTO = 0, TPB_GATHER_FULL, TPB_GATHER_PARTS };
#define TPB_GATHER_AUTO_BYTES (256.0 * 1048576.0)
#define TPB_TRACE_RANKS_DEFAULT 256

/** A fault injected for testing (documented as such in --help). */
typedef struct {
    int rank;  /**< -1: none */
    double us; /**< delay or clock offset in microseconds */
    int every; /**< delay only every k-th iteration (1: always) */
} tpb_inject_t;

typedef struct {
    const tpb_backend_class_t *backend; /**< --backend (NULL: auto), the class once resolved */
    int tp[TPB_MAX_TP];
    int ntp;                    /**< 0: every power of two dividing the world size */
    unsigned splits;            /**< TPB_SPLIT_* mask; 0: row and col */
    unsigned seqpars;           /**< TPB_SEQPAR_* mask; 0: off */
    unsigned policies;          /**< TPB_POLICY_* mask; 0: even and weighted */
    unsigned placements;        /**< TPB_PLACE_* mask; 0: packed */
    unsigned overlaps;          /**< TPB_OVERLAP_* mask; 0: none */
    int chunks[TPB_MAX_CHUNKS]; /**< --chunks: chunk counts of --overlap chunked */
    int nchunks;                /**< 0: 2, 4, 8 */
    int overlap_polls;          /**< --overlap-polls; 0: the backend's default */
    tpb_shape_t shapes[TPB_MAX_SHAPES];
    int nshapes; /**< 0: the backend's default shape */
    long m_list[TPB_MAX_SHAPES], n_list[TPB_MAX_SHAPES], k_list[TPB_MAX_SHAPES];
    int nm, nn, nk;   /**< -m/-n/-k lists, combined by tpb_options_resolve */
    char preset[256]; /**< --preset name or path ("" if none) */
    int block; /**< --block (or --model): the shapes run back to back as one step, in order */
    int model; /**< the preset came as --model (messages name the flag given) */
    int fleet; /**< --fleet: qualify every rank, node and link instead of a sweep */
    double fleet_threshold;     /**< --fleet-threshold: a node scoring below is excluded */
    long fleet_bytes;           /**< --fleet-bytes: the collectives' message */
    int fleet_given;            /**< --fleet-threshold or --fleet-bytes given (at any value) */
    const char *sweep_flag;     /**< the first option given that only a sweep uses (no "--") */
    int trace_ranks_given;      /**< --trace-ranks given (at any value) */
    const char *inert_given[3]; /**< given options that only some modes read (no "--"):
                                     --rebalance-every, --emulate-mode, --col-collective;
                                     refused where this run's mode would ignore them */
    tpb_dtype_t dtype;
    int dtype_set; /**< 0: the backend's default dtype */
    int iters, warmup;
    double *speeds; /**< --speeds, one per world rank (owned) */
    int nspeeds;
    double *emulate; /**< --emulate-speed factors (owned) */
    int nemulate;
    tpb_emulate_mode_t emulate_mode; /**< --emulate-mode */
    long sched_iter; /**< --emulate-schedule ITER:LIST: from this iteration of the run ... */
    double *sched;   /**< ... these factors (owned), one per rank */
    int nsched;
    int rebalance_every; /**< --rebalance-every: measured iterations per adaptive round */
    char calibration_file[1024];
    char shards_from[1024];          /**< --shards-from ("" if none) */
    tpb_shardplan_t shard_plan;      /**< ... its plans (tpbal.c reads them; owned) */
    char cost_spec[1024];            /**< --cost-profile ("" if none) */
    tpb_cost_profile_t cost_profile; /**< ... its blocks (tpbal.c reads them; owned) */
    long granularity;                /**< 0: the backend's default */
    int check;
    char out_dir[1024];
    int force; /**< --force: replace an earlier run's results in out_dir */
    int wide;  /**< --wide: every column in the table (default: the 120-column table) */
    tpb_coll_t col_collective;
    tpb_comm_kind_t comm;
    tpb_collectives_t collectives; /**< --collectives */
    int *gpu_map;                  /**< --gpu-map, device per node-local rank (owned) */
    int ngpu_map;
    tpb_bind_t bind;   /**< --bind */
    int threads;       /**< --threads: BLAS threads per rank (host), 0 = decided per rank */
    double timeout_s;  /**< --timeout: the collective watchdog (both backends), 0 = off */
    int timeline;      /**< record and write timelines (default on) */
    int interleave;    /**< --interleave: policies measured side by side (default on) */
    double budget_s;   /**< --budget: seconds a sweep may add to sets still open (0: none) */
    int repeat;        /**< --repeat: passes of the whole sweep (1: one, as without it) */
    int trace_iters;   /**< --trace-iters: iterations per trace file; 0 auto, -1 all */
    int trace_per_run; /**< --trace-per run: one trace.json for the run (0: one per config) */
    int gather;        /**< --gather: TPB_GATHER_AUTO, _FULL or _PARTS */
    int trace_ranks;   /**< --trace-ranks: ranks whose marks rank 0 keeps under --gather parts
                            (whole TP groups; -1 all) */
    tpb_inject_t inject_delay;
    tpb_inject_t inject_clock;
    uint64_t seed;
    int comm_only;                   /**< --comm-only: collectives alone, no GEMM */
    long comm_sizes[TPB_MAX_SHAPES]; /**< --comm-sizes in bytes */
    int ncomm_sizes;                 /**< 0: the default range */
    int comm_gap_us;                 /**< --comm-gap: us every rank spins before each comm-only
                                          collective (0: back-to-back) */
    int quiet;
    int dry_run; /**< --dry-run: resolve and print the configs, open no device, write nothing */
    int help, version, print_schema;
    char notes[512]; /**< what resolving changed and says so ("" if nothing): repeats merged */
} tpb_options_t;

/** Defaults for every field (no allocation). */
void tpb_options_init(tpb_options_t *o);

/** Free what parsing allocated; the struct may be parsed again after tpb_options_init. */
void tpb_options_free(tpb_options_t *o);

/**
 * Parse argv into o (which must come from tpb_options_init). On error returns
 * TPB_ERR_INVALID with a one-line message naming the flag and what it accepts.
 */
tpb_status_t tpb_options_parse(tpb_options_t *o, int argc, char **argv);

/**
 * Complete the options for a world of `world` ranks and the backend chosen
 * (o->backend then names it; its default granularity, dtype and shape fill what the
 * command line left out): combine -m/-n/-k lists, check list lengths against the
 * world size, and fill the default TP list. A single --tp that does not divide the
 * world is an error; in a list it is kept (the sweep skips it with a message). What
 * the backend itself refuses is its class's check_config (tpb_options_backend_cfg).
 * A value a sweep list repeats (a TP degree, a chunk count, a shape, two message sizes
 * of one element count) is measured once, and o->notes says so.
 */
tpb_status_t tpb_options_resolve(tpb_options_t *o, int world, const tpb_backend_class_t *backend);

/** The settings of o a backend needs (gpu_map borrowed from o). */
void tpb_options_backend_cfg(const tpb_options_t *o, tpb_backend_cfg_t *cfg);

/** Read --cost-profile (a built-in or a bounded text file) into o->cost_profile; nothing
 *  if none was given. One line naming the file and what is wrong otherwise. */
tpb_status_t tpb_options_load_cost(tpb_options_t *o);

/** Print the --help text to f. */
void tpb_options_usage(FILE *f);

/** tpbal --version: the version, and every backend of the registry (built or not, the
 *  devices it sees in this process). */
void tpb_options_version(FILE *f);

/** Parse "MxNxK" into a shape; TPB_ERR_INVALID otherwise. */
tpb_status_t tpb_shape_parse(const char *s, tpb_shape_t *shape);

#endif /* TPB_OPTIONS_H */
