/*
 * gather.c - the gather-and-write path at scale, with synthetic marks: WORLD virtual ranks
 * x ITERS iterations (default 4096 x 1000) in TP groups spread over the real MPI ranks,
 * which stand in for the groups' first ranks. Two ways, as tpbal's --gather:
 *   parts: each group analysed where it is (base/timeline_part.h; its marks made when its
 *          turn comes, so no MPI rank holds more than one group's), then tpb_gather_parts
 *          (run/gather.h): summaries reduced, records and the picked groups' marks gathered;
 *   full:  every mark gathered to rank 0 (MPI_Gatherv, counts in groups), analysed there.
 * Then rank 0 writes what tpbal writes for a config: its results.jsonl record, ranks.csv
 * rows and the Chrome trace (parts: the picked groups', TRACE_RANKS ranks; full: every
 * rank, --trace-iters auto). Prints each stage's time, the time a run waits for and rank
 * 0's peak memory.
 * Usage: mpirun -np 2 bench/gather [WORLD [ITERS [TP [OUTDIR|- [TRACE_RANKS [parts|full
 *        [CONFIGS]]]]]]]
 * (results-bench.jsonl, ranks-bench.csv and trace-bench.json are left in OUTDIR; '-', the
 * default: written to a new mkdtemp folder, removed at the end; TRACE_RANKS default 256).
 * With CONFIGS, a sweep of that many configs goes through tpbal's own record instead
 * (record/record.h: results.jsonl, results.csv, ranks.csv appended one config at a time,
 * trace-NNN.json each, the summary and the rewrite at the end), each config gathered and
 * analysed as above: it prints the sweep's "a run waits", its first config's, and rank 0's
 * peak memory.
 */
#include <dirent.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "base/clock.h"
#include "record/outfile.h"
#include "record/record.h"
#include "record/report.h"
#include "record/trace.h"
#include "run/gather.h"
#include "run/wire.h"

enum { NB = 5 };

static double now_s(void)
{
    return tpb_clock_now_us(NULL) * 1e-6;
}

/* Marks of virtual rank v: 1 ms compute (+ a straggler pattern), 0.2 ms collective. */
static void synth(tpb_mark_t *m, int v, int iters, int tp)
{
    for (int i = 0; i < iters; i++) {
        double base = 2000.0 * i, comp = 1000.0 + 13.0 * ((v * 7 + i) % 17);
        if (v % tp == tp - 1 && i % 10 == 9)
            comp += 800.0;
        if (v == 77 % (tp * 8) && i % 50 == 49) /* a stall in one group: spikes */
            comp += 2000.0;
        m[i].c0 = base;
        m[i].c1 = base + comp;
        m[i].x1 = base + 1800.0 + 200.0 + (comp > 1800.0 ? comp - 1800.0 : 0.0);
    }
}

typedef struct {
    int world, iters, tp, trace_ranks, parts;
    const char *dir;
    int rank, size, g0, ng; /* this MPI rank's groups [g0, g0 + ng) */
    tpb_mark_t *gbuf;       /* one group's marks */
} bench_t;

static const tpb_mark_t *group_marks(void *ctx, int j)
{
    bench_t *b = ctx;
    for (int q = 0; q < b->tp; q++)
        synth(b->gbuf + (size_t)q * b->iters, (b->g0 + j) * b->tp + q, b->iters, b->tp);
    return b->gbuf;
}

