/* options.c - the option table and command-line parsing into tpb_options_t (pure). */
#include "cli/optparse.h"
#include "cli/options_set.h"
#include "cli/options_table.h"
#include "base/passes.h"
#include "base/suggest.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tpb_options_init(tpb_options_t *o)
{
    memset(o, 0, sizeof(*o));
    o->iters = 20;
    o->warmup = 5;
    o->timeline = 1;
    o->trace_ranks = TPB_TRACE_RANKS_DEFAULT;
    o->interleave = 1;
    o->inject_delay.rank = -1;
    o->inject_clock.rank = -1;
    o->seed = 42;
    o->timeout_s = 300.0;
    o->rebalance_every = 5;
    o->fleet_threshold = TPB_FLEET_THRESHOLD;
    o->fleet_bytes = 16L << 20;
    o->repeat = 1;
}

void tpb_options_free(tpb_options_t *o)
{
    tpb_shardplan_free(&o->shard_plan);
    tpb_cost_profile_free(&o->cost_profile);
    free(o->speeds);
    free(o->emulate);
    free(o->gpu_map);
    free(o->sched);
    o->sched = NULL;
    o->speeds = o->emulate = NULL;
    o->gpu_map = NULL;
}

/* ---- the option table (cli/options_table.h) ---- */

