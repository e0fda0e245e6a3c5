/*
 * comm.c - tpbal's collective-only path (--comm-only: tpb_layer_iter without a GEMM, through
 * the backend's communicator, timeline on, the --timeout watchdog armed) held against OSU's
 * way of measuring the same MPI call, in one process, in interleaved rounds.
 *
 *   osu     as osu_allreduce / osu_allgatherv / osu_reduce_scatter time it: buffers allocated
 *           once and page-aligned (posix_memalign), warm-up calls not counted, every call timed
 *           with MPI_Wtime and followed by an MPI_Barrier; a rank's mean over the calls, the
 *           figure the mean over ranks. osu_allgatherv moves MPI_CHAR (its size is the per-rank
 *           message; the result is size x ranks), the others MPI_FLOAT.
 *   tpbal   the comm-only layer of the same collective and result size, iterated as the sweep
 *           does; its figures: the transfer (xfer: last arrival to the last rank's end, what
 *           algbw and busbw are computed from) and the step (first start to last end), medians
 *           over the iterations, from its own marks gathered to rank 0.
 *   offset  the osu loop on buffers that do not share their offset within a 4 KiB page (as
 *           tpbal places its buffers: page-aligned send and receive buffers of a sum hit 4K
 *           aliasing on some cores, doc/METRICS.md): the MPI at its best, the goal's reference
 *   b2b     the offset loop without the barrier between calls (back to back, as tpbal runs)
 *   zero    the osu loop with a send buffer that was never written, as OSU 7.4's
 *           osu_allgatherv leaves its own (its set_buffer(sendbuf, ...) sits in the branch of
 *           a failed allocation, after MPI_Abort): every read of it, the peer's single copy
 *           included, reads the kernel's one zero page, hot in cache. The all-gather's figure
 *           OSU's program prints (doc/METRICS.md)
 *
 * Rounds rotate the order of the loops so that drift and noise hit all alike; a row gives
 * the medians over rounds of each loop's figure and of the per-round ratios tpbal / offset
 * (the goal) and osu / offset (what the page offsets cost OSU's way).
 * Usage: mpirun -np 2 bench/comm [ROUNDS [SIZES]]  (fp32; sizes in bytes of the whole array:
 *        the all-reduce message, the gathered result, the reduce-scatter input; default
 *        64K,1M,16M). Goal: tpbal's transfer within 5 % of the offset loop at every size.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/backend.h"
#include "base/clock.h"
#include "base/partition.h"
#include "base/stats.h"
#include "run/coll.h"
#include "run/layer.h"
#include "run/orient.h"

enum { LOOP_OSU, LOOP_OFFSET, LOOP_B2B, LOOP_TPBAL, LOOP_ZERO, NLOOPS };
static const char *const kinds[] = {"all-reduce", "all-gather", "reduce-scatter"};

typedef struct {
    int rank, size, rounds;
    MPI_Comm bare; /* the bare loops' communicator: a duplicate of the world */
    tpb_device_t *dev;
    tpb_comm_t *comm;
} bench_t;

