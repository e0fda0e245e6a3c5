/*
 * tpbal.c - the program: parse, agree, pick the backend, sweep, report.
 * Only main decides how to exit; every rank exits with the same code.
 */
#include <mpi.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/backend.h"
#include "backend/mpi_watch.h"
#include "base/slurm.h"
#include "base/stamp.h"
#include "cli/preset.h"
#include "record/fleet_out.h"
#include "record/outfile.h"
#include "record/repeat.h"
#include "record/schema.h"
#include "record/seal.h"
#include "record/wrap.h"
#include "run/agree.h"
#include "run/dryrun.h"
#include "run/fleet.h"
#include "run/inputs.h"
#include "run/plan.h"
#include "run/signals.h"
#include "run/sweep.h"
#include "run/topo_mpi.h"
#include "tpb_config.h"

/* Print the agreed error on rank 0 and return the exit code. */
static int fail(int rank, tpb_status_t st)
{
    if (rank == 0) {
        char safe[2048]; /* nothing it was given reaches the terminal as control bytes */
        tpb_err_printable(tpb_err_msg()[0] ? tpb_err_msg() : tpb_status_str(st), safe,
                          sizeof(safe));
        fprintf(stderr, "tpbal: error: %s\n", safe);
        fflush(stderr);
    }
    return tpb_status_exit_code(st);
}

/* The whole command line, for the record (malloc'd; NULL without memory). */
static char *join_args(int argc, char **argv)
{
    size_t cap = 1;
    for (int i = 0; i < argc; i++)
        cap += strlen(argv[i]) + 1;
    char *out = malloc(cap), *p = out;
    for (int i = 0; out && i < argc; i++)
        p += sprintf(p, "%s%s", i ? " " : "", argv[i]);
    if (out)
        *p = '\0';
    return out;
}

/* Rank 0's lock on --out (-1: none), given back once by whoever ends the run first: main,
 * the watchdog's thread or the signal thread. */
static atomic_int out_lock = -1;
static char made_top[1024]; /* rank 0: the topmost folder it made for --out ("": none) */

static void release_out(const tpb_options_t *o)
{
    int fd = atomic_exchange(&out_lock, -1);
    if (fd >= 0)
        tpb_outdir_unlock(o->out_dir, fd);
}

/* A file an option reads or writes is never one the run writes in --out: refused before any
 * of them is read. */
static tpb_status_t check_own_paths(const tpb_options_t *o)
{
    const char *const flags[] = {"--calibration-file", "--shards-from", "--cost-profile",
                                 "--preset"};
    const char *const paths[] = {o->calibration_file, o->shards_from,
                                 tpb_cost_profile_is_builtin(o->cost_spec) ? "" : o->cost_spec,
                                 strchr(o->preset, '/') ? o->preset : ""};
    return tpb_outdir_check_paths(o->out_dir, flags, paths, 4);
}

/* --help, --version or --print-schema: print and end. */
static int info_only(const tpb_options_t *o)
{
    return o->help || o->version || o->print_schema;
}

/* Options, preset and the backend choice, and rank 0's hold on --out (out_lock); agreed on
 * by every rank. */
