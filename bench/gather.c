/*
 * gather.c - the gather-and-write path at scale, with synthetic records:
 * WORLD virtual ranks x ITERS iterations (default 4096 x 1000) are spread
 * over the real MPI ranks, gathered to rank 0 with MPI_Gatherv, then
 * analysed and written as tpbal writes a config (results.jsonl record,
 * ranks.csv rows, the Chrome trace). Prints the time of each stage and the
 * peak memory of rank 0.
 * Usage: mpirun -np 2 bench/gather [WORLD [ITERS [TP [OUTDIR|- [TRACE_ITERS|all]]]]]
 * ('-': no trace file; TRACE_ITERS as tpbal's --trace-iters, default auto)
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "base/clock.h"
#include "record/outfile.h"
#include "record/record.h"
#include "record/report.h"
#include "record/trace.h"

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
        m[i].c0 = base;
        m[i].c1 = base + comp;
        m[i].x1 = base + 1800.0 + 200.0;
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int world = argc > 1 ? atoi(argv[1]) : 4096, iters = argc > 2 ? atoi(argv[2]) : 1000;
    int tp = argc > 3 ? atoi(argv[3]) : 8;
    const char *dir = argc > 4 ? argv[4] : "/tmp/tpbal-gather-bench";
    int win = argc > 5 ? (strcmp(argv[5], "all") == 0 ? -1 : atoi(argv[5])) : 0;
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (world % size || world % tp) {
        if (rank == 0)
            fprintf(stderr, "gather: WORLD must be a multiple of the ranks and of TP\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int per = world / size;
    size_t mine = (size_t)per * iters;
    tpb_mark_t *local = malloc(mine * sizeof(*local));
    for (int v = 0; v < per; v++)
        synth(local + (size_t)v * iters, rank * per + v, iters, tp);
    tpb_mark_t *all = rank == 0 ? malloc((size_t)world * iters * sizeof(*all)) : NULL;
    int counts[size], displs[size];
    for (int r = 0; r < size; r++) {
        counts[r] = (int)(mine * 3);
        displs[r] = (int)(r * mine * 3);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now_s();
    MPI_Gatherv(local, (int)(mine * 3), MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, 0,
                MPI_COMM_WORLD);
    double t_gather = now_s() - t0;
    if (rank == 0) {
        tpb_rank_stats_t *rs = calloc((size_t)world, sizeof(*rs));
        tpb_rank_info_t *info = calloc((size_t)world, sizeof(*info));
        tpb_result_t res;
        memset(&res, 0, sizeof(res));
        t0 = now_s();
        tpb_timeline_analyse(all, world, tp, iters, rs, &res.stats);
        tpb_whatif_replay(all, world, tp, iters, res.stats.straggler_rank, res.stats.step_med,
                          &res.whatif);
        double t_analyse = now_s() - t0;
        res.backend = "host";
        res.world = world;
        res.tp = tp;
        res.iters = iters;
        res.m = res.n = res.k = 8192;
        res.info = info;
        res.ranks = rs;
        res.speed_source = TPB_SPEEDS_NONE;
        res.coll = TPB_COLL_ALLREDUCE;
        res.busbw_factor = 2.0 * (tp - 1) / tp;
        res.coll_bytes = 8192.0 * 8192 * tpb_dtype_out_size(res.dtype);
        res.check = TPB_CHECK_OFF;
        for (int v = 0; v < world; v++)
            info[v] = (tpb_rank_info_t){.shard = 8192 / tp,
                                        .speed = NAN,
                                        .fraction = 1.0 / tp,
                                        .flop = 1e9,
                                        .mem = 1e8,
                                        .max_err = NAN,
                                        .speed_spread = NAN};
        tpb_topo_t topo = {0, world, 0, 8, "node000", NULL, NULL, 0};
        topo.hosts = calloc((size_t)world, sizeof(*topo.hosts));
        topo.host_index = calloc((size_t)world, sizeof(int));
        for (int v = 0; v < world; v++)
            snprintf(topo.hosts[v], TPB_HOST_LEN, "node%03d", v / 8);
        topo.nhosts = tpb_topo_index_hosts(topo.hosts, world, topo.host_index);
        t0 = now_s();
        tpb_result_derive(&res, NAN);
        tpb_buf_t b = TPB_BUF_INIT;
        tpb_report_json(&b, &res);
        const char **names = malloc((size_t)world * sizeof(char *));
        for (int v = 0; v < world; v++)
            names[v] = topo.hosts[v];
        tpb_report_ranks_rows(&b, &res, names, names);
        double t_format = now_s() - t0;
        double t_trace = 0, bytes = 0;
        /* the trace keeps what --trace-iters auto keeps: TPB_TRACE_BUDGET rank-iterations
         * around the slowest step and the spikes (argument 5: all, or a count) */
        unsigned char *keep = malloc((size_t)iters);
        double *step = malloc((size_t)iters * sizeof(double));
        int n = win > 0                                   ? win
                : (long)world * iters <= TPB_TRACE_BUDGET ? iters
                                                          : TPB_TRACE_BUDGET / world;
        t0 = now_s();
        tpb_timeline_steps(all, world, tp, iters, step);
        int kept = tpb_timeline_trace_window(step, iters, win < 0 ? iters : n, keep);
        double t_window = now_s() - t0;
        if (strcmp(dir, "-") != 0) {
            tpb_outstream_t os;
            mkdir(dir, 0777);
            t0 = now_s() - t_window;
            if (tpb_outstream_open(&os, dir, "trace-bench.json") != TPB_OK ||
                tpb_trace_write(os.f, &res, all, step, 0.0, &topo, keep) != TPB_OK) {
                fprintf(stderr, "gather: %s\n", tpb_err_msg());
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
            bytes = (double)ftell(os.f);
            if (tpb_outstream_commit(&os) != TPB_OK)
                MPI_Abort(MPI_COMM_WORLD, 1);
            t_trace = now_s() - t0;
            char path[1200];
            snprintf(path, sizeof(path), "%s/trace-bench.json", dir);
            remove(path);
        }
        free(step);
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        printf("gather: %d virtual ranks x %d iterations on %d MPI ranks, tp %d\n", world, iters,
               size, tp);
        printf("  records on rank 0  %10.1f MiB\n", world * (double)iters * 24 / 1048576.0);
        printf("  MPI_Gatherv        %10.3f s\n", t_gather);
        printf("  analysis + what-if %10.3f s  (straggler %d, %d spikes, S %.3f)\n", t_analyse,
               res.stats.straggler_rank, res.stats.nspikes, res.whatif.slowdown);
        printf("  jsonl + ranks.csv  %10.3f s  (%.1f MiB)\n", t_format, b.len / 1048576.0);
        printf("  trace file         %10.3f s  (%.1f MiB, %d of %d iterations)\n", t_trace,
               bytes / 1048576.0, kept, iters);
        printf("  total              %10.3f s  (goal < 2 s, trace < 200 MB)\n",
               t_gather + t_analyse + t_format + t_trace);
        free(keep);
        printf("  peak RSS rank 0    %10.1f MiB\n", ru.ru_maxrss / 1024.0);
        tpb_buf_free(&b);
        free(names);
        free(topo.hosts);
        free(topo.host_index);
        free(rs);
        free(info);
    }
    free(local);
    free(all);
    MPI_Finalize();
    return 0;
}