static void die(const char *what)
{
    fprintf(stderr, "comm bench: %s: %s\n", what, tpb_err_msg());
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* The bare call of collective c on bytes of the whole array (OSU's arguments). */
static void bare_call(const bench_t *b, int c, char *send, char *recv, long bytes,
                      const int *counts, const int *displs)
{
    if (c == 0)
        MPI_Allreduce(send, recv, (int)(bytes / 4), MPI_FLOAT, MPI_SUM, b->bare);
    else if (c == 1)
        MPI_Allgatherv(send, counts[b->rank], MPI_CHAR, recv, counts, displs, MPI_CHAR, b->bare);
    else
        MPI_Reduce_scatter(send, recv, counts, MPI_FLOAT, MPI_SUM, b->bare);
}

/* OSU's figure: a rank's mean call time (a barrier after each call, or none), averaged over
 * the ranks. */
static double osu_loop(const bench_t *b, int c, char *send, char *recv, long bytes,
                       const int *counts, const int *displs, int iters, int barrier)
{
    int skip = iters / 10 + 1;
    double sum = 0.0, all = 0.0;
    MPI_Barrier(b->bare);
    for (int i = 0; i < iters + skip; i++) {
        double t0 = MPI_Wtime();
        bare_call(b, c, send, recv, bytes, counts, displs);
        double t1 = MPI_Wtime();
        if (i >= skip)
            sum += t1 - t0;
        if (barrier)
            MPI_Barrier(b->bare);
    }
    double mine = sum * 1e6 / iters;
    MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_SUM, b->bare);
    return all / b->size;
}

/* tpbal's medians over iterations of the transfer (max x1 - max c1) and the step (max x1 -
 * min c0), from every rank's marks (gathered to rank 0; 0 elsewhere). */
static void tpbal_loop(const bench_t *b, tpb_layer_t *l, int iters, double *xfer, double *step)
{
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < iters; i++)
        if (tpb_layer_iter(l, (size_t)i, 0.0, 1) != TPB_OK)
            die("iteration");
    size_t n = 3 * (size_t)iters;
    double *m = malloc(n * sizeof(double)), *all = malloc(n * (size_t)b->size * sizeof(double));
    double *x = malloc((size_t)iters * sizeof(double)), *s = malloc((size_t)iters * sizeof(double));
    if (!m || !all || !x || !s || tpb_dev_marks_read(b->dev, n, m) != TPB_OK)
        die("marks");
    MPI_Gather(m, (int)n, MPI_DOUBLE, all, (int)n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    *xfer = *step = 0.0;
    for (int i = 0; b->rank == 0 && i < iters; i++) {
        double c0 = 1e300, c1 = -1e300, x1 = -1e300;
        for (int r = 0; r < b->size; r++) {
            const double *p = all + (size_t)r * n + tpb_marks_iter((size_t)i, 0);
            c0 = p[0] < c0 ? p[0] : c0;
            c1 = p[1] > c1 ? p[1] : c1;
            x1 = p[2] > x1 ? p[2] : x1;
        }
        x[i] = x1 - c1;
        s[i] = x1 - c0;
    }
    if (b->rank == 0) {
        *xfer = tpb_stats_median(x, (size_t)iters);
        *step = tpb_stats_median(s, (size_t)iters);
    }
    free(m);
    free(all);
    free(x);
    free(s);
}

/* The comm-only layer of collective c whose whole array is bytes (fp32, even blocks). */
static tpb_layer_t *layer_of(const bench_t *b, int c, long bytes, long *shards)
{
    static const tpb_split_t split[] = {TPB_SPLIT_ROW, TPB_SPLIT_COL, TPB_SPLIT_ROW};
    tpb_seqpar_t sp = c == 2 ? TPB_SEQPAR_ON : TPB_SEQPAR_OFF;
    long n = bytes / 4;
    if (tpb_partition_even(n, b->size, 1, shards) != TPB_OK)
        die("partition");
    tpb_layer_desc_t d = {.orient = tpb_orient_of(split[c]),
                          .coll = tpb_coll_of(split[c], TPB_COLL_ALLGATHER, sp),
                          .m = 1,
                          .n = n,
                          .k = 1,
                          .dtype = TPB_DTYPE_FP32,
                          .tp = b->size,
                          .group_rank = b->rank,
                          .shards = shards,
                          .seed = 42,
                          .comm_only = 1};
    tpb_layer_t *l = NULL;
    if (tpb_layer_create(b->dev, b->comm, &d, &l) != TPB_OK)
        die("layer");
    return l;
}

static void one_size(const bench_t *b, int c, long bytes)
{
    int iters = bytes <= (64L << 10) ? 400 : bytes <= (1L << 20) ? 60 : 10, R = b->rounds;
    long shards[b->size];
    tpb_layer_t *l = layer_of(b, c, bytes, shards);
    if (tpb_dev_marks_prepare(b->dev, 3 * (size_t)iters) != TPB_OK)
        die("marks");
    /* OSU's buffers: page-aligned, allocated once, the whole array each */
    int counts[b->size], displs[b->size];
    long per = bytes / b->size;
    for (int r = 0; r < b->size; r++) { /* osu_allgatherv: bytes; osu_reduce_scatter: floats */
        counts[r] = (int)(c == 1 ? per : per / 4);
        displs[r] = (int)(r * per);
    }
    char *send = NULL, *recv = NULL, *zero = NULL;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    if (posix_memalign((void **)&send, page, (size_t)bytes + page) ||
        posix_memalign((void **)&recv, page, (size_t)bytes + page) ||
        posix_memalign((void **)&zero, page, (size_t)bytes + page))
        die("buffers"); /* zero: never written (a fresh mapping: the zero page until then) */
    memset(send, 1, (size_t)bytes + page);
    memset(recv, 0, (size_t)bytes + page);
    char *osend = send + 320, *orecv = recv + 1600; /* other offsets within a page */
    double t[NLOOPS][R], step[R], ratio[R], alias[R], warm, ws;
    osu_loop(b, c, send, recv, bytes, counts, displs, iters, 1); /* warm-up */
    tpbal_loop(b, l, iters, &warm, &ws);
    for (int r = 0; r < R; r++)
        for (int j = 0; j < NLOOPS; j++) {
            int which = (r + j) % NLOOPS;
            if (which == LOOP_TPBAL)
                tpbal_loop(b, l, iters, &t[which][r], &step[r]);
            else if (which == LOOP_OSU)
                t[which][r] = osu_loop(b, c, send, recv, bytes, counts, displs, iters, 1);
            else if (which == LOOP_ZERO)
                t[which][r] = osu_loop(b, c, zero, recv, bytes, counts, displs, iters, 1);
            else
                t[which][r] = osu_loop(b, c, osend, orecv, bytes, counts, displs, iters,
                                       which == LOOP_OFFSET);
        }
    if (b->rank == 0) {
        for (int r = 0; r < R; r++) {
            ratio[r] = t[LOOP_TPBAL][r] / t[LOOP_OFFSET][r];
            alias[r] = t[LOOP_OSU][r] / t[LOOP_OFFSET][r];
        }
        printf("  %-14s %9ld B  osu %9.1f  zero %9.1f  offset %9.1f  b2b %9.1f  tpbal xfer %9.1f  "
               "step %9.1f us  tpbal/offset %.3f (%.3f..%.3f)  osu/offset %.2f\n",
               kinds[c], bytes, tpb_stats_median(t[LOOP_OSU], (size_t)R),
               tpb_stats_median(t[LOOP_ZERO], (size_t)R),
               tpb_stats_median(t[LOOP_OFFSET], (size_t)R),
               tpb_stats_median(t[LOOP_B2B], (size_t)R), tpb_stats_median(t[LOOP_TPBAL], (size_t)R),
               tpb_stats_median(step, (size_t)R), tpb_stats_median(ratio, (size_t)R),
               tpb_stats_min(ratio, (size_t)R), tpb_stats_max(ratio, (size_t)R),
               tpb_stats_median(alias, (size_t)R));
        fflush(stdout);
    }
    free(send);
    free(recv);
    free(zero);
    tpb_layer_destroy(l);
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    bench_t b = {.rounds = argc > 1 ? atoi(argv[1]) : 9};
    MPI_Comm_dup(MPI_COMM_WORLD, &b.bare);
    MPI_Comm_rank(MPI_COMM_WORLD, &b.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &b.size);
    long sizes[16] = {64L << 10, 1L << 20, 16L << 20};
    int nsizes = 3;
    if (argc > 2) {
        nsizes = 0;
        for (char *p = strtok(argv[2], ","); p && nsizes < 16; p = strtok(NULL, ","))
            sizes[nsizes++] = atol(p);
    }
    if (b.rounds < 1 || b.size < 2) {
        if (b.rank == 0)
            fprintf(stderr, "usage: mpirun -np P (P >= 2) bench/comm [ROUNDS >= 1 [SIZES]]\n");
        MPI_Finalize();
        return 2;
    }
    tpb_clock_t clock = {0};
    tpb_backend_args_t args = {.world = MPI_COMM_WORLD,
                               .world_rank = b.rank,
                               .world_size = b.size,
                               .local_rank = b.rank,
                               .local_size = b.size,
                               .cfg = {.dtype = TPB_DTYPE_FP32, .timeout_s = 300.0},
                               .clock = &clock,
                               .emulate_factor = 1.0};
    /* tpbal as it runs: the blocking calls, the watchdog armed (--timeout 300) */
    if (tpb_backend_host.open(&args, &b.dev) != TPB_OK ||
        tpb_dev_comm_open(b.dev, MPI_COMM_WORLD, &b.comm) != TPB_OK)
        die("backend");
    if (b.rank == 0)
        printf("comm: %d ranks, fp32, tpbal --comm-only against OSU's loops, medians of %d "
               "rounds\n",
               b.size, b.rounds);
    for (int c = 0; c < 3; c++)
        for (int s = 0; s < nsizes; s++)
            one_size(&b, c, sizes[s]);
    if (b.rank == 0)
        printf("  goal: tpbal's transfer within 5 %% of the offset loop at every size\n");
    tpb_comm_close(b.comm);
    tpb_dev_close(b.dev);
    MPI_Comm_free(&b.bare);
    MPI_Finalize();
    return 0;
}