static tpb_status_t setup_options(MPI_Comm world, const tpb_topo_t *topo, int argc, char **argv,
                                  tpb_options_t *o)
{
    tpb_status_t st = tpb_options_parse(o, argc, argv);
    if (st == TPB_OK && !info_only(o))
        st = check_own_paths(o);
    if (st == TPB_OK && !info_only(o))
        st = tpb_preset_load(o);
    if (st == TPB_OK && !info_only(o))
        st = tpb_options_load_cost(o);
    TPB_CHECK_RET(tpb_agree(world, st));
    if (info_only(o))
        return TPB_OK;
    if (o->shards_from[0]) /* rank 0 reads it, the others take what it read */
        TPB_CHECK_RET(
            tpb_plan_share_shards(world, topo->rank, topo->size, o->shards_from, &o->shard_plan));
    st = tpb_options_resolve(o, topo->size, o->backend ? o->backend : tpb_backend_find("auto"));
    tpb_backend_cfg_t cfg;
    tpb_options_backend_cfg(o, &cfg);
    if (st == TPB_OK)
        st = o->backend->check_config(&cfg);
    if (st == TPB_OK && topo->rank == 0 && o->notes[0])
        fprintf(stderr, "tpbal: note: %s\n", o->notes);
    int out = topo->rank == 0 && o->out_dir[0] && !o->dry_run;    /* a dry run writes nothing */
    int dry_out = topo->rank == 0 && o->out_dir[0] && o->dry_run; /* it checks --out, though */
    if (st == TPB_OK && (out || dry_out))
        st = tpb_outdir_check_targets(o->out_dir);
    if (st == TPB_OK && dry_out)
        st = tpb_outdir_check_creatable(o->out_dir);
    if (st == TPB_OK && dry_out) /* a folder another run holds: the run would be refused */
        st = tpb_outdir_check_free(o->out_dir);
    int above = 0;
    char *top = made_top;
    if (st == TPB_OK && out)
        st = tpb_outdir_prepare(o->out_dir, &above, top, sizeof(made_top));
    if (st == TPB_OK && above) /* a mistyped path is not made silently */
        fprintf(stderr, "tpbal: note: --out %s: created it and %d folder%s above it, from %s\n",
                o->out_dir, above, above == 1 ? "" : "s", top);
    int fd = -1;
    if (st == TPB_OK && out) /* one run per directory */
        st = tpb_outdir_lock(o->out_dir, &fd);
    atomic_store(&out_lock, fd);
    if (st == TPB_OK && (out || dry_out)) /* one kind of run a folder, --force to replace */
        st = tpb_outdir_check_kind(o->out_dir, o->force, o->fleet, o->repeat);
    return tpb_agree(world, st);
}

static tpb_status_t start_backend(MPI_Comm world, const tpb_topo_t *topo, const tpb_options_t *o,
                                  const tpb_clock_t *clock, tpb_device_t **dev)
{
    tpb_backend_args_t a = {.world = world,
                            .world_rank = topo->rank,
                            .world_size = topo->size,
                            .local_rank = topo->local_rank,
                            .local_size = topo->local_size,
                            .clock = clock,
                            .emulate_factor = 1.0};
    tpb_options_backend_cfg(o, &a.cfg);
    if (o->nemulate)
        a.emulate_factor = o->emulate[topo->rank];
    return tpb_agree(world, o->backend->open(&a, dev));
}

/* What a watchdog that fires needs: rank 0 writes the run's record (status "timeout")
 * while this rank is blocked in MPI, then --out is released and the process ends. */
typedef struct {
    tpb_sweep_t *_Atomic s; /* set once the sweep exists: the signal thread reads it */
    const tpb_options_t *o;
    int rank;
} fire_ctx_t;

static void on_watchdog(const char *msg, void *ctx)
{
    fire_ctx_t *f = ctx;
    tpb_err_set(TPB_ERR_TIMEOUT, "%s", msg);
    tpb_sweep_close(f->s, TPB_ERR_TIMEOUT);
    tpb_seal_fire("timeout"); /* --repeat: repeat.json too, before --out is given back */
    fprintf(stderr, "tpbal: error on rank %d: %s\n", f->rank, msg);
    fflush(stderr);
    release_out(f->o);
    _exit(tpb_status_exit_code(TPB_ERR_TIMEOUT));
}

/* A stop signal (in the signal thread): rank 0 writes the record as interrupted now, and
 * gives --out back, before a launcher's SIGKILL can come; the sweep stops at its next safe
 * point. */
static void on_stop(int sig, void *ctx)
{
    fire_ctx_t *f = ctx;
    int held = f->s ? tpb_sweep_stop(f->s) : 0; /* a fleet has no record before its end */
    tpb_seal_fire("interrupted");
    if (!held) /* else once a --budget set's completed looks are recorded: at the end */
        release_out(f->o);
}

