/*
 * linkmodes.c - does a link's all-reduce cost depend on what came before it?
 * A bare loop of blocking MPI_Allreduce calls (fp32 sum, no tpbal code: the
 * reference for tpbal's comm-only sweep and its spread predictions), run four
 * ways: back-to-back (as osu_allreduce, IMB and nccl-tests time it, and as a
 * --comm-only sweep runs), a barrier before each call, GAP ms of spinning before
 * each call on every rank (as between the GEMMs of a TP step: --comm-gap), and a
 * barrier then the gap. Each call is timed on every rank; a call's figure is its
 * slowest rank's, a mode's is the median over its calls (min and max beside it).
 * Over a TCP link whose transfers take longer than its control messages, Open MPI's
 * rendezvous hand-shake can queue behind a bulk transfer in the other direction and
 * the two directions then run one after the other: back-to-back calls lock into
 * that mode (about 2x), spaced ones mostly do not (doc/METRICS.md, cluster.sh).
 * Usage: mpirun -np P bench/linkmodes [BYTES [CALLS [GAP_MS]]]
 *        (defaults 1048576, 12, 6; the first 2 calls of a mode are warm-up)
 * Prints one parseable line per mode:
 *   linkmodes mode=NAME bytes=B calls=N gap_ms=G median_ms=M min_ms=A max_ms=Z
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define WARMUP 2

enum { BACK_TO_BACK, BARRIER, GAP, BARRIER_GAP, NMODES };
static const char *const MODE_NAME[NMODES] = {"back-to-back", "barrier", "gap", "barrier+gap"};

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static void spin_ms(double ms)
{
    double t0 = now_ms();
    while (now_ms() - t0 < ms)
        ;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One mode: CALLS timed calls after the warm-up; t[i] = the slowest rank's call i. */
static void run_mode(int mode, float *src, float *dst, int count, int calls, double gap_ms,
                     double *t)
{
    for (int i = 0; i < WARMUP + calls; i++) {
        if (mode == BARRIER || mode == BARRIER_GAP)
            MPI_Barrier(MPI_COMM_WORLD);
        if (mode == GAP || mode == BARRIER_GAP)
            spin_ms(gap_ms);
        double t0 = now_ms();
        MPI_Allreduce(src, dst, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        if (i >= WARMUP)
            t[i - WARMUP] = now_ms() - t0;
    }
    MPI_Allreduce(MPI_IN_PLACE, t, calls, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    qsort(t, (size_t)calls, sizeof(*t), cmp_double);
}

static int usage(int rank, const char *why)
{
    if (rank == 0)
        fprintf(stderr,
                "linkmodes: %s\nusage: mpirun -np P bench/linkmodes [BYTES [CALLS [GAP_MS]]]\n",
                why);
    MPI_Finalize();
    return 2;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    long bytes = argc > 1 ? atol(argv[1]) : 1048576;
    int calls = argc > 2 ? atoi(argv[2]) : 12;
    double gap_ms = argc > 3 ? atof(argv[3]) : 6.0;
    if (bytes < 4 || bytes > (1L << 30) || calls < 1 || calls > 100000 || gap_ms < 0)
        return usage(rank, "BYTES in 4..1 GiB, CALLS in 1..100000, GAP_MS >= 0");
    int count = (int)(bytes / 4);
    float *src = calloc((size_t)count, sizeof(float));
    float *dst = calloc((size_t)count, sizeof(float));
    double *t = calloc((size_t)calls, sizeof(double));
    int ok = src && dst && t;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD); /* every rank agrees */
    if (!ok)
        return usage(rank, "out of memory on a rank");
    for (int m = 0; m < NMODES; m++) {
        run_mode(m, src, dst, count, calls, gap_ms, t);
        if (rank == 0)
            printf("linkmodes mode=%s bytes=%ld calls=%d gap_ms=%g median_ms=%.2f min_ms=%.2f "
                   "max_ms=%.2f\n",
                   MODE_NAME[m], (long)count * 4, calls, gap_ms,
                   (t[(calls - 1) / 2] + t[calls / 2]) / 2, t[0], t[calls - 1]);
        fflush(stdout);
    }
    free(src);
    free(dst);
    free(t);
    MPI_Finalize();
    return 0;
}
