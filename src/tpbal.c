/*
 * tpbal.c - the program: parse, agree, pick the backend, sweep, report.
 * Only main decides how to exit; every rank exits with the same code.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/backend.h"
#include "backend/mpi_watch.h"
#include "base/slurm.h"
#include "cli/preset.h"
#include "record/outfile.h"
#include "run/agree.h"
#include "run/dryrun.h"
#include "run/signals.h"
#include "run/sweep.h"
#include "run/topology.h"
#include "tpb_config.h"

/* Print the agreed error on rank 0 and return the exit code. */
static int fail(int rank, tpb_status_t st)
{
    if (rank == 0) {
        fprintf(stderr, "tpbal: error: %s\n",
                tpb_err_msg()[0] ? tpb_err_msg() : tpb_status_str(st));
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

static void print_version(void)
{
    printf("tpbal %s\nbackends built: host%s\n", PACKAGE_VERSION,
           tpb_backend_cuda.built ? ", cuda" : "");
    if (tpb_backend_cuda.built)
        printf("CUDA devices visible: %d\n", tpb_backend_cuda.device_count());
}

/* Options, preset and the backend choice, and rank 0's hold on --out (its lock in
 * *lock_fd); agreed on by every rank. */
static tpb_status_t setup_options(MPI_Comm world, const tpb_topo_t *topo, int argc, char **argv,
                                  tpb_options_t *o, const tpb_backend_ops_t **ops, int *lock_fd)
{
    tpb_status_t st = tpb_options_parse(o, argc, argv);
    if (st == TPB_OK && !o->help && !o->version)
        st = tpb_preset_load(o);
    if (st == TPB_OK && !o->help && !o->version && o->shards_from[0])
        st = tpb_shardplan_load(o->shards_from, &o->shard_plan);
    if (st == TPB_OK && !o->help && !o->version)
        st = tpb_options_load_cost(o);
    TPB_CHECK_RET(tpb_agree(world, st));
    if (o->help || o->version)
        return TPB_OK;
    *ops = tpb_backend_select(o->backend);
    st = tpb_options_resolve(o, topo->size, (*ops)->kind, &(*ops)->defaults);
    tpb_backend_cfg_t cfg;
    tpb_options_backend_cfg(o, &cfg);
    if (st == TPB_OK)
        st = (*ops)->check_config(&cfg);
    int out = topo->rank == 0 && o->out_dir[0] && !o->dry_run; /* a dry run writes nothing */
    if (st == TPB_OK && out)
        st = tpb_outdir_prepare(o->out_dir);
    if (st == TPB_OK && out) /* one run per directory */
        st = tpb_outdir_lock(o->out_dir, lock_fd);
    if (st == TPB_OK && out && !o->force && tpb_outdir_has_results(o->out_dir))
        st = tpb_err_set(TPB_ERR_IO,
                         "--out %s holds the results of an earlier run: use a new directory, or "
                         "add --force to replace them once this run has its first config",
                         o->out_dir);
    return tpb_agree(world, st);
}

static tpb_status_t start_backend(MPI_Comm world, const tpb_topo_t *topo, const tpb_options_t *o,
                                  const tpb_backend_ops_t *ops, const tpb_clock_t *clock,
                                  tpb_backend_t **be)
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
    return tpb_agree(world, ops->init(&a, be));
}

/* What a watchdog that fires needs: rank 0 writes the run's record (status "timeout")
 * while this rank is blocked in MPI, then --out is released and the process ends. */
typedef struct {
    tpb_sweep_t *s;
    const tpb_options_t *o;
    int *lock_fd;
    int rank;
} fire_ctx_t;

static void on_watchdog(const char *msg, void *ctx)
{
    fire_ctx_t *f = ctx;
    tpb_err_set(TPB_ERR_TIMEOUT, "%s", msg);
    tpb_sweep_close(f->s, TPB_ERR_TIMEOUT);
    fprintf(stderr, "tpbal: error on rank %d: %s\n", f->rank, msg);
    fflush(stderr);
    if (*f->lock_fd >= 0)
        tpb_outdir_unlock(f->o->out_dir, *f->lock_fd);
    _exit(tpb_status_exit_code(TPB_ERR_TIMEOUT));
}

static int run(MPI_Comm world, const tpb_topo_t *topo, const tpb_options_t *o,
               const tpb_backend_ops_t *ops, const char *cmdline, const tpb_slurm_t *slurm,
               int *lock_fd)
{
    tpb_clock_t clock = {o->inject_clock.rank == topo->rank ? o->inject_clock.us : 0.0};
    tpb_backend_t *be = NULL;
    tpb_status_t st = start_backend(world, topo, o, ops, &clock, &be);
    if (st != TPB_OK)
        return fail(topo->rank, st);
    tpb_sweep_t s;
    memset(&s, 0, sizeof(s));
    s.world = world;
    s.o = o;
    s.ops = ops;
    s.be = be;
    s.topo = topo;
    s.clock = &clock;
    s.command_line = cmdline;
    s.slurm = slurm;
    s.out = stdout;
    fire_ctx_t fire = {.s = &s, .o = o, .lock_fd = lock_fd, .rank = topo->rank};
    tpb_watchdog_on_fire(on_watchdog, &fire);
    st = tpb_sweep_init(&s);
    if (st == TPB_OK)
        st = tpb_sweep_run(&s);
    if (s.fatal) { /* a rank failed inside a timed loop: the others may be stuck in it */
        tpb_sweep_close(&s, st);
        fprintf(stderr, "tpbal: error on rank %d: %s\n", topo->rank, tpb_err_msg());
        fflush(stderr);
        if (*lock_fd >= 0) { /* the record is written: --out is free before the job ends */
            tpb_outdir_unlock(o->out_dir, *lock_fd);
            *lock_fd = -1;
        }
        MPI_Abort(world, tpb_status_exit_code(st));
    }
    if (st == TPB_OK)
        st = tpb_sweep_finish(&s);
    if (st != TPB_OK)
        tpb_sweep_close(&s, st);
    int code = st != TPB_OK ? fail(topo->rank, st) : 0;
    if (st == TPB_ERR_INTERRUPTED && tpb_signal_received())
        code = 128 + tpb_signal_received();
    if (code == 0 && s.check_failed) {
        if (topo->rank == 0)
            fprintf(stderr, "tpbal: error: --check failed for at least one config (see the "
                            "check column)\n");
        code = tpb_status_exit_code(TPB_ERR_CHECK);
    }
    MPI_Bcast(&code, 1, MPI_INT, 0, world);
    tpb_sweep_free(&s);
    ops->finalize(be);
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
    int threads = MPI_THREAD_SINGLE; /* the watchdog's thread makes no MPI call */
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &threads);
    tpb_signals_install();
    MPI_Comm world = MPI_COMM_WORLD;
    tpb_topo_t topo;
    tpb_options_t o;
    tpb_options_init(&o);
    tpb_status_t st = tpb_topology_discover(world, &topo);
    if (st != TPB_OK) {
        fprintf(stderr, "tpbal: error: %s\n", tpb_err_msg());
        MPI_Abort(world, 1);
    }
    tpb_err_context(topo.rank, topo.host);
    const tpb_backend_ops_t *ops = NULL;
    int code, lock_fd = -1;
    tpb_slurm_t slurm;
    st = tpb_slurm_from_env(&slurm, env);
    if (st == TPB_OK)
        st = check_world(&slurm, topo.size);
    if (st != TPB_OK) { /* singletons: only Slurm's task 0 speaks */
        const char *id = getenv("SLURM_PROCID");
        if (id && strcmp(id, "0") == 0)
            fprintf(stderr, "tpbal: error: %s\n", tpb_err_msg());
        code = tpb_status_exit_code(st);
    } else if ((st = setup_options(world, &topo, argc, argv, &o, &ops, &lock_fd)) != TPB_OK) {
        code = fail(topo.rank, st);
    } else if (o.help || o.version) {
        if (topo.rank == 0)
            o.help ? tpb_options_usage(stdout) : print_version();
        code = 0;
    } else if (o.dry_run) {
        st = tpb_agree(world, tpb_dry_run(&o, &topo, topo.rank == 0 ? stdout : NULL));
        code = st == TPB_OK ? 0 : fail(topo.rank, st);
    } else {
        char *cmdline = join_args(argc, argv);
        code = run(world, &topo, &o, ops, cmdline ? cmdline : "?", &slurm, &lock_fd);
        free(cmdline);
    }
    if (lock_fd >= 0) /* the run is over: the next may use --out */
        tpb_outdir_unlock(o.out_dir, lock_fd);
    tpb_slurm_free(&slurm);
    tpb_options_free(&o);
    tpb_topo_free(&topo);
    MPI_Finalize();
    return code;
}