/* The exit code of a run that ended with st: 128 + N after stop signal N. */
static int exit_code(int rank, tpb_status_t st)
{
    int code = st != TPB_OK ? fail(rank, st) : 0;
    if (st == TPB_ERR_INTERRUPTED && tpb_signal_received())
        code = 128 + tpb_signal_received();
    return code;
}

/* How a --repeat run that ended with exit code `code` ended, as repeat.json says it. */
static const char *ended_as(int code)
{
    return code >= 128                                     ? "interrupted"
           : code == tpb_status_exit_code(TPB_ERR_TIMEOUT) ? "timeout"
                                                           : "failed";
}

/* Rank 0's output: stdout with its long lines folded (record/wrap.h; whole under --wide in
 * a file or a pipe); the other ranks print nothing there but warnings, on stdout itself. */
static FILE *open_out(int rank, const tpb_options_t *o)
{
    return rank == 0 ? tpb_wrap_open(stdout, tpb_wrap_width(STDOUT_FILENO, o->wide)) : stdout;
}

static void close_out(FILE *out)
{
    if (out != stdout)
        fclose(out); /* the folded lines' last bytes; stdout stays open */
}

/* Rank 0's folder of pass `pass` of --repeat into dir (--out itself without --repeat, ""
 * without --out), made where it is missing (agreed). */
static tpb_status_t pass_dir(MPI_Comm world, int rank, const tpb_options_t *o, int pass, char *dir,
                             size_t cap)
{
    return tpb_agree(world, tpb_outdir_pass(o->out_dir, o->repeat, pass, rank == 0, dir, cap));
}

/* --fleet: measure, then rank 0 scores, prints and writes fleet.json into dir; the nodes
 * it excludes go to fp (--repeat). */
static tpb_status_t fleet_pass(MPI_Comm world, const tpb_topo_t *topo, const tpb_options_t *o,
                               tpb_device_t *dev, const char *cmdline, FILE *out, const char *dir,
                               tpb_fleet_passes_t *fp)
{
    tpb_fleet_plan_t plan = tpb_fleet_plan_of(o); /* what the fleet reads, not the options */
    tpb_fleet_data_t d = {.m = plan.shape.m,
                          .n = plan.shape.n,
                          .k = plan.shape.k,
                          .dtype = tpb_dtype_name(plan.dtype),
                          .bytes = plan.bytes};
    tpb_status_t st = tpb_fleet_measure(dev, world, topo, &plan, &d);
    int excluded = 0;
    if (st == TPB_OK) /* a stop in the last phase: nothing printed or written */
        st = tpb_signal_agree(world);
    if (st == TPB_OK && topo->rank == 0) {
        tpb_buf_t ex = TPB_BUF_INIT;
        st = tpb_fleet_report(&d, plan.threshold, cmdline, out, dir, &excluded, &ex);
        if (st == TPB_OK && o->repeat > 1)
            st = tpb_fleet_passes_add(fp, tpb_buf_str(&ex));
        if (st == TPB_OK && o->repeat > 1 && o->out_dir[0])
            st = tpb_fleet_passes_write(fp, o->out_dir, cmdline);
        tpb_buf_free(&ex);
    }
    tpb_fleet_free(&d);
    return tpb_agree(world, st);
}

/* --fleet [--repeat N]: each pass a qualification of its own, then (rank 0) the nodes over
 * the passes. */
