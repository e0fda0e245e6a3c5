/*
 * comm.c - tpbal's collective-only path (--comm-only: tpb_layer_iter without a
 * GEMM, through the backend ops table, timeline on, the --timeout watchdog armed)
 * against bare loops on the same buffers, in the same run: the blocking calls
 * (MPI_Allreduce / MPI_Allgatherv: what osu_allreduce and IMB time) and the
 * non-blocking ones (MPI_Iallreduce / MPI_Iallgatherv + MPI_Wait; Open MPI runs
 * other algorithms for them, libnbc). tpbal runs both ways: --collectives blocking
 * (its default) and nonblocking. Every call or iteration is timed on its own and a
 * loop's figure is the median (tpbal's from its own marks, as its step is), so a
 * stray slow call moves neither. Rounds rotate the order of the four loops so
 * drift and noise hit all alike; the figures are medians over rounds of the
 * per-round ratios, with their min..max over the rounds.
 * Usage: mpirun -np 2 bench/comm [ROUNDS]   (fp32; 64 KiB, 1 MiB, 16 MiB;
 *        all-reduce and all-gather-v with even blocks)
 * Goal: tpbal (blocking) <= 1.05 x the bare blocking loop at every size.
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

/* The bare loops' communicator: a duplicate of the world, as tpbal's group is. */
static MPI_Comm BARE;
typedef struct {
    int rank, size, rounds;
    const tpb_backend_ops_t *ops;
    tpb_backend_t *be[2]; /* --collectives blocking, nonblocking */
    tpb_comm_t *comm[2];
} bench_t;