static void fail(const char *what)
{
    fprintf(stderr, "gather: %s: %s\n", what, tpb_err_msg());
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* The result as tpbal records a config, around the analysis in res->ranks etc. */
static void describe(const bench_t *b, tpb_result_t *res, tpb_rank_info_t *info)
{
    res->backend = "host";
    res->world = b->world;
    res->tp = b->tp;
    res->iters = b->iters;
    res->m = res->n = res->k = 8192;
    res->info = info;
    res->speed_source = TPB_SPEEDS_NONE;
    res->coll = TPB_COLL_ALLREDUCE;
    res->busbw_factor = 2.0 * (b->tp - 1) / b->tp;
    res->coll_bytes = 8192.0 * 8192 * tpb_dtype_out_size(res->dtype);
    res->check = TPB_CHECK_OFF;
    for (int v = 0; v < b->world; v++)
        info[v] = (tpb_rank_info_t){.shard = 8192 / b->tp,
                                    .speed = NAN,
                                    .fraction = 1.0 / b->tp,
                                    .flop = 1e9,
                                    .mem = 1e8,
                                    .max_err = NAN,
                                    .speed_spread = NAN};
}

/* The config's result from what the gather brought to rank 0 (the analysis done). */
static void result_of(const bench_t *b, const tpb_gathered_t *g, tpb_result_t *res,
                      tpb_rank_info_t *info)
{
    memset(res, 0, sizeof(*res));
    describe(b, res, info);
    tpb_gathered_into(g, res);
}

/* Rank 0: the record, the ranks' rows and the trace; returns the seconds of each. */
static void write_out(const bench_t *b, tpb_result_t *res, const tpb_mark_t *marks,
                      double *t_format, double *t_trace, double *mib, int *kept)
{
    tpb_topo_t topo = {0, b->world, 0, 8, "node000", NULL, NULL, 0};
    topo.hosts = calloc((size_t)b->world, sizeof(*topo.hosts));
    topo.host_index = calloc((size_t)b->world, sizeof(int));
    const char **names = malloc((size_t)b->world * sizeof(char *));
    for (int v = 0; v < b->world; v++) {
        snprintf(topo.hosts[v], TPB_HOST_LEN, "node%03d", v / 8);
        names[v] = topo.hosts[v];
    }
    topo.nhosts = tpb_topo_index_hosts(topo.hosts, b->world, topo.host_index);
    double t0 = now_s();
    tpb_result_derive(res, NAN);
    tpb_buf_t j = TPB_BUF_INIT, c = TPB_BUF_INIT;
    tpb_report_json(&j, res);
    tpb_report_ranks_rows(&c, res, names, names);
    if ((tpb_outfile_replace(b->dir, "results-bench.jsonl", j.data, j.len) != TPB_OK ||
         tpb_outfile_replace(b->dir, "ranks-bench.csv", c.data, c.len) != TPB_OK))
        fail("results");
    *t_format = now_s() - t0;
    t0 = now_s();
    /* the iterations a trace keeps: --trace-iters auto over the ranks it holds */
    unsigned char *keep = malloc((size_t)b->iters);
    *kept = tpb_timeline_trace_budget(res->steps, b->iters, tpb_trace_rows(res), TPB_TRACE_BUDGET,
                                      keep);
    tpb_outstream_t os;
    if (tpb_outstream_open(&os, b->dir, "trace-bench.json") != TPB_OK ||
        tpb_trace_write(os.f, res, marks, res->steps, 0.0, &topo, keep) != TPB_OK)
        fail("trace");
    *mib = ftell(os.f) / 1048576.0;
    if (tpb_outstream_commit(&os) != TPB_OK)
        fail("trace");
    *t_trace = now_s() - t0;
    free(keep);
    tpb_buf_free(&j);
    tpb_buf_free(&c);
    free(names);
    free(topo.hosts);
    free(topo.host_index);
}

/* The sweep's record on rank 0 (CONFIGS): tpbal's own, over the bench's world. */
typedef struct {
    tpb_topo_t topo;
    tpb_device_info_t *devices;
    tpb_clock_sample_t *sync;
    tpb_record_t rec;
    FILE *table;
} sweep_rec_t;

static void sweep_open(const bench_t *b, sweep_rec_t *w)
{
    w->topo = (tpb_topo_t){0, b->world, 0, 8, "node000", NULL, NULL, 0};
    w->topo.hosts = calloc((size_t)b->world, sizeof(*w->topo.hosts));
    w->topo.host_index = calloc((size_t)b->world, sizeof(int));
    w->devices = calloc((size_t)b->world, sizeof(*w->devices));
    w->sync = calloc((size_t)b->world, sizeof(*w->sync));
    w->table = fopen("/dev/null", "w");
    if (!w->topo.hosts || !w->topo.host_index || !w->devices || !w->sync || !w->table)
        fail("memory for the sweep's record");
    for (int v = 0; v < b->world; v++) {
        snprintf(w->topo.hosts[v], TPB_HOST_LEN, "node%03d", v / 8);
        snprintf(w->devices[v].name, sizeof(w->devices[v].name), "synthetic");
        w->devices[v].index = -1;
    }
    w->topo.nhosts = tpb_topo_index_hosts(w->topo.hosts, b->world, w->topo.host_index);
    tpb_run_info_t run = {.command_line = "bench/gather",
                          .backend = "host",
                          .mpi_version = "",
                          .topo = &w->topo,
                          .devices = w->devices,
                          .iters = b->iters,
                          .timeline = 1,
                          .clock_exchanges = 50,
                          .out_dir = b->dir,
                          .table = w->table};
    tpb_record_init(&w->rec, &run, w->sync, w->sync);
    if (tpb_record_begin(&w->rec) != TPB_OK)
        fail("the sweep's record");
}

static void sweep_close(sweep_rec_t *w, double *t_summary)
{
    double t0 = now_s();
    tpb_record_summary(&w->rec);
    *t_summary = now_s() - t0;
    if (tpb_record_write(&w->rec, TPB_RUN_FINISHED) != TPB_OK)
        fail("the sweep's record at its end");
    tpb_record_free(&w->rec);
    fclose(w->table);
    free(w->topo.hosts);
    free(w->topo.host_index);
    free(w->devices);
    free(w->sync);
}

/* parts: every local group analysed as its first rank would, then tpb_gather_parts. */
static void run_parts(bench_t *b, tpb_gathered_t *out, double *t_one, double *t_local,
                      double *t_gather)
{
    size_t bytes = tpb_part_record_bytes(b->tp, NB);
    char *rec = malloc(((size_t)b->ng + 1) * bytes);
    tpb_iter_sum_t *sums = malloc((size_t)b->iters * sizeof(*sums));
    tpb_iter_sum_t *one = malloc((size_t)b->iters * sizeof(*one));
    double unc[b->tp], work[b->tp], t0 = now_s();
    for (int q = 0; q < b->tp; q++) {
        unc[q] = 0.0;
        work[q] = 1e9;
    }
    *t_one = 0.0;
    tpb_iter_sum_init(sums, b->iters);
    for (int j = 0; j < b->ng; j++) {
        double t = now_s();
        const tpb_mark_t *gm = group_marks(b, j);
        if (tpb_timeline_part(gm, 1, b->tp, b->iters, b->g0 + j, unc, work, NB,
                              rec + (size_t)j * bytes, one) != TPB_OK)
            fail("analysis");
        tpb_iter_sum_merge(sums, one, b->iters);
        t = now_s() - t;
        *t_one = t > *t_one ? t : *t_one;
    }
    double mine[2] = {now_s() - t0, *t_one}, most[2];
    /* the slowest stand-in's, which the others wait for here (not in a run: each group's
     * first rank analyses its own group) */
    MPI_Allreduce(mine, most, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    *t_local = most[0];
    *t_one = most[1];
    tpb_gather_spec_t spec = {b->world, b->tp, b->iters, NB, (b->trace_ranks + b->tp - 1) / b->tp};
    t0 = now_s();
    if (tpb_gather_parts(MPI_COMM_WORLD, &spec, b->ng, b->g0, rec, sums, group_marks, b, out) !=
        TPB_OK)
        fail("gather");
    *t_gather = now_s() - t0;
    free(rec);
    free(sums);
    free(one);
}

/* full: every mark to rank 0 (counts in groups), analysed there as tpbal's record does. */
static void run_full(bench_t *b, tpb_gathered_t *out, double *t_gather, double *t_analyse)
{
    size_t per = (size_t)b->tp * b->iters, groups = (size_t)(b->world / b->tp);
    tpb_mark_t *local = malloc(((size_t)b->ng + 1) * per * sizeof(*local));
    for (int j = 0; j < b->ng; j++)
        memcpy(local + j * per, group_marks(b, j), per * sizeof(*local));
    tpb_mark_t *all = b->rank == 0 ? malloc(groups * per * sizeof(*all)) : NULL;
    int have[2] = {b->ng, b->g0}, *cnt = malloc(4 * (size_t)b->size * sizeof(int));
    MPI_Datatype mark, row, grp;
    tpb_wire_type(TPB_WIRE_MARK, &mark);
    MPI_Type_contiguous(b->iters, mark, &row);
    MPI_Type_contiguous(b->tp, row, &grp);
    MPI_Type_commit(&grp);
    MPI_Allgather(have, 2, MPI_INT, cnt + 2 * b->size, 2, MPI_INT, MPI_COMM_WORLD);
    tpb_gather_counts(cnt + 2 * b->size, b->size, NULL, 0, cnt, cnt + b->size, NULL, NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now_s();
    MPI_Gatherv(local, b->ng, grp, all, cnt, cnt + b->size, grp, 0, MPI_COMM_WORLD);
    *t_gather = now_s() - t0;
    if (b->rank == 0) {
        t0 = now_s();
        out->ranks = malloc((size_t)b->world * sizeof(*out->ranks));
        out->steps = malloc((size_t)b->iters * sizeof(double));
        out->nb = NB;
        out->slow = malloc(NB * groups * sizeof(*out->slow));
        out->dev = malloc(NB * (size_t)b->world * sizeof(double));
        double *work = malloc((size_t)b->world * sizeof(double));
        for (int v = 0; v < b->world; v++)
            work[v] = 1e9;
        if (tpb_timeline_analyse(all, b->world, b->tp, b->iters, out->ranks, &out->cfg) != TPB_OK ||
            tpb_whatif_replay(all, b->world, b->tp, b->iters, out->cfg.straggler_rank,
                              out->cfg.step_med, &out->whatif) != TPB_OK)
            fail("analysis");
        out->cfg.causality_violations =
            tpb_timeline_violations(all, b->world, b->tp, b->iters, NULL);
        tpb_timeline_steps(all, b->world, b->tp, b->iters, out->steps);
        tpb_detect_blocks(all, work, b->world, b->tp, b->iters, NB, out->slow, out->dev);
        *t_analyse = now_s() - t0;
        out->marks = all;
        free(work);
    }
    MPI_Type_free(&mark);
    MPI_Type_free(&row);
    MPI_Type_free(&grp);
    free(local);
    free(cnt);
}

/* The mkdtemp folder of a sweep and the files the record wrote in it (all this bench's). */
static void remove_scratch(const char *dir)
{
    DIR *d = opendir(dir);
    for (struct dirent *e = d ? readdir(d) : NULL; e; e = readdir(d))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            unlinkat(dirfd(d), e->d_name, 0);
    if (d)
        closedir(d);
    if (rmdir(dir) != 0)
        fprintf(stderr, "gather: could not remove %s\n", dir);
}

/* CONFIGS: that many configs gathered and analysed, each through tpbal's record (appended),
 * then the summary and the record's end; rank 0 prints the sweep's figures. */
static void run_sweep(bench_t *b, int configs)
{
    sweep_rec_t w;
    double t_first = 0, t_all = 0, t_end = 0, t_rec_most = 0;
    double t_start = now_s();
    if (b->rank == 0)
        sweep_open(b, &w);
    t_start = now_s() - t_start;
    for (int c = 0; c < configs; c++) {
        tpb_gathered_t g;
        memset(&g, 0, sizeof(g));
        double t_one = 0, t_local = 0, t_gather = 0, t_analyse = 0;
        if (b->parts)
            run_parts(b, &g, &t_one, &t_local, &t_gather);
        else
            run_full(b, &g, &t_gather, &t_analyse);
        if (b->rank != 0)
            continue;
        double t0 = now_s();
        tpb_result_t res;
        tpb_rank_info_t *info = calloc((size_t)b->world, sizeof(*info));
        result_of(b, &g, &res, info);
        res.id = c;
        if (tpb_record_config(&w.rec, &res, g.marks) != TPB_OK)
            fail("a config's record");
        double t_rec = now_s() - t0, wait = (b->parts ? t_one : t_analyse) + t_gather + t_rec;
        t_rec_most = t_rec > t_rec_most ? t_rec : t_rec_most;
        t_first = c == 0 ? wait : t_first;
        t_all += wait;
        free(info);
        tpb_gathered_free(&g);
    }
    if (b->rank != 0)
        return;
    double t0 = now_s();
    double t_summary = 0;
    sweep_close(&w, &t_summary);
    t_end = now_s() - t0;
    t_all += t_start + t_end;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("gather %s: %d configs of %d virtual ranks x %d iterations on %d MPI ranks, tp %d\n",
           b->parts ? "parts" : "full", configs, b->world, b->iters, b->size, b->tp);
    printf("  the start           %9.3f s  (the run line: results.jsonl, results.csv and "
           "ranks.csv written whole)\n",
           t_start);
    printf("  the first config    %9.3f s  (a run waits: analysis, gather, its record)\n", t_first);
    printf("  the slowest record  %9.3f s  (a config's records appended and its trace)\n",
           t_rec_most);
    printf("  the end             %9.3f s  (the summary and answer %.3f s, results.jsonl "
           "rewritten once)\n",
           t_end, t_summary);
    printf("  %-6d configs       %9.3f s  (a run waits: the start, every config, the end; "
           "%.3f s a config)\n",
           configs, t_all, t_all / configs);
    printf("  peak RSS rank 0     %9.1f MiB (goal < 1024)\n", ru.ru_maxrss / 1024.0);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bench_t b = {.world = argc > 1 ? atoi(argv[1]) : 4096,
                 .iters = argc > 2 ? atoi(argv[2]) : 1000,
                 .tp = argc > 3 ? atoi(argv[3]) : 8,
                 .dir = argc > 4 ? argv[4] : "-",
                 .trace_ranks = argc > 5 ? atoi(argv[5]) : 256,
                 .parts = argc > 6 ? strcmp(argv[6], "full") != 0 : 1};
    int configs = argc > 7 ? atoi(argv[7]) : 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &b.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &b.size);
    int groups = b.tp > 0 ? b.world / b.tp : 0;
    if (b.tp < 1 || b.world % b.tp || groups < b.size || b.iters < 1 || b.trace_ranks < 1 ||
        configs < 0) {
        if (b.rank == 0)
            fprintf(stderr, "gather: WORLD must be a multiple of TP with a group per MPI rank "
                            "at least; ITERS and TRACE_RANKS at least 1, CONFIGS at least 0\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char tmp[] = "/tmp/tpbal-gather-XXXXXX";
    int scratch = strcmp(b.dir, "-") == 0;
    if (scratch && b.rank == 0 && !(b.dir = mkdtemp(tmp)))
        fail("mkdtemp");
    b.g0 = (int)((long)groups * b.rank / b.size);
    b.ng = (int)((long)groups * (b.rank + 1) / b.size) - b.g0;
    b.gbuf = malloc((size_t)b.tp * b.iters * sizeof(*b.gbuf));
    if (configs > 0) {
        run_sweep(&b, configs);
        if (scratch && b.rank == 0)
            remove_scratch(b.dir);
        free(b.gbuf);
        MPI_Finalize();
        return 0;
    }
    tpb_gathered_t g;
    memset(&g, 0, sizeof(g));
    double t_one = 0, t_local = 0, t_gather = 0, t_analyse = 0, t_format = 0, t_trace = 0, mib = 0;
    int kept = 0;
    if (b.parts)
        run_parts(&b, &g, &t_one, &t_local, &t_gather);
    else
        run_full(&b, &g, &t_gather, &t_analyse);
    if (b.rank == 0) {
        tpb_result_t res;
        tpb_rank_info_t *info = calloc((size_t)b.world, sizeof(*info));
        result_of(&b, &g, &res, info);
        write_out(&b, &res, g.marks, &t_format, &t_trace, &mib, &kept);
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        printf("gather %s: %d virtual ranks x %d iterations on %d MPI ranks, tp %d\n",
               b.parts ? "parts" : "full", b.world, b.iters, b.size, b.tp);
        printf("  marks of all ranks  %9.1f MiB (%.3g doubles)\n",
               b.world * (double)b.iters * sizeof(tpb_mark_t) / 1048576.0,
               3.0 * b.world * (double)b.iters);
        if (b.parts) {
            printf("  a group's analysis  %9.3f s  (the slowest group; in a run each group's "
                   "first rank does its own)\n",
                   t_one);
            printf("  %6d groups       %9.3f s  (here: the slowest stand-in's share, serially)\n",
                   groups, t_local);
            printf("  reduce + gathers    %9.3f s  (with rank 0's finish, picks and what-if; %d "
                   "groups' marks kept)\n",
                   t_gather, g.ngroups);
        } else {
            printf("  MPI_Gatherv         %9.3f s\n", t_gather);
            printf("  analysis + what-if  %9.3f s\n", t_analyse);
        }
        printf("  jsonl + ranks.csv   %9.3f s\n", t_format);
        printf("  trace file          %9.3f s  (%.1f MiB, %d ranks x %d of %d iterations)\n",
               t_trace, mib, tpb_trace_rows(&res), kept, b.iters);
        double wait = (b.parts ? t_one : t_analyse) + t_gather + t_format + t_trace;
        printf("  a run waits         %9.3f s  (goal < 5 s; straggler %d, %d spikes, S %.3f)\n",
               wait, g.cfg.straggler_rank, g.cfg.nspikes, g.whatif.slowdown);
        printf("  peak RSS rank 0     %9.1f MiB (goal < 1024)\n", ru.ru_maxrss / 1024.0);
        fflush(stdout);
        if (scratch) {
            const char *f[] = {"results-bench.jsonl", "ranks-bench.csv", "trace-bench.json"};
            char path[64];
            for (int i = 0; i < 3; i++) {
                snprintf(path, sizeof(path), "%s/%s", b.dir, f[i]);
                unlink(path);
            }
            rmdir(b.dir);
        }
        free(info);
        tpb_gathered_free(&g);
    }
    free(b.gbuf);
    MPI_Finalize();
    return 0;
}