const tpb_opt_spec_t tpb_opt_table[] = {
    {"backend", 0, "NAME", OPT_BACKEND, "What to run", NULL, ""}, /* "": from the registry */
    {"tp", 't', "LIST", OPT_TP, NULL, NULL, "TP degrees (default: powers of two dividing P)"},
    {"split", 's', "LIST", OPT_SPLIT, NULL, NULL,
     "row (K split + all-reduce), col (N split + all-gather)"},
    {"sequence-parallel", 0, "LIST", OPT_SEQPAR, NULL, NULL,
     "off, on (default off): on is Megatron's sequence\nparallelism: the row layer ends in a "
     "reduce-scatter\nof Y along M, the column layer starts with an\nall-gather of X along M "
     "(M split evenly)"},
    {"policy", 'p', "LIST", OPT_POLICY, NULL, NULL,
     "even, weighted, adaptive, cost (default: even,weighted;\nwith --cost-profile "
     "even,weighted,cost); adaptive\nre-balances from measured compute times; cost "
     "balances\nthe profile's cost / speed (optimal contiguous split)"},
    {"rebalance-every", 0, "K", OPT_REBALANCE, NULL, NULL,
     "adaptive: measured iterations per round (default 5)"},
    {"interleave", 0, "on|off", OPT_INTERLEAVE, NULL, NULL,
     "on: the policies of one shape, TP degree, split and\nplacement are measured side by side, "
     "their iterations\nin alternating rounds (ABBA), so that a change of\nthe machine's speed "
     "falls on both and the speed-up\ngets a paired interval; off: one after the other\n"
     "(default on)"},
    {"budget", 0, "SECONDS", OPT_BUDGET, NULL, NULL,
     "while a policy's speed-up in a set, its persistent\nstraggler, or with --block the "
     "block's TP ranking\n(or its step's precision, +-2.5 %) is inconclusive\nafter the "
     "planned iterations, measure the set again\n(--iters more of each, side by side) as "
     "long as\nthis much time is left: SECONDS, or 90s, 2m, 1h; at\nmost 8 looks a set, "
     "each verdict at its look's\nsequential level (doc/METRICS.md); with --fleet, 5\nmore "
     "rounds of every rank's GEMM while a node is\nsuspect; refused where no set could take "
     "a second\nlook (--interleave off, --policy even alone, --iters\nbelow 6, --comm-only); "
     "default 0: off"},
    {"repeat", 0, "N", OPT_REPEAT, NULL, NULL,
     "N passes of the whole sweep in one launch (1 to 64,\ndefault 1), each with its own "
     "calibration, clock\nsync and --budget, into DIR/pass-1 .. DIR/pass-N;\nthe answer "
     "over the passes (run-to-run spread,\nverdicts, stragglers that persist over them) "
     "ends\nthe run and goes to DIR/repeat.json; with --fleet,\nthe nodes excluded in more "
     "than half of the passes"},
    {"overlap", 0, "LIST", OPT_OVERLAP, NULL, NULL,
     "none, chunked (default none): chunked cuts M into C\nchunks, each chunk's collective "
     "beside the next\nchunk's GEMM; figures per config (doc/METRICS.md)"},
    {"chunks", 0, "LIST", OPT_CHUNKS, NULL, NULL,
     "chunk counts of --overlap chunked (default 2,4,8)"},
    {"overlap-polls", 0, "N", OPT_OVERLAP_POLLS, NULL, NULL,
     "pieces of a chunk's GEMM, a progress call after each\n(default 1)"},
    {"m", 'm', "LIST", OPT_M, NULL, "  -m, -n, -k LIST",
     "shape lists, combined as a grid (M tokens, N out, K in)"},
    {"n", 'n', "LIST", OPT_N, NULL, NULL, NULL},
    {"k", 'k', "LIST", OPT_K, NULL, NULL, NULL},
    {"shape", 0, "MxNxK[,...]", OPT_SHAPE, NULL, NULL, "explicit shapes"},
    {"preset", 0, "NAME|PATH", OPT_PRESET, NULL, NULL,
     "shape file (bench/presets/NAME.shapes): llama3-8b,\nllama3-70b, llama3-405b, gpt3-175b, "
     "llama3-8b-cpu,\ntiny"},
    {"block", 0, NULL, OPT_BLOCK, NULL, NULL,
     "a transformer block: the shapes' GEMMs (each with its\nown split, shards and collective) "
     "run back to back,\nin order, as one step per TP degree and policy;\nreports tokens/s per "
     "rank and ranks TP degrees by it"},
    {"model", 0, "NAME", OPT_MODEL, NULL, NULL, "--preset NAME --block"},
    {"dtype", 'd', "T", OPT_DTYPE, NULL, NULL, ""},
    {"iters", 'i', "N", OPT_ITERS, NULL, NULL, "measured iterations per config (default 20)"},
    {"warmup", 'w', "N", OPT_WARMUP, NULL, NULL, "warm-up iterations per config (default 5)"},
    {"granularity", 'g', "G", OPT_GRAN, NULL, NULL, ""},
    {"col-collective", 0, "C", OPT_COLCOLL, NULL, NULL,
     "col split collective: allgather (default) | allreduce"},
    {"speeds", 0, "LIST", OPT_SPEEDS,
     "Speeds for the weighted policy\n"
     "      (default)              calibrate: all ranks at once time GEMMs at their\n"
     "                             even shard until the medians are stable",
     NULL, "one relative speed per rank"},
    {"calibration-file", 0, "F", OPT_CALFILE, NULL, NULL,
     "reuse calibrated speeds from F, calibrate and add\nthe missing ones (CSV)"},
    {"cost-profile", 0, "skew:R|F", OPT_COST_PROFILE, NULL, NULL,
     "work that is not uniform along the split dimension:\nW block-sparse, block b's density its "
     "cost / the\nlargest (F: one relative cost per block; skew:R: the\nfirst half R times the "
     "second); GEMMs skip the zeros"},
    {"shards-from", 0, "F", OPT_SHARDS_FROM, NULL, NULL,
     "the shards of tpbal-plan --plan-out F for the configs\nit plans (speeds: \"plan\"); no "
     "calibration for them"},
    {"emulate-speed", 0, "LIST", OPT_EMULATE, NULL, NULL,
     "one factor per rank in [0.01,1]: slow a rank down on\npurpose (the weighted policy learns it "
     "only by\ncalibration)"},
    {"emulate-mode", 0, "time|work", OPT_EMULATE_MODE, NULL, NULL,
     "time: stretch the compute phase (host: spin; GPU:\nfewer SMs); work: repeat the GEMM "
     "(default time)"},
    {"emulate-schedule", 0, "ITER:LIST", OPT_SCHEDULE, NULL, NULL,
     "from iteration ITER of the run on, these factors\n(a rank that slows down mid-run; a "
     "GPU backend\nfixes its SM partition at start and refuses it)"},
    {"check", 'c', NULL, OPT_CHECK, "Checking and output", NULL,
     "verify Y against a single-rank reference on seeded\ninputs; exit code 3 if any config "
     "fails"},
    {"dry-run", 0, NULL, OPT_DRY_RUN, NULL, NULL,
     "resolve the command line for --backend and print the\nconfigs it would measure, or the "
     "one-line refusal;\nno device is opened and nothing is written (a GPU\nrun checked on any "
     "machine); --out is checked as the\nrun would, not created; the whole run's time\n"
     "estimated (the host's GEMM rate measured)"},
    {"out", 'o', "DIR", OPT_OUT, NULL, NULL,
     "write results.jsonl, results.csv, ranks.csv and\ntrace-NNN.json (Perfetto) into DIR (one "
     "run at a\ntime: a lock names the run that holds DIR)"},
    {"force", 0, NULL, OPT_FORCE, NULL, NULL,
     "let --out DIR replace the results of an earlier run\n(its files, as its record names "
     "them, removed once\nthis run's are in place)"},
    {"wide", 0, NULL, OPT_WIDE, NULL, NULL,
     "every column in the table (M, N, K, dtype, p95,\ncompute, wait, U, TFLOP/s, %peak, busbw, "
     "lateness,\nspikes, what-if), and long lines kept whole\nwhen piped; by default every "
     "line fits 120\ncolumns (results.csv has them all either way)"},
    {"timeline", 0, "on|off", OPT_TIMELINE, NULL, NULL,
     "record per-iteration timelines (default on)"},
    {"trace-iters", 0, "N|all|auto", OPT_TRACE_ITERS, NULL, NULL,
     "iterations per trace file: N around the slowest\nstep plus up to N spikes; auto: all "
     "up to 300k\nrank-iterations, else 300k / ranks, window and\nspikes together (default auto)"},
    {"trace-per", 0, "config|run", OPT_TRACE_PER, NULL, NULL,
     "config: trace-NNN.json per config; run: one\ntrace.json, every config on the run's time "
     "axis\n(even beside weighted; default config)"},
    {"gather", 0, "auto|full|parts", OPT_GATHER, NULL, NULL,
     "full: every rank's marks to rank 0; parts: each TP\ngroup analysed by its first rank, "
     "rank 0 gets\nper-iteration summaries, per-rank statistics and\nthe marks of --trace-ranks "
     "ranks only (the same\nfigures; bounded memory at 100,000+ ranks); auto:\nparts where "
     "the marks would pass 256 MiB on rank 0\n(default auto)"},
    {"trace-ranks", 0, "N|all", OPT_TRACE_RANKS, NULL, NULL,
     "under --gather parts, the ranks whose timelines are\nkept (whole TP groups: the "
     "straggler's, those\nthat set the step, a sample; default 256)"},
    {"seed", 0, "N", OPT_SEED, NULL, NULL, "input generator seed (default 42)"},
    {"quiet", 'q', NULL, OPT_QUIET, NULL, NULL, "no progress lines"},
    {"comm-only", 0, NULL, OPT_COMM_ONLY, "Collective-only sweeps (no GEMM)", NULL,
     "time the layer's collectives alone on the same TP\ngroups: all-reduce (row), all-gather-v "
     "(col; even,\nor weighted blocks from --speeds); an alpha-beta fit\nper collective goes "
     "into the summary"},
    {"comm-sizes", 0, "LIST|MIN:MAX[:F]", OPT_COMM_SIZES, NULL,
     "      --comm-sizes LIST|MIN:MAX[:F]",
     "message sizes in bytes, suffixes K M G (1024s): a\nlist, or MIN, MIN*F, ... MAX as "
     "nccl-tests' -b -e -f\n(default 4K:16M:4)"},
    {"comm-gap", 0, "US", OPT_COMM_GAP, NULL, NULL,
     "every rank spins US us before each collective, so\nthe link idles as it does during "
     "a GEMM (default 0:\nback-to-back, as OSU and nccl-tests time; a TCP\nlink can be 2x "
     "slower so: doc/METRICS.md)"},
    {"fleet", 0, NULL, OPT_FLEET, "Node qualification (instead of a sweep)", NULL,
     "every rank's GEMM rate (the shape: --shape or the\nbackend's default), every node's "
     "all-reduce over its\nranks and every neighbouring pair of nodes' link,\nscored "
     "against the fleet's median with 95 %\nintervals; the nodes to exclude and a one-line\n"
     "--exclude= for Slurm; --out DIR writes fleet.json"},
    {"fleet-threshold", 0, "X", OPT_FLEET_THRESHOLD, NULL, NULL,
     "a node whose score is below X with its whole\ninterval is excluded (default 0.9)"},
    {"fleet-bytes", 0, "B", OPT_FLEET_BYTES, NULL, NULL,
     "the collectives' message, suffixes K M G (default 16M)"},
    {"tp-placement", 0, "LIST", OPT_PLACEMENT, "Placement, binding and faults", NULL,
     "packed (a group's ranks consecutive, inside a node)\nand/or spread (one rank per node "
     "per group)\n(default packed)"},
    {"bind", 0, "none|core|numa|gpu", OPT_BIND, NULL, NULL,
     "bind each rank (hwloc): a core, a NUMA node, or the\ncores near its GPU (cuda); "
     "the cpuset is recorded"},
    {"threads", 0, "N", OPT_THREADS, NULL, NULL,
     "BLAS threads per rank (CPU backend). Default: its\nshare of the cores it may run on "
     "(ranks allowed on\nthe same cores split them: 2 unbound ranks on 2\ncores run 1 "
     "each), or OPENBLAS_NUM_THREADS if set"},
    {"timeout", 0, "SECONDS", OPT_TIMEOUT, NULL, NULL,
     "end a rank that makes no progress for this long:\na hung collective, a stuck GPU call, a "
     "wait for a\nstuck rank (default 300; 0: never)"},
    {"collectives", 0, "blocking|nonblocking", OPT_COLLECTIVES, NULL, NULL,
     "MPI collectives: the blocking call, as OSU and IMB\ntime it, watched by a thread that "
     "names the late\nranks of its node (default); or the non-blocking\ncall polled, which "
     "names late ranks on every node"},
    {"comm", 0, "ccl|mpi", OPT_COMM, "GPU options", NULL,
     "collectives by the GPU vendor's library, NCCL\n(default; nccl is the same), or MPI through "
     "pinned\nhost buffers (several ranks may share a GPU)"},
    {"gpu-map", 0, "LIST", OPT_GPUMAP, NULL, NULL, "device index per node-local rank"},
    {"inject-delay", 0, "RANK:US[:EVERY]", OPT_INJ_DELAY,
     "Fault injection, for testing tpbal itself", "      --inject-delay RANK:US[:EVERY]",
     "extra delay in RANK's compute phase (every EVERY-th\niteration of the run, warm-up "
     "included)"},
    {"inject-clock-offset", 0, "RANK:US", OPT_INJ_CLOCK, NULL,
     "      --inject-clock-offset RANK:US", "add US to RANK's clock before clock sync"},
    {"help", 'h', NULL, OPT_HELP, "", NULL, "this text"},
    {"version", 'V', NULL, OPT_VERSION, NULL, NULL, "version and the backends built"},
    {"print-schema", 0, NULL, OPT_SCHEMA, NULL, NULL,
     "what the records' fields mean to the tools, as JSON\n(a config's identity; "
     "src/tools/tpbal_schema.json)"},
};

