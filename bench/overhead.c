/*
 * overhead.c - what tpbal's harness costs per iteration, against a bare loop
 * of the same BLAS and MPI calls, measured in the same run (rounds alternate
 * so drift and noise hit all three alike):
 *   bare      cblas_sgemm + MPI_Allreduce on plain buffers
 *   tpbal     tpb_layer_iter through the backend's tables, timeline on
 *   tpbal-off the same with --timeline off (no marks)
 * Usage: mpirun -np 2 bench/overhead [M N K [ITERS [ROUNDS]]]  (row split, even)
 * Prints per-iteration medians and the ratios; the goal is <= 1.02 at
 * iterations of >= 1 ms.
 */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>

#include "backend/backend.h"
#include "base/clock.h"
#include "run/layer.h"
#include "run/coll.h"
#include "run/orient.h"
#include "base/metrics.h"
#include "base/partition.h"
#include "base/rng.h"

typedef struct {
    long m, n, k;
    int iters, rounds, rank, size;
} bench_t;

static double bare_loop(const bench_t *b, float *x, float *w, float *p, float *y, long kr)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = tpb_clock_now_us(NULL);
    for (int i = 0; i < b->iters; i++) {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)b->m, (int)b->n, (int)kr, 1.0f, x,
                    (int)kr, w, (int)kr, 0.0f, p, (int)b->n);
        MPI_Allreduce(p, y, (int)(b->m * b->n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    }
    return (tpb_clock_now_us(NULL) - t0) / b->iters;
}

static double layer_loop(const bench_t *b, tpb_device_t *dev, tpb_layer_t *l, int record)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = tpb_clock_now_us(NULL);
    for (int i = 0; i < b->iters; i++)
        if (tpb_layer_iter(l, (size_t)i, 0.0, record) != TPB_OK)
            MPI_Abort(MPI_COMM_WORLD, 1);
    double t = (tpb_clock_now_us(NULL) - t0) / b->iters;
    double *marks = malloc(3 * (size_t)b->iters * sizeof(double));
    if (record && tpb_dev_marks_read(dev, 3 * (size_t)b->iters, marks) != TPB_OK)
        MPI_Abort(MPI_COMM_WORLD, 1);
    free(marks);
    return t;
}

static float *random_buf(long rows, long cols)
{
    double *d = malloc((size_t)rows * cols * sizeof(double));
    float *f = malloc((size_t)rows * cols * sizeof(float));
    tpb_rng_fill(d, rows, cols, cols, 0, 0, 1, 1, 1.0);
    for (long i = 0; i < rows * cols; i++)
        f[i] = (float)d[i];
    free(d);
    return f;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bench_t b = {256, 1024, 1024, 30, 7, 0, 1};
    if (argc >= 4) {
        b.m = atol(argv[1]);
        b.n = atol(argv[2]);
        b.k = atol(argv[3]);
    }
    if (argc >= 5)
        b.iters = atoi(argv[4]);
    if (argc >= 6)
        b.rounds = atoi(argv[5]);
    MPI_Comm_rank(MPI_COMM_WORLD, &b.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &b.size);
    long shards[b.size];
    if (tpb_partition_even(b.k, b.size, 1, shards) != TPB_OK) {
        fprintf(stderr, "overhead: %s\n", tpb_err_msg());
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    tpb_clock_t clock = {0};
    tpb_backend_args_t args = {.world = MPI_COMM_WORLD,
                               .world_rank = b.rank,
                               .world_size = b.size,
                               .local_rank = b.rank,
                               .local_size = b.size,
                               .cfg = {.dtype = TPB_DTYPE_FP32},
                               .clock = &clock,
                               .emulate_factor = 1.0};
    tpb_device_t *dev;
    tpb_comm_t *comm;
    tpb_layer_t *l;
    tpb_layer_desc_t d = {.orient = &tpb_orient_row,
                          .coll = &tpb_coll_allreduce,
                          .m = b.m,
                          .n = b.n,
                          .k = b.k,
                          .dtype = TPB_DTYPE_FP32,
                          .tp = b.size,
                          .group_rank = b.rank,
                          .shards = shards,
                          .seed = 42};
    if (tpb_backend_host.open(&args, &dev) != TPB_OK ||
        tpb_dev_comm_open(dev, MPI_COMM_WORLD, &comm) != TPB_OK ||
        tpb_layer_create(dev, comm, &d, &l) != TPB_OK ||
        tpb_dev_marks_prepare(dev, 3 * (size_t)b.iters) != TPB_OK) {
        fprintf(stderr, "overhead: %s\n", tpb_err_msg());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    long kr = shards[b.rank];
    float *x = random_buf(b.m, kr), *w = random_buf(b.n, kr), *p = random_buf(b.m, b.n);
    float *y = random_buf(b.m, b.n);
    double bare[b.rounds], on[b.rounds], off[b.rounds], r_on[b.rounds], r_off[b.rounds];
    double r_tl[b.rounds];
    bare_loop(&b, x, w, p, y, kr); /* warm-up */
    layer_loop(&b, dev, l, 1);
    for (int r = 0; r < b.rounds; r++) {
        bare[r] = bare_loop(&b, x, w, p, y, kr);
        on[r] = layer_loop(&b, dev, l, 1);
        off[r] = layer_loop(&b, dev, l, 0);
        r_on[r] = on[r] / bare[r];
        r_off[r] = off[r] / bare[r];
        r_tl[r] = on[r] / off[r];
    }
    /* the recording itself, timed directly: 3 marks per iteration */
    const size_t nm = 3 * (size_t)b.iters;
    double m0 = tpb_clock_now_us(NULL);
    for (int rep = 0; rep < 1000; rep++)
        for (size_t i = 0; i < nm; i++)
            tpb_dev_mark(dev, i, TPB_MARK_COMPUTE_END);
    double mark_us = (tpb_clock_now_us(NULL) - m0) / (1000.0 * (double)nm);
    if (b.rank == 0) {
        size_t n = (size_t)b.rounds;
        printf("overhead: %d ranks, row split %ldx%ldx%ld fp32, %d iterations x %d rounds\n",
               b.size, b.m, b.n, b.k, b.iters, b.rounds);
        printf("  bare loop      %10.1f us/iter (median of rounds)\n", tpb_stats_median(bare, n));
        printf("  tpbal timeline %10.1f us/iter   ratio %.4f (min %.4f, max %.4f)\n",
               tpb_stats_median(on, n), tpb_stats_median(r_on, n), tpb_stats_min(r_on, n),
               tpb_stats_max(r_on, n));
        printf("  tpbal no marks %10.1f us/iter   ratio %.4f (min %.4f, max %.4f)\n",
               tpb_stats_median(off, n), tpb_stats_median(r_off, n), tpb_stats_min(r_off, n),
               tpb_stats_max(r_off, n));
        printf("  timeline cost  %+.2f %% (median over rounds of timeline / no marks - 1; noise)\n",
               100.0 * (tpb_stats_median(r_tl, n) - 1.0));
        printf("  one mark       %10.3f us, 3 per iteration = %.4f %% of the bare iteration\n",
               mark_us, 100.0 * 3.0 * mark_us / tpb_stats_median(bare, n));
        printf("  goal: ratio <= 1.02 at iterations >= 1 ms; timeline cost < 1 %%\n");
    }
    free(x);
    free(w);
    free(p);
    free(y);
    tpb_layer_destroy(l);
    tpb_comm_close(comm);
    tpb_dev_close(dev);
    MPI_Finalize();
    return 0;
}