static int run_fleet(MPI_Comm world, const tpb_topo_t *topo, const tpb_options_t *o,
                     tpb_device_t *dev, const char *cmdline)
{
    fire_ctx_t stop = {.o = o, .rank = topo->rank};
    if (topo->rank == 0)
        tpb_signals_on_stop(on_stop, &stop); /* --out's lock given back at once */
    FILE *out = open_out(topo->rank, o);
    tpb_fleet_passes_t fp;
    tpb_fleet_passes_init(&fp, o->repeat);
    tpb_status_t st = TPB_OK;
    for (int pass = 1; pass <= o->repeat && st == TPB_OK; pass++) {
        char dir[sizeof(o->out_dir) + 16];
        if (o->repeat > 1 && topo->rank == 0)
            fprintf(out, "# pass %d of %d\n", pass, o->repeat);
        st = pass_dir(world, topo->rank, o, pass, dir, sizeof(dir));
        if (st == TPB_OK)
            st = fleet_pass(world, topo, o, dev, cmdline, out, dir, &fp);
    }
    if (st == TPB_OK && o->repeat > 1 && topo->rank == 0)
        tpb_fleet_passes_print(&fp, out);
    if (st != TPB_OK)
        tpb_seal_fire(st == TPB_ERR_INTERRUPTED ? "interrupted" : "failed");
    tpb_seal_disarm(); /* the last pass said "finished" */
    tpb_fleet_passes_free(&fp);
    close_out(out);
    if (st == TPB_ERR_INTERRUPTED)
        tpb_err_set(st,
                    "--fleet interrupted by signal %d (%s): fleet.json is written at the end%s, "
                    "nothing was",
                    tpb_signal_received(), strsignal(tpb_signal_received()),
                    o->repeat > 1 ? " of each pass (the passes done are whole)" : "");
    tpb_signals_on_stop(NULL, NULL);
    tpb_dev_close(dev);
    return exit_code(topo->rank, st);
}

/* One pass of the sweep (the whole run without --repeat): measure, record, answer; rank 0
 * hands the finished record to rep. Returns the exit code. */
static int run_pass(MPI_Comm world, const tpb_topo_t *topo, const tpb_options_t *o,
                    const char *cmdline, const tpb_slurm_t *slurm, tpb_device_t *dev,
                    const tpb_clock_t *clock, FILE *out, int pass, tpb_repeat_t *rep)
{
    tpb_sweep_ctx_t ctx = {world, topo, o->backend, dev, clock, cmdline, slurm, out};
    tpb_sweep_t *s = NULL;
    tpb_plan_list_t plans;
    char dir[sizeof(o->out_dir) + 16];
    fire_ctx_t fire = {.s = NULL, .o = o, .rank = topo->rank};
    tpb_watchdog_on_fire(on_watchdog, &fire);
    if (topo->rank == 0)
        tpb_signals_on_stop(on_stop, &fire);
    if (o->repeat > 1 && topo->rank == 0) {
        fprintf(out, "# pass %d of %d\n", pass, o->repeat);
        fflush(out);
    }
    /* the options end here: the sweep reads the plans (run/plan.h) */
    tpb_status_t st = pass_dir(world, topo->rank, o, pass, dir, sizeof(dir));
    tpb_stamp(TPB_PHASE_PLAN);
    if (st == TPB_OK)
        st = tpb_agree(world, tpb_plans_build(o, topo, &plans));
    if (st == TPB_OK) {
        plans.run.out_dir = dir;
        plans.m.pass = pass; /* progress lines name it */
        st = tpb_agree(world, tpb_sweep_new(&ctx, &plans, &s));
        fire.s = s; /* a watchdog or a stop reaches the sweep (its record) from here on */
    }
    if (st == TPB_OK)
        st = tpb_sweep_init(s);
    int ran = st == TPB_OK;
    if (ran)
        st = tpb_sweep_run(s);
    if (ran && !tpb_err_agreed(st)) { /* a rank failed alone (a timed loop): others may hang */
        tpb_sweep_close(s, st);
        fprintf(stderr, "tpbal: error on rank %d: %s\n", topo->rank, tpb_err_msg());
        fflush(stderr);
        tpb_seal_fire("failed");
        release_out(o); /* the record is written: --out is free before the job ends */
        MPI_Abort(world, tpb_status_exit_code(st));
    }
    if (st == TPB_OK)
        st = tpb_sweep_finish(s);
    if (st == TPB_OK && o->repeat > 1) /* rank 0 keeps what the pass said */
        st = tpb_agree(world,
                       tpb_sweep_record(s) ? tpb_repeat_add(rep, tpb_sweep_record(s)) : TPB_OK);
    if (st != TPB_OK)
        tpb_sweep_close(s, st);
    int code = exit_code(topo->rank, st);
    if (code == 0 && tpb_sweep_check_failed(s)) {
        if (topo->rank == 0)
            fprintf(stderr, "tpbal: error: --check failed for at least one config (see the "
                            "check column)\n");
        code = tpb_status_exit_code(TPB_ERR_CHECK);
    }
    MPI_Bcast(&code, 1, MPI_INT, 0, world);
    tpb_signals_on_stop(NULL, NULL); /* before the sweep it acts on is gone */
    tpb_watchdog_on_fire(NULL, NULL);
    tpb_sweep_free(s);
    return code;
}