#define NFLAGS (sizeof(tpb_opt_table) / sizeof(tpb_opt_table[0]))
const size_t tpb_opt_nflags = NFLAGS;

static const char *const onoff_names[] = {"off", "on"};
static const char *const trace_per_names[] = {"config", "run"};
static const char *const gather_names[] = {"auto", "full", "parts"};

/* One named value of table t into *out. */
static tpb_status_t set_name(const char *flag, const char *v, const tpb_name_table_t *t,
                             unsigned *out)
{
    if (tpb_name_parse(t, v, out) != TPB_OK)
        return tpb_err_set(TPB_ERR_INVALID, "%s '%s': expected %s", flag, tpb_err_value(v),
                           t->accepted);
    return TPB_OK;
}

static tpb_status_t apply(tpb_options_t *o, int id, const char *flag, const char *v)
{
    unsigned u = 0;
    switch (id) {
    case OPT_BACKEND:
        o->backend = tpb_backend_find(v);
        if (!o->backend)
            return tpb_err_set(TPB_ERR_INVALID, "%s '%s': expected %s", flag, tpb_err_value(v),
                               tpb_backend_names());
        if (strcmp(v, "auto") == 0)
            o->backend = NULL; /* chosen where the devices can be seen (tpbal.c) */
        return TPB_OK;
    case OPT_TP: return tpb_optset_tp(o, flag, v);
    case OPT_SPLIT: return tpb_opt_name_set(flag, v, &tpb_splits, &o->splits);
    case OPT_SEQPAR: return tpb_opt_name_set(flag, v, &tpb_seqpars, &o->seqpars);
    case OPT_POLICY: return tpb_opt_name_set(flag, v, &tpb_policies, &o->policies);
    case OPT_OVERLAP: return tpb_opt_name_set(flag, v, &tpb_overlaps, &o->overlaps);
    case OPT_CHUNKS: return tpb_optset_chunks(o, flag, v);
    case OPT_OVERLAP_POLLS: return tpb_optset_int(flag, v, 1, TPB_MAX_CHUNKS, &o->overlap_polls);
    case OPT_M:
        return tpb_opt_long_list(flag, v, 1, TPB_MAX_DIM, o->m_list, TPB_MAX_SHAPES, &o->nm);
    case OPT_N:
        return tpb_opt_long_list(flag, v, 1, TPB_MAX_DIM, o->n_list, TPB_MAX_SHAPES, &o->nn);
    case OPT_K:
        return tpb_opt_long_list(flag, v, 1, TPB_MAX_DIM, o->k_list, TPB_MAX_SHAPES, &o->nk);
    case OPT_SHAPE: return tpb_opt_shapes(flag, v, o->shapes, &o->nshapes);
    case OPT_PRESET:
        if (o->preset[0])
            return tpb_err_set(TPB_ERR_INVALID, "--preset and --model both given: use one");
        return tpb_opt_string(flag, v, o->preset, sizeof(o->preset));
    case OPT_BLOCK: o->block = 1; return TPB_OK;
    case OPT_MODEL:
        if (o->preset[0])
            return tpb_err_set(TPB_ERR_INVALID, "--preset and --model both given: use one");
        o->block = o->model = 1;
        return tpb_opt_string(flag, v, o->preset, sizeof(o->preset));
    case OPT_DTYPE: o->dtype_set = 1; return tpb_dtype_parse(v, &o->dtype);
    case OPT_ITERS: return tpb_optset_int(flag, v, 1, TPB_MAX_ITERS, &o->iters);
    case OPT_WARMUP: return tpb_optset_int(flag, v, 0, TPB_MAX_ITERS, &o->warmup);
    case OPT_SPEEDS: return tpb_opt_double_list(flag, v, &o->speeds, &o->nspeeds);
    case OPT_CALFILE:
        return tpb_opt_string(flag, v, o->calibration_file, sizeof(o->calibration_file));
    case OPT_SHARDS_FROM: return tpb_opt_string(flag, v, o->shards_from, sizeof(o->shards_from));
    case OPT_COST_PROFILE: return tpb_opt_string(flag, v, o->cost_spec, sizeof(o->cost_spec));
    case OPT_EMULATE: return tpb_optset_emulate(o, flag, v);
    case OPT_EMULATE_MODE:
        TPB_CHECK_RET(set_name(flag, v, &tpb_emulate_modes, &u));
        o->emulate_mode = (tpb_emulate_mode_t)u;
        return TPB_OK;
    case OPT_SCHEDULE: return tpb_optset_schedule(o, flag, v);
    case OPT_PLACEMENT: return tpb_opt_name_set(flag, v, &tpb_placements, &o->placements);
    case OPT_REBALANCE: return tpb_optset_int(flag, v, 1, TPB_MAX_ITERS, &o->rebalance_every);
    case OPT_INTERLEAVE:
        return tpb_opt_choice(flag, v, onoff_names, 2, "on or off", &o->interleave);
    case OPT_GRAN: return tpb_opt_long(flag, v, 1, TPB_MAX_DIM, &o->granularity);
    case OPT_CHECK: o->check = 1; return TPB_OK;
    case OPT_DRY_RUN: o->dry_run = 1; return TPB_OK;
    case OPT_FORCE: o->force = 1; return TPB_OK;
    case OPT_WIDE: o->wide = 1; return TPB_OK;
    case OPT_OUT: return tpb_opt_string(flag, v, o->out_dir, sizeof(o->out_dir));
    case OPT_COLCOLL:
        TPB_CHECK_RET(set_name(flag, v, &tpb_colls, &u));
        o->col_collective = (tpb_coll_t)u;
        return TPB_OK;
    case OPT_COLLECTIVES:
        TPB_CHECK_RET(set_name(flag, v, &tpb_collectives, &u));
        o->collectives = (tpb_collectives_t)u;
        return TPB_OK;
    case OPT_COMM:
        TPB_CHECK_RET(set_name(flag, v, &tpb_comm_kinds, &u));
        o->comm = (tpb_comm_kind_t)u;
        return TPB_OK;
    case OPT_GPUMAP: return tpb_optset_gpu_map(o, flag, v);
    case OPT_BIND:
        TPB_CHECK_RET(set_name(flag, v, &tpb_binds, &u));
        o->bind = (tpb_bind_t)u;
        return TPB_OK;
    case OPT_THREADS: return tpb_optset_int(flag, v, 1, TPB_MAX_THREADS, &o->threads);
    case OPT_BUDGET: return tpb_optset_seconds(flag, v, 0.0, 1e7, &o->budget_s);
    case OPT_REPEAT: return tpb_optset_int(flag, v, 1, TPB_PASSES_MAX, &o->repeat);
    case OPT_TIMEOUT:
        TPB_CHECK_RET(tpb_opt_double(flag, v, &o->timeout_s));
        /* 0 turns it off; below a second no collective or device call could finish (and it
         * printed as "0 s", which means off) */
        if (!(o->timeout_s == 0.0 || (o->timeout_s >= 1.0 && o->timeout_s <= 1e7)))
            return tpb_err_set(TPB_ERR_INVALID,
                               "%s '%s': expected 0 (off) or seconds from 1 to 1e7", flag,
                               tpb_err_value(v));
        return TPB_OK;
    case OPT_TIMELINE: return tpb_opt_choice(flag, v, onoff_names, 2, "on or off", &o->timeline);
    case OPT_TRACE_ITERS: return tpb_optset_trace_iters(o, flag, v);
    case OPT_TRACE_PER:
        return tpb_opt_choice(flag, v, trace_per_names, 2, "config or run", &o->trace_per_run);
    case OPT_GATHER:
        return tpb_opt_choice(flag, v, gather_names, 3, "auto, full or parts", &o->gather);
    case OPT_TRACE_RANKS:
        if (strcmp(v, "all") == 0) {
            o->trace_ranks = -1;
            return TPB_OK;
        }
        if (tpb_optset_int(flag, v, 1, INT_MAX, &o->trace_ranks) != TPB_OK)
            return tpb_err_set(TPB_ERR_INVALID,
                               "%s '%s': expected all or a number of ranks from 1 to %d", flag,
                               tpb_err_value(v), INT_MAX);
        return TPB_OK;
    case OPT_INJ_DELAY: return tpb_opt_inject(flag, v, 1, &o->inject_delay);
    case OPT_INJ_CLOCK: return tpb_opt_inject(flag, v, 0, &o->inject_clock);
    case OPT_SEED: {
        long s;
        TPB_CHECK_RET(tpb_opt_long(flag, v, 0, LONG_MAX, &s));
        o->seed = (uint64_t)s;
        return TPB_OK;
    }
    case OPT_QUIET: o->quiet = 1; return TPB_OK;
    case OPT_COMM_ONLY: o->comm_only = 1; return TPB_OK;
    case OPT_COMM_GAP: return tpb_optset_int(flag, v, 0, 10000000, &o->comm_gap_us);
    case OPT_COMM_SIZES:
        return tpb_opt_byte_sizes(flag, v, o->comm_sizes, TPB_MAX_SHAPES, &o->ncomm_sizes);
    case OPT_FLEET: o->fleet = 1; return TPB_OK;
    case OPT_FLEET_THRESHOLD:
        o->fleet_given = 1;
        TPB_CHECK_RET(tpb_opt_double(flag, v, &o->fleet_threshold));
        if (!(o->fleet_threshold > 0.0 && o->fleet_threshold < 1.0))
            return tpb_err_set(TPB_ERR_INVALID,
                               "%s '%s': expected a score between 0 and 1 "
                               "(0.9: 10 %% below the fleet's median)",
                               flag, tpb_err_value(v));
        return TPB_OK;
    case OPT_FLEET_BYTES: {
        int nb = 0;
        o->fleet_given = 1;
        TPB_CHECK_RET(tpb_opt_byte_sizes(flag, v, &o->fleet_bytes, 1, &nb));
        return o->fleet_bytes >= 8 ? TPB_OK
                                   : tpb_err_set(TPB_ERR_INVALID, "%s '%s': at least 8 bytes", flag,
                                                 tpb_err_value(v));
    }
    case OPT_HELP: o->help = 1; return TPB_OK;
    case OPT_VERSION: o->version = 1; return TPB_OK;
    case OPT_SCHEMA: o->print_schema = 1; return TPB_OK;
    }
    return tpb_err_set(TPB_ERR_INVALID, "%s: internal error (unhandled option)", flag);
}

