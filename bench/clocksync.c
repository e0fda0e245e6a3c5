/*
 * clocksync.c - the clock sync's cost and agreement: the binomial tree (tpb_clock_sync)
 * against the serial reference it replaced (tpb_clock_sync_serial), on the ranks it is
 * launched with, with an offset injected on every rank.
 *
 *   mpirun -np P bench/clocksync [EXCHANGES [REPEATS]]     (defaults 50 and 5)
 *
 * Prints, per method: the pairs of ping-pongs on the critical path (tree: ceil(log2 P)
 * rounds; serial: rank 0's P - 1 pairs), the median wall time of a sync (the slowest rank's,
 * barrier to return), and the median of the least RTTs the pairs measured; then the largest
 * |tree - serial| offset against the sum of their stated uncertainties (rtt/2 each), the
 * largest error against the injected truth, and the model's projection to 131,072 ranks:
 * rounds x EXCHANGES x RTT (+ the pairs' gather, log2 P x RTT/2 + 24 B x P at 10 GB/s) at
 * a 5 us round trip, and the serial's (P - 1) x EXCHANGES x RTT.
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/clocktree.h"
#include "base/stats.h"
#include "run/clocksync.h"

typedef tpb_status_t (*sync_fn)(MPI_Comm, const tpb_clock_t *, int, tpb_clock_sample_t *);

static double injected(int r)
{
    return (r % 2 ? 1.0 : -1.0) * 1000.0 * (double)((r * 337) % 1000);
}

/* The median wall time (slowest rank) of `repeats` syncs; the last sync's samples. */
static double timed(sync_fn fn, const tpb_clock_t *c, int ex, int repeats, tpb_clock_sample_t *s)
{
    double t[64];
    for (int i = 0; i < repeats && i < 64; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        if (fn(MPI_COMM_WORLD, c, ex, s) != TPB_OK)
            MPI_Abort(MPI_COMM_WORLD, 1);
        double mine = MPI_Wtime() - t0;
        MPI_Allreduce(&mine, &t[i], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    }
    return tpb_stats_median(t, (size_t)(repeats < 64 ? repeats : 64)) * 1e6;
}

/* The median of the pairs' own RTTs: the serial's are direct; the tree's, its samples'
 * composed RTTs less their parent's. */
static double median_pair_rtt(const tpb_clock_sample_t *s, int n, int tree)
{
    double *v = malloc((size_t)n * sizeof(*v));
    int k = 0;
    for (int r = 1; v && r < n; r++)
        v[k++] = s[r].rtt_us - (tree ? s[tpb_clock_tree_parent(r)].rtt_us : 0.0);
    double m = k ? tpb_stats_median(v, (size_t)k) : 0.0;
    free(v);
    return m;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int ex = argc > 1 ? atoi(argv[1]) : TPB_CLOCK_EXCHANGES;
    int repeats = argc > 2 ? atoi(argv[2]) : 5;
    tpb_clock_t c = {injected(rank)};
    tpb_clock_sample_t *tree = calloc((size_t)size, sizeof(*tree));
    tpb_clock_sample_t *serial = calloc((size_t)size, sizeof(*serial));
    if (ex < 1 || repeats < 1 || !tree || !serial)
        MPI_Abort(MPI_COMM_WORLD, 2);
    double tt = timed(tpb_clock_sync, &c, ex, repeats, tree);
    double ts = timed(tpb_clock_sync_serial, &c, ex, repeats, serial);
    if (rank == 0) {
        double gap = 0, gap_bound = 0, err_tree = 0, err_serial = 0, unc = 0;
        int outside = 0;
        for (int r = 1; r < size; r++) {
            double truth = injected(r) - injected(0),
                   d = fabs(tree[r].offset_us - serial[r].offset_us);
            double bound = 0.5 * (tree[r].rtt_us + serial[r].rtt_us);
            outside += d > bound + 0.01;
            if (d > gap) {
                gap = d;
                gap_bound = bound;
            }
            err_tree = fmax(err_tree, fabs(tree[r].offset_us - truth));
            err_serial = fmax(err_serial, fabs(serial[r].offset_us - truth));
            unc = fmax(unc, 0.5 * tree[r].rtt_us);
        }
        int rounds = tpb_clock_tree_rounds(size);
        double rtt_t = median_pair_rtt(tree, size, 1), rtt_s = median_pair_rtt(serial, size, 0);
        printf("clock sync on %d ranks, %d ping-pongs per pair, median of %d syncs\n", size, ex,
               repeats);
        printf("  %-7s %10s %12s %14s\n", "method", "pairs", "sync (us)", "pair RTT (us)");
        printf("  %-7s %10d %12.1f %14.2f\n", "tree", rounds, tt, rtt_t);
        printf("  %-7s %10d %12.1f %14.2f\n", "serial", size - 1, ts, rtt_s);
        printf("  |tree - serial| <= %.2f us (its bound, the two rtt/2: %.2f us); outside "
               "their bounds: %d of %d ranks\n",
               gap, gap_bound, outside, size - 1);
        printf("  largest error against the injected offsets: tree %.2f us (largest stated "
               "uncertainty %.2f us), serial %.2f us\n",
               err_tree, unc, err_serial);
        double rtt = 5.0, big = 131072.0;
        int rb = tpb_clock_tree_rounds(131072);
        double tree_s = (rb * ex * rtt + rb * 0.5 * rtt + 24.0 * big / 1e4) * 1e-6;
        printf("  projection to 131072 ranks at a %.0f us round trip: tree %d rounds, %.4f s; "
               "serial %.1f s\n",
               rtt, rb, tree_s, (big - 1) * ex * rtt * 1e-6);
    }
    free(tree);
    free(serial);
    MPI_Finalize();
    return 0;
}
