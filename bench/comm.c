/*
 * comm.c - tpbal's collective-only path (--comm-only: tpb_layer_iter without a
 * GEMM, through the backend ops table, timeline on) against bare loops on the
 * same buffers, in the same run: the same MPI call tpbal makes (MPI_Iallreduce /
 * MPI_Iallgatherv + MPI_Wait; non-blocking for the --timeout watchdog) and the
 * blocking call (MPI_Allreduce / MPI_Allgatherv, what osu_allreduce times; Open
 * MPI may run other algorithms for it). Rounds rotate the order of the three
 * loops so drift and noise hit all alike; the figures are medians over rounds of
 * the per-round ratios.
 * Usage: mpirun -np 2 bench/comm [ROUNDS]   (fp32; 64 KiB, 1 MiB, 16 MiB;
 *        all-reduce and all-gather-v with even blocks)
 * Goal: ratio to the same call <= 1.05 at every size.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "base/clock.h"
#include "base/metrics.h"
#include "base/partition.h"
#include "run/layer.h"
#include "run/split.h"

typedef struct {
    int rank, size, rounds;
    const tpb_backend_ops_t *ops;
    tpb_backend_t *be;
    tpb_comm_t *comm;
} bench_t;

static void die(const char *what)
{
    fprintf(stderr, "comm bench: %s: %s\n", what, tpb_err_msg());
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* Microseconds per call of the bare MPI collective: blocking, or the non-blocking call
 * tpbal makes (for its --timeout watchdog) completed by MPI_Wait. */
static double bare_loop(const bench_t *b, tpb_split_t split, float *send, float *recv, long n,
                        const int *counts, const int *displs, int iters, int nonblocking)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = tpb_clock_now_us(NULL);
    for (int i = 0; i < iters; i++) {
        MPI_Request req;
        if (split == TPB_SPLIT_ROW && nonblocking) {
            MPI_Iallreduce(send, recv, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else if (split == TPB_SPLIT_ROW) {
            MPI_Allreduce(send, recv, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        } else if (nonblocking) {
            MPI_Iallgatherv(send, counts[b->rank], MPI_FLOAT, recv, counts, displs, MPI_FLOAT,
                            MPI_COMM_WORLD, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else {
            MPI_Allgatherv(send, counts[b->rank], MPI_FLOAT, recv, counts, displs, MPI_FLOAT,
                           MPI_COMM_WORLD);
        }
    }
    return (tpb_clock_now_us(NULL) - t0) / iters;
}

/* Microseconds per iteration of tpbal's comm-only layer (marks recorded, then read). */
static double tpbal_loop(const bench_t *b, tpb_layer_t *l, int iters)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = tpb_clock_now_us(NULL);
    for (int i = 0; i < iters; i++)
        if (tpb_layer_iter(l, (size_t)i, 0.0, 1) != TPB_OK)
            die("iteration");
    double t = (tpb_clock_now_us(NULL) - t0) / iters;
    double *marks = malloc(3 * (size_t)iters * sizeof(double));
    if (!marks || b->ops->marks_read(b->be, 3 * (size_t)iters, marks) != TPB_OK)
        die("marks");
    free(marks);
    return t;
}

static void one_size(const bench_t *b, tpb_split_t split, long bytes)
{
    long n = bytes / (long)sizeof(float);
    int iters = bytes <= (64L << 10) ? 400 : bytes <= (1L << 20) ? 60 : 8;
    long shards[b->size], offs[b->size];
    int counts[b->size], displs[b->size];
    if (tpb_partition_even(n, b->size, 1, shards) != TPB_OK)
        die("partition");
    tpb_partition_offsets(shards, b->size, offs);
    for (int r = 0; r < b->size; r++) {
        counts[r] = (int)shards[r];
        displs[r] = (int)offs[r];
    }
    tpb_layer_desc_t d = {.split = tpb_split_ops(split, TPB_COLL_ALLGATHER),
                          .m = 1,
                          .n = n,
                          .k = 1,
                          .dtype = TPB_DTYPE_FP32,
                          .tp = b->size,
                          .group_rank = b->rank,
                          .shards = shards,
                          .seed = 42,
                          .comm_only = 1};
    tpb_layer_t *l;
    if (tpb_layer_create(b->ops, b->be, b->comm, &d, &l) != TPB_OK ||
        b->ops->marks_prepare(b->be, 3 * (size_t)iters) != TPB_OK)
        die("layer");
    float *send = calloc((size_t)n, sizeof(float)), *recv = calloc((size_t)n, sizeof(float));
    for (long i = 0; i < n; i++)
        send[i] = (float)(i % 7);
    double nb[b->rounds], bl[b->rounds], mine[b->rounds], r_nb[b->rounds], r_bl[b->rounds];
    bare_loop(b, split, send, recv, n, counts, displs, iters, 1); /* warm-up */
    bare_loop(b, split, send, recv, n, counts, displs, iters, 0);
    tpbal_loop(b, l, iters);
    for (int r = 0; r < b->rounds; r++) { /* rotate the order of the three loops */
        for (int j = 0; j < 3; j++) {
            int which = (r + j) % 3;
            if (which == 0)
                mine[r] = tpbal_loop(b, l, iters);
            else if (which == 1)
                nb[r] = bare_loop(b, split, send, recv, n, counts, displs, iters, 1);
            else
                bl[r] = bare_loop(b, split, send, recv, n, counts, displs, iters, 0);
        }
        r_nb[r] = mine[r] / nb[r];
        r_bl[r] = mine[r] / bl[r];
    }
    if (b->rank == 0) {
        size_t k = (size_t)b->rounds;
        printf("  %-10s %9ld B  tpbal %8.1f us  same call %8.1f us  ratio %.3f (%.3f..%.3f)"
               "  blocking %8.1f us  ratio %.3f\n",
               split == TPB_SPLIT_ROW ? "all-reduce" : "all-gather", bytes, tpb_median(mine, k),
               tpb_median(nb, k), tpb_median(r_nb, k), tpb_min(r_nb, k), tpb_max(r_nb, k),
               tpb_median(bl, k), tpb_median(r_bl, k));
        fflush(stdout);
    }
    free(send);
    free(recv);
    tpb_layer_destroy(l);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bench_t b = {.rounds = argc > 1 ? atoi(argv[1]) : 9};
    MPI_Comm_rank(MPI_COMM_WORLD, &b.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &b.size);
    if (b.rounds < 1 || b.size < 2) {
        if (b.rank == 0)
            fprintf(stderr, "usage: mpirun -np P (P >= 2) bench/comm [ROUNDS >= 1]\n");
        MPI_Finalize();
        return 2;
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
    b.ops = &tpb_backend_host;
    if (b.ops->init(&args, &b.be) != TPB_OK ||
        b.ops->comm_open(b.be, MPI_COMM_WORLD, &b.comm) != TPB_OK)
        die("backend");
    if (b.rank == 0)
        printf("comm: %d ranks, fp32, tpbal --comm-only iteration vs bare MPI loops, medians of "
               "%d rounds\n",
               b.size, b.rounds);
    const long sizes[3] = {64L << 10, 1L << 20, 16L << 20};
    for (int s = 0; s < 3; s++) {
        one_size(&b, TPB_SPLIT_ROW, sizes[s]);
        one_size(&b, TPB_SPLIT_COL, sizes[s]);
    }
    if (b.rank == 0)
        printf("  goal: ratio to the same call <= 1.05 at every size\n");
    b.ops->comm_close(b.comm);
    b.ops->finalize(b.be);
    MPI_Finalize();
    return 0;
}