static const tpb_opt_spec_t *find_long(const char *name, size_t len)
{
    for (size_t i = 0; i < NFLAGS; i++)
        if (strlen(tpb_opt_table[i].name) == len && strncmp(tpb_opt_table[i].name, name, len) == 0)
            return &tpb_opt_table[i];
    return NULL;
}

static const tpb_opt_spec_t *find_short(char c)
{
    for (size_t i = 0; i < NFLAGS; i++)
        if (tpb_opt_table[i].short_name == c)
            return &tpb_opt_table[i];
    return NULL;
}

/* The one line for an unknown option, with the nearest long option if one is near. */
static tpb_status_t unknown(const char *arg)
{
    const char *names[NFLAGS];
    int n = 0, at = -1;
    for (size_t i = 0; i < NFLAGS; i++)
        if (tpb_opt_table[i].name[1])
            names[n++] = tpb_opt_table[i].name;
    if (strncmp(arg, "--", 2) == 0) {
        char word[64];
        snprintf(word, sizeof(word), "%.*s", (int)strcspn(arg + 2, "="), arg + 2);
        at = tpb_suggest(word, names, n);
    }
    if (at >= 0)
        return tpb_err_set(TPB_ERR_INVALID,
                           "unknown option '%s': did you mean --%s? (tpbal --help)",
                           tpb_err_value(arg), names[at]);
    return tpb_err_set(TPB_ERR_INVALID, "unknown option '%s': see tpbal --help",
                       tpb_err_value(arg));
}