/* --repeat: rank 0's answer over the passes done, and DIR/repeat.json (agreed). */
static tpb_status_t repeat_answer(MPI_Comm world, int rank, const tpb_options_t *o,
                                  const tpb_repeat_t *rep, const char *cmdline, FILE *out)
{
    return tpb_agree(world, rank == 0 ? tpb_repeat_finish(rep, out, o->out_dir, cmdline) : TPB_OK);
}

static int run(MPI_Comm world, const tpb_topo_t *topo, const tpb_options_t *o, const char *cmdline,
               const tpb_slurm_t *slurm)
{
    tpb_clock_t clock = {o->inject_clock.rank == topo->rank ? o->inject_clock.us : 0.0};
    tpb_device_t *dev = NULL;
    tpb_status_t st = start_backend(world, topo, o, &clock, &dev);
    if (st != TPB_OK)
        return fail(topo->rank, st);
    if (o->fleet)
        return run_fleet(world, topo, o, dev, cmdline);
    FILE *out = open_out(topo->rank, o);
    tpb_repeat_t rep;
    tpb_repeat_init(&rep, o->repeat);
    tpb_inputs_share(topo->local_size); /* the node's ranks share its memory for inputs */
    int code = 0;
    if (o->repeat > 1) /* the earlier run's repeat.json says no more than this one's passes */
        code =
            exit_code(topo->rank, tpb_agree(world, topo->rank == 0 && o->out_dir[0]
                                                       ? tpb_repeat_write(&rep, o->out_dir, cmdline)
                                                       : TPB_OK));
    for (int pass = 1; pass <= o->repeat && code == 0; pass++) {
        code = run_pass(world, topo, o, cmdline, slurm, dev, &clock, out, pass, &rep);
        if (code == 0 && o->repeat > 1 && pass < o->repeat) { /* what is known so far */
            st = tpb_agree(world, topo->rank == 0 && o->out_dir[0]
                                      ? tpb_repeat_write(&rep, o->out_dir, cmdline)
                                      : TPB_OK);
            if (st == TPB_OK)
                st = tpb_signal_agree(world); /* a stop between passes: no next one */
            code = exit_code(topo->rank, st);
        }
    }
    if (code == 0 && o->repeat > 1)
        code = exit_code(topo->rank, repeat_answer(world, topo->rank, o, &rep, cmdline, out));
    else if (o->repeat > 1) /* the passes done, and how the run ended */
        tpb_seal_fire(ended_as(code));
    tpb_repeat_free(&rep);
    tpb_inputs_free(); /* the seeded matrices kept for the configs' shards */
    tpb_dev_close(dev);
    close_out(out);
    return code;
}

static const char *env(const char *name)
{
    return getenv(name);
}

/* Launch mistakes seen before MPI_Init: srun with several tasks but no PMI for MPI (every
 * task would be a singleton, or Open MPI aborts inside MPI_Init). Task 0 says it once. */
