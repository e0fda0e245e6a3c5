/*
 * fidelity.c - is tpbal's GEMM phase as fast as a bare BLAS loop? At TP = 1 on
 * every rank, in the same run and on the same seeded random inputs, rounds
 * alternate between
 *   bare   cblas_sgemm on plain buffers (the reference),
 *   tpbal  the layer's compute phase exactly as tpbal times it: mark, the
 *          backend's GEMM (through its device table), mark.
 * Usage: mpirun -np 2 bench/fidelity [M N K [ITERS [ROUNDS]]]
 * Prints the per-GEMM medians and the fidelity bare/tpbal (goal >= 0.98).
 */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "base/clock.h"
#include "base/metrics.h"
#include "base/rng.h"
#include "run/layer.h"
#include "run/coll.h"
#include "run/orient.h"

typedef struct {
    long m, n, k;
    int iters, rounds, rank;
} bench_t;

/* The layer's own inputs, copied: X (m x k) and W (n x k) as tpbal seeds them. */
static float *seeded(long rows, long cols, uint32_t id, double scale)
{
    double *d = malloc((size_t)rows * cols * sizeof(double));
    float *f = malloc((size_t)rows * cols * sizeof(float));
    tpb_rng_fill(d, rows, cols, cols, 0, 0, 42, id, scale);
    for (long i = 0; i < rows * cols; i++)
        f[i] = (float)d[i];
    free(d);
    return f;
}

static double bare_round(const bench_t *b, const float *x, const float *w, float *y)
{
    double t0 = tpb_clock_now_us(NULL);
    for (int i = 0; i < b->iters; i++)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)b->m, (int)b->n, (int)b->k, 1.0f,
                    x, (int)b->k, w, (int)b->k, 0.0f, y, (int)b->n);
    return (tpb_clock_now_us(NULL) - t0) / b->iters;
}

/* Sum of the marked compute phases, per GEMM. */
static double tpbal_round(const bench_t *b, tpb_device_t *dev, const tpb_gemm_t *g, double *marks)
{
    for (int i = 0; i < b->iters; i++)
        if (tpb_dev_mark(dev, 2 * (size_t)i, TPB_MARK_COMPUTE_BEGIN) != TPB_OK ||
            tpb_dev_gemm(dev, g) != TPB_OK ||
            tpb_dev_mark(dev, 2 * (size_t)i + 1, TPB_MARK_COMPUTE_END) != TPB_OK)
            MPI_Abort(MPI_COMM_WORLD, 1);
    if (tpb_dev_marks_read(dev, 2 * (size_t)b->iters, marks) != TPB_OK)
        MPI_Abort(MPI_COMM_WORLD, 1);
    double sum = 0.0;
    for (int i = 0; i < b->iters; i++)
        sum += marks[2 * i + 1] - marks[2 * i];
    return sum / b->iters;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bench_t b = {256, 1024, 1024, 20, 9, 0};
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
    tpb_clock_t clock = {0};
    tpb_backend_args_t args = {.world = MPI_COMM_SELF,
                               .world_size = 1,
                               .local_size = 1,
                               .cfg = {.dtype = TPB_DTYPE_FP32},
                               .clock = &clock,
                               .emulate_factor = 1.0};
    tpb_device_t *dev;
    tpb_comm_t *comm;
    tpb_layer_t *l;
    long shard = b.k;
    tpb_layer_desc_t d = {.orient = &tpb_orient_row,
                          .coll = &tpb_coll_allreduce,
                          .m = b.m,
                          .n = b.n,
                          .k = b.k,
                          .dtype = TPB_DTYPE_FP32,
                          .tp = 1,
                          .shards = &shard,
                          .seed = 42};
    if (tpb_backend_host.open(&args, &dev) != TPB_OK ||
        tpb_dev_comm_open(dev, MPI_COMM_SELF, &comm) != TPB_OK ||
        tpb_layer_create(dev, comm, &d, &l) != TPB_OK ||
        tpb_dev_marks_prepare(dev, 2 * (size_t)b.iters) != TPB_OK) {
        fprintf(stderr, "fidelity: %s\n", tpb_err_msg());
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    float *x = seeded(b.m, b.k, 1, 1.0), *w = seeded(b.n, b.k, 2, 1.0 / sqrtf((float)b.k));
    float *y = malloc((size_t)b.m * b.n * sizeof(float));
    double *marks = malloc(2 * (size_t)b.iters * sizeof(double));
    double bare[b.rounds], ours[b.rounds];
    bare_round(&b, x, w, y); /* warm-up both */
    tpbal_round(&b, dev, tpb_layer_gemm(l), marks);
    for (int r = 0; r < b.rounds; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        bare[r] = bare_round(&b, x, w, y);
        MPI_Barrier(MPI_COMM_WORLD);
        ours[r] = tpbal_round(&b, dev, tpb_layer_gemm(l), marks);
    }
    double mb = tpb_stats_median(bare, (size_t)b.rounds),
           mo = tpb_stats_median(ours, (size_t)b.rounds);
    double gf = 2.0 * b.m * b.n * b.k / (mo * 1e3);
    printf("rank %d: GEMM %ldx%ldx%ld fp32, %d x %d: bare %.1f us, tpbal %.1f us (%.1f GFLOP/s), "
           "fidelity bare/tpbal %.3f (goal >= 0.98)\n",
           b.rank, b.m, b.n, b.k, b.rounds, b.iters, mb, mo, gf, mb / mo);
    free(x);
    free(w);
    free(y);
    free(marks);
    tpb_layer_destroy(l);
    tpb_comm_close(comm);
    tpb_dev_close(dev);
    MPI_Finalize();
    return 0;
}