/* An option only a sweep uses (--fleet measures on its own schedule: fleet.c). */
static int sweep_only(int id)
{
    static const int ids[] = {OPT_TP,          OPT_SPLIT,       OPT_SEQPAR,        OPT_POLICY,
                              OPT_ITERS,       OPT_WARMUP,      OPT_SPEEDS,        OPT_CALFILE,
                              OPT_INTERLEAVE,  OPT_REBALANCE,   OPT_SCHEDULE,      OPT_GATHER,
                              OPT_TRACE_RANKS, OPT_TRACE_ITERS, OPT_TRACE_PER,     OPT_TIMELINE,
                              OPT_INJ_DELAY,   OPT_INJ_CLOCK,   OPT_COMM_GAP,      OPT_COMM_SIZES,
                              OPT_CHUNKS,      OPT_OVERLAP,     OPT_OVERLAP_POLLS, OPT_PLACEMENT,
                              OPT_GRAN,        OPT_COST_PROFILE};
    for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
        if (ids[i] == id)
            return 1;
    return 0;
}

tpb_status_t tpb_options_parse(tpb_options_t *o, int argc, char **argv)
{
    unsigned char seen[NFLAGS] = {0};
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const tpb_opt_spec_t *spec = NULL;
        const char *value = NULL;
        char flag[80];
        if (strncmp(arg, "--", 2) == 0 && arg[2]) {
            const char *eq = strchr(arg + 2, '=');
            size_t len = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
            spec = find_long(arg + 2, len);
            value = eq ? eq + 1 : NULL;
        } else if (arg[0] == '-' && arg[1] && !arg[2]) {
            spec = find_short(arg[1]);
        }
        if (!spec)
            return unknown(arg);
        snprintf(flag, sizeof(flag), "%s%s", spec->name[1] ? "--" : "-", spec->name);
        if (spec->arg && seen[spec - tpb_opt_table]++) /* the last would win without a word */
            return tpb_err_set(TPB_ERR_INVALID,
                               "%s is given twice: give it once (lists take commas: --tp 1,2)",
                               flag);
        if (spec->arg && !value) {
            if (i + 1 >= argc)
                return tpb_err_set(TPB_ERR_INVALID, "%s needs a value: see tpbal --help", flag);
            value = argv[++i];
        } else if (!spec->arg && value) {
            return tpb_err_set(TPB_ERR_INVALID, "%s takes no value", flag);
        }
        TPB_CHECK_RET(apply(o, spec->id, flag, value));
        if (!o->sweep_flag && sweep_only(spec->id))
            o->sweep_flag = spec->name;
        o->trace_ranks_given |= spec->id == OPT_TRACE_RANKS;
        if (spec->id == OPT_REBALANCE || spec->id == OPT_EMULATE_MODE || spec->id == OPT_COLCOLL)
            o->inert_given[spec->id == OPT_REBALANCE      ? 0
                           : spec->id == OPT_EMULATE_MODE ? 1
                                                          : 2] = spec->name;
    }
    return TPB_OK;
}