static void check_launch(void)
{
    int tasks = 0;
    if (!tpb_slurm_missing_pmi(env, &tasks))
        return;
    const char *id = getenv("SLURM_PROCID");
    if (id && strcmp(id, "0") == 0)
        fprintf(stderr,
                "tpbal: error: srun started %d tasks without a PMI for MPI, so each would run "
                "alone: launch with srun --mpi=pmix (srun --mpi=list shows what this Slurm "
                "has), or with mpirun inside the allocation\n",
                tasks);
    exit(tpb_status_exit_code(TPB_ERR_INVALID));
}

/* After MPI_Init: Slurm started more tasks than MPI sees (a PMI that does not match MPI). */
static tpb_status_t check_world(const tpb_slurm_t *sl, int world)
{
    if (!tpb_slurm_world_mismatch(sl, world) || getenv("OMPI_COMM_WORLD_SIZE"))
        return TPB_OK;
    return tpb_err_set(TPB_ERR_INVALID,
                       "Slurm started %d tasks but MPI sees a world of 1: each task runs alone; "
                       "launch with srun --mpi=pmix (or the PMI your MPI was built with)",
                       sl->ntasks);
}

int main(int argc, char **argv)
{
    check_launch();
    tpb_signals_block();             /* before MPI starts threads: they inherit the mask */
    int threads = MPI_THREAD_SINGLE; /* the watchdog's thread makes no MPI call */
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &threads);
    tpb_stamp(TPB_PHASE_START); /* the watchdog's first stamp (base/stamp.h) */
    if (tpb_signals_start() != TPB_OK) {
        fprintf(stderr, "tpbal: error: %s\n", tpb_err_msg());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Comm world = MPI_COMM_WORLD;
    tpb_topo_t topo;
    tpb_options_t o;
    tpb_options_init(&o);
    tpb_status_t st = tpb_topo_discover(world, &topo);
    if (st != TPB_OK) {
        fprintf(stderr, "tpbal: error: %s\n", tpb_err_msg());
        MPI_Abort(world, 1);
    }
    tpb_err_context(topo.rank, topo.host);
    int code;
    tpb_slurm_t slurm;
    st = tpb_slurm_from_env(&slurm, env);
    if (st == TPB_OK)
        st = check_world(&slurm, topo.size);
    if (st != TPB_OK) { /* singletons: only Slurm's task 0 speaks */
        const char *id = getenv("SLURM_PROCID");
        if (id && strcmp(id, "0") == 0)
            fprintf(stderr, "tpbal: error: %s\n", tpb_err_msg());
        code = tpb_status_exit_code(st);
    } else if ((st = setup_options(world, &topo, argc, argv, &o)) != TPB_OK) {
        code = fail(topo.rank, st);
    } else if (info_only(&o)) {
        if (topo.rank == 0)
            o.help      ? tpb_options_usage(stdout)
            : o.version ? tpb_options_version(stdout)
                        : tpb_schema_print(stdout);
        code = 0;
    } else if (o.dry_run) {
        FILE *out = topo.rank == 0 ? open_out(0, &o) : NULL;
        st = tpb_agree(world, tpb_dry_run(world, &o, &topo, out));
        if (out)
            close_out(out);
        code = st == TPB_OK ? 0 : fail(topo.rank, st);
    } else {
        char *cmdline = join_args(argc, argv);
        code = run(world, &topo, &o, cmdline ? cmdline : "?", &slurm);
        free(cmdline);
    }
    tpb_signals_on_stop(NULL, NULL);
    release_out(&o);              /* the run is over: the next may use --out */
    if (code != 0 && made_top[0]) /* a run that failed before it wrote: no folders left */
        tpb_outdir_unmake(o.out_dir, made_top);
    tpb_slurm_free(&slurm);
    tpb_options_free(&o);
    tpb_topo_free(&topo);
    MPI_Finalize();
    return code;
}