static void die(const char *what)
{
    fprintf(stderr, "comm bench: %s: %s\n", what, tpb_err_msg());
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* Median microseconds per call of the bare MPI collective (each call timed, as tpbal times
 * each iteration): blocking, or the non-blocking call completed by MPI_Wait. */
static double bare_loop(const bench_t *b, tpb_split_t split, float *send, float *recv, long n,
                        const int *counts, const int *displs, int iters, int nonblocking)
{
    double t[iters];
    MPI_Barrier(BARE);
    for (int i = 0; i < iters; i++) {
        MPI_Request req;
        double t0 = tpb_clock_now_us(NULL);
        if (split == TPB_SPLIT_ROW && nonblocking) {
            MPI_Iallreduce(send, recv, (int)n, MPI_FLOAT, MPI_SUM, BARE, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else if (split == TPB_SPLIT_ROW) {
            MPI_Allreduce(send, recv, (int)n, MPI_FLOAT, MPI_SUM, BARE);
        } else if (nonblocking) {
            MPI_Iallgatherv(send, counts[b->rank], MPI_FLOAT, recv, counts, displs, MPI_FLOAT, BARE,
                            &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else {
            MPI_Allgatherv(send, counts[b->rank], MPI_FLOAT, recv, counts, displs, MPI_FLOAT, BARE);
        }
        t[i] = tpb_clock_now_us(NULL) - t0;
    }
    return tpb_median(t, (size_t)iters);
}

/* Median microseconds per iteration of tpbal's comm-only layer, from its own marks
 * (x1 - c0 of each iteration: what its step is made of). */
static double tpbal_loop(const bench_t *b, int way, tpb_layer_t *l, int iters)
{
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < iters; i++)
        if (tpb_layer_iter(l, (size_t)i, 0.0, 1) != TPB_OK)
            die("iteration");
    double *marks = malloc(3 * (size_t)iters * sizeof(double)), t[iters];
    if (!marks || b->ops->marks_read(b->be[way], 3 * (size_t)iters, marks) != TPB_OK)
        die("marks");
    for (int i = 0; i < iters; i++)
        t[i] = marks[3 * i + 2] - marks[3 * i];
    free(marks);
    return tpb_median(t, (size_t)iters);
}

/* Median over rounds, and its min..max, of ratios a[r] / b[r]. */
static void ratio(const double *a, const double *b, int n, double *med, double *lo, double *hi)
{
    double r[n];
    for (int i = 0; i < n; i++)
        r[i] = a[i] / b[i];
    *med = tpb_median(r, (size_t)n);
    *lo = tpb_min(r, (size_t)n);
    *hi = tpb_max(r, (size_t)n);
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
    tpb_layer_t *l[2];
    for (int w = 0; w < 2; w++)
        if (tpb_layer_create(b->ops, b->be[w], b->comm[w], &d, &l[w]) != TPB_OK ||
            b->ops->marks_prepare(b->be[w], 3 * (size_t)iters) != TPB_OK)
            die("layer");
    /* the bare loops' buffers at different offsets within a page, as tpbal's are: two
     * buffers at one offset (as malloc gives large ones) cost a blocking 1 MiB all-reduce
     * 3x here (4K aliasing; doc/METRICS.md) */
    float *sendb = calloc((size_t)n + 1024, sizeof(float));
    float *recvb = calloc((size_t)n + 1024, sizeof(float));
    if (!sendb || !recvb)
        die("buffers");
    float *send = sendb, *recv = recvb + 272;
    for (long i = 0; i < n; i++)
        send[i] = (float)(i % 7);
    int R = b->rounds;
    double t[4][R]; /* tpbal blocking, tpbal nonblocking, bare blocking, bare nonblocking */
    for (int w = 0; w < 2; w++) { /* warm-up */
        bare_loop(b, split, send, recv, n, counts, displs, iters, w);
        tpbal_loop(b, w, l[w], iters);
    }
    for (int r = 0; r < R; r++) /* rotate the order of the four loops */
        for (int j = 0; j < 4; j++) {
            int which = (r + j) % 4;
            t[which][r] =
                which < 2 ? tpbal_loop(b, which, l[which], iters)
                          : bare_loop(b, split, send, recv, n, counts, displs, iters, which - 2);
        }
    if (b->rank == 0) {
        double m[3], lo[3], hi[3];
        ratio(t[0], t[2], R, &m[0], &lo[0], &hi[0]); /* tpbal blocking / bare blocking */
        ratio(t[1], t[3], R, &m[1], &lo[1], &hi[1]); /* tpbal nonblocking / bare nonblocking */
        ratio(t[3], t[2], R, &m[2], &lo[2], &hi[2]); /* bare nonblocking / bare blocking */
        printf("  %-10s %8ld B  bare blocking %8.1f us  tpbal %8.1f us  %.3f (%.3f..%.3f)"
               "  | nonblocking: bare %.3fx  tpbal/bare %.3f\n",
               split == TPB_SPLIT_ROW ? "all-reduce" : "all-gather", bytes,
               tpb_median(t[2], (size_t)R), tpb_median(t[0], (size_t)R), m[0], lo[0], hi[0], m[2],
               m[1]);
        fflush(stdout);
    }
    free(sendb);
    free(recvb);
    for (int w = 0; w < 2; w++)
        tpb_layer_destroy(l[w]);
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_dup(MPI_COMM_WORLD, &BARE);
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
    for (int w = 0; w < 2; w++) { /* tpbal as it runs: the watchdog armed (--timeout 300) */
        args.cfg.collectives = w ? TPB_COLLS_NONBLOCKING : TPB_COLLS_BLOCKING;
        args.cfg.timeout_s = 300.0;
        if (b.ops->init(&args, &b.be[w]) != TPB_OK ||
            b.ops->comm_open(b.be[w], MPI_COMM_WORLD, &b.comm[w]) != TPB_OK)
            die("backend");
    }
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
        printf("  goal: tpbal <= 1.05 x the bare blocking loop at every size\n");
    for (int w = 0; w < 2; w++) {
        b.ops->comm_close(b.comm[w]);
        b.ops->finalize(b.be[w]);
    }
    MPI_Finalize();
    return 0;
}
