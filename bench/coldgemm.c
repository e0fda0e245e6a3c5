/*
 * coldgemm.c - why a what-if cannot see a small GEMM's straggler on a shared machine:
 * a bare loop of the calls tpbal times (sgemm, then a blocking MPI_Allreduce) on two
 * ranks, with a gap of D microseconds before rank 0's next GEMM filled in different
 * ways. Rank 0's median GEMM time is printed for each. When the gap is spent on
 * anything but the GEMM's own data (waiting for a late peer, spinning, streaming other
 * memory), the next GEMM runs slower (its operands left the cache); kept busy on the
 * same GEMM it does not. No tpbal code.
 *
 *   mpirun -np 2 bench/coldgemm [M N K] [D_US] [ITERS]     (default 64 256 512 4000 100)
 */
#include <cblas.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

enum { NONE, PEER_SLEEPS, PEER_SPINS, SELF_SPINS, SELF_STREAMS, SELF_GEMMS, NMODES };
static const char *const names[NMODES] = {
    "no gap",
    "rank 1 sleeps D (rank 0 waits in MPI)",
    "rank 1 spins D (rank 0 waits in MPI)",
    "rank 0 spins D itself",
    "rank 0 streams 4 MiB of other memory for D",
    "rank 0 repeats the same GEMM for D",
};

typedef struct {
    int m, n, k;
    float *a, *b, *c;
} gemm_t;

static void gemm(const gemm_t *g)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, g->m, g->n, g->k, 1.0f, g->a, g->k, g->b,
                g->k, 0.0f, g->c, g->n);
}

/* Fill the gap before rank `me`'s next GEMM the way `mode` says. */
static void gap(int mode, int me, double d, const gemm_t *g, float *other, size_t nother)
{
    double end = now_us() + d;
    if (mode == PEER_SLEEPS && me == 1)
        usleep((useconds_t)d);
    else if (mode == PEER_SPINS && me == 1)
        while (now_us() < end)
            ;
    else if (mode == SELF_SPINS && me == 0)
        while (now_us() < end)
            ;
    else if (mode == SELF_STREAMS && me == 0) {
        volatile float sink = 0.0f;
        while (now_us() < end)
            for (size_t i = 0; i < nother; i += 16)
                sink += other[i];
    } else if (mode == SELF_GEMMS && me == 0)
        while (now_us() < end)
            gemm(g);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    gemm_t g = {argc > 3 ? atoi(argv[1]) : 64,
                argc > 3 ? atoi(argv[2]) : 256,
                argc > 3 ? atoi(argv[3]) : 512,
                NULL,
                NULL,
                NULL};
    double d = argc > 4 ? atof(argv[4]) : 4000.0;
    int iters = argc > 5 ? atoi(argv[5]) : 100;
    size_t nother = (size_t)1 << 20, nred = (size_t)g.m * (size_t)g.n;
    g.a = calloc((size_t)g.m * g.k, sizeof(float));
    g.b = calloc((size_t)g.n * g.k, sizeof(float));
    g.c = calloc(nred, sizeof(float));
    float *other = calloc(nother, sizeof(float)), *red = calloc(nred, sizeof(float));
    double *t = calloc((size_t)iters, sizeof(double));
    if (!g.a || !g.b || !g.c || !other || !red || !t || iters < 1) {
        fprintf(stderr, "coldgemm: out of memory or bad arguments\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (size_t i = 0; i < (size_t)g.m * g.k; i++)
        g.a[i] = 1e-3f * (float)(i % 7);
    for (size_t i = 0; i < (size_t)g.n * g.k; i++)
        g.b[i] = 1e-3f * (float)(i % 5);
    if (me == 0)
        printf("# rank 0's median GEMM %dx%dx%d, gap D = %.0f us, %d iterations\n", g.m, g.n, g.k,
               d, iters);
    for (int mode = 0; mode < NMODES; mode++) {
        for (int i = -10; i < iters; i++) {
            double t0 = now_us();
            gemm(&g);
            if (i >= 0)
                t[i] = now_us() - t0;
            if (mode != NONE)
                gap(mode, me, d, &g, other, nother);
            MPI_Allreduce(MPI_IN_PLACE, red, (int)nred, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        }
        qsort(t, (size_t)iters, sizeof(double), cmp);
        if (me == 0)
            printf("%-45s %8.0f us\n", names[mode], t[iters / 2]);
    }
    free(g.a);
    free(g.b);
    free(g.c);
    free(other);
    free(red);
    free(t);
    MPI_Finalize();
    return 0;
}
