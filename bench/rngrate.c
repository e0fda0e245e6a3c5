/*
 * rngrate.c - the input generator's rate, fast path against the exact one (glibc's log and
 * cos, the values the golden tests pin), in each dtype, and whether their bytes agree.
 * Usage: bench/rngrate [ROWS COLS [REPS]]  (default 1024 8192 3: 8 Mi elements a dtype)
 * Prints per dtype: ns an element of the exact draw (tpb_rng_fill then tpb_dtype_encode, one
 * thread), of tpb_rng_encode on one thread and on every CPU this process may use (best of
 * REPS), the speed-up, and "same" when the encoded bytes are identical; then the draw of an
 * 8192^3 config's X and W (2 x 8192^2 elements) at the all-CPU rate, and how many elements the
 * fast path drew with glibc's functions after all (its interval straddled a rounding boundary;
 * fp64: every one); then by code path (scalar, AVX2, AVX-512: "-" where the CPU lacks it) the
 * approximation alone and bf16's whole fast path, and whether a vector path's values are
 * AVX2's bit for bit. Results:
 * doc/METRICS.md, "Host time".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/rng.h"
#include "base/rng_internal.h"
#include "base/threads.h"

static double now_s(void)
{
    return tpb_clock_now_us(NULL) * 1e-6;
}

/* Best seconds of `reps` tpb_rng_encode calls on `threads` (0: every CPU). */
static double fast_s(void *enc, long rows, long cols, tpb_dtype_t dt, int threads, int reps)
{
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = now_s();
        if (tpb_rng_encode(enc, rows, cols, 0, 0, 42, 1, 0.5, dt, threads) != TPB_OK)
            return -1.0;
        double t = now_s() - t0;
        best = t < best ? t : best;
    }
    return best;
}

/* The elements of the block the fast path drew exactly (-1: no memory for its scratch). */
static long exact_draws(void *enc, long rows, long cols, tpb_dtype_t dt)
{
    if (dt == TPB_DTYPE_FP64)
        return rows * cols;
    double *tmp = malloc(3 * (size_t)cols * sizeof(double));
    long n = 0;
    for (long r = 0; tmp && r < rows; r++)
        n += tpb_rng_row_encode(enc, cols, 42, tpb_rng_row_part(1, (uint64_t)r), 0, 0.5, dt, tmp);
    free(tmp);
    return tmp ? n : -1;
}

/* Best ns an element of the approximation alone by `path` over rows of cols (one thread) into
 * v; -1 where the CPU lacks the path. */
static double approx_ns(double *v, long rows, long cols, int path, int reps)
{
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = now_s();
        for (long i = 0; i < rows; i++)
            if (tpb_rng_approx_row(v + i * cols, cols, 42, tpb_rng_row_part(1, (uint64_t)i), 0,
                                   path) != 0)
                return -1.0;
        double t = now_s() - t0;
        best = t < best ? t : best;
    }
    return best / (double)(rows * cols) * 1e9;
}

/* Best ns an element of bf16's whole fast path by `path` (tpb_rng_row_encode_path, one
 * thread) over rows of cols into enc; -1 where the CPU lacks the path. */
static double encode_ns(void *enc, double *tmp, long rows, long cols, int path, int reps)
{
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = now_s();
        for (long i = 0; i < rows; i++)
            if (tpb_rng_row_encode_path((uint16_t *)enc + i * cols, cols, 42,
                                        tpb_rng_row_part(1, (uint64_t)i), 0, 0.5, TPB_DTYPE_BF16,
                                        tmp, path) < 0)
                return -1.0;
        double t = now_s() - t0;
        best = t < best ? t : best;
    }
    return best / (double)(rows * cols) * 1e9;
}

/* By code path: the approximation's rate, whether a vector path's values are AVX2's, and
 * bf16's whole fast path. */
static void approx_table(double *a, double *b, long rows, long cols, int reps)
{
    static const char *const names[] = {"scalar", "AVX2", "AVX-512"};
    const int paths[] = {TPB_RNG_PATH_SCALAR, TPB_RNG_PATH_AVX2, TPB_RNG_PATH_AVX512};
    size_t bytes = (size_t)rows * (size_t)cols * sizeof(double);
    double *tmp = malloc(3 * (size_t)cols * sizeof(double));
    printf("# by code path, one thread, ns an element: the approximation alone "
           "(tpb_rng_approx_row), bf16 encoded (tpb_rng_row_encode)\n");
    int have2 = approx_ns(a, rows, cols, TPB_RNG_PATH_AVX2, 1) >= 0; /* a: AVX2's values */
    for (int p = 0; p < 3 && tmp; p++) {
        double ns = approx_ns(b, rows, cols, paths[p], reps);
        if (ns < 0) {
            printf("%-8s %9s %9s\n", names[p], "-", "-");
            continue;
        }
        int same = memcmp(a, b, bytes) == 0;
        printf("%-8s %9.2f %9.2f %s\n", names[p], ns, encode_ns(b, tmp, rows, cols, paths[p], reps),
               p == 0 || !have2 ? ""
               : same           ? "AVX2's values"
                                : "DIFF");
    }
    free(tmp);
}

int main(int argc, char **argv)
{
    long rows = argc > 2 ? atol(argv[1]) : 1024, cols = argc > 2 ? atol(argv[2]) : 8192;
    int reps = argc > 3 ? atoi(argv[3]) : 3;
    size_t n = (size_t)rows * (size_t)cols;
    double *ref = malloc(n * sizeof(double));
    unsigned char *want = malloc(n * 8), *got = malloc(n * 8);
    if (rows < 1 || cols < 1 || reps < 1 || !ref || !want || !got) {
        fprintf(stderr, "usage: bench/rngrate [ROWS COLS [REPS]] (or no memory)\n");
        return 2;
    }
    printf("# %ld x %ld elements, %d CPUs; ns an element\n", rows, cols, tpb_cpus());
    printf("%-5s %9s %9s %9s %8s %5s %14s %12s\n", "dtype", "exact", "fast-1", "fast-all",
           "speedup", "bytes", "8192^3 X+W s", "drawn exact");
    for (int d = 0; d < TPB_DTYPE_COUNT; d++) {
        tpb_dtype_t dt = (tpb_dtype_t)d;
        double t0 = now_s();
        tpb_rng_fill(ref, rows, cols, cols, 0, 0, 42, 1, 0.5);
        tpb_dtype_encode(dt, ref, want, n);
        double exact = now_s() - t0;
        double one = fast_s(got, rows, cols, dt, 1, reps),
               all = fast_s(got, rows, cols, dt, 0, reps);
        if (one < 0 || all < 0) {
            fprintf(stderr, "bench/rngrate: no memory for the threads' scratch\n");
            return 1;
        }
        int same = memcmp(want, got, n * tpb_dtype_in_size(dt)) == 0;
        printf("%-5s %9.2f %9.2f %9.2f %7.2fx %5s %14.3f %12ld\n", tpb_dtype_name(dt),
               exact / n * 1e9, one / n * 1e9, all / n * 1e9, exact / one, same ? "same" : "DIFF",
               all / n * 2.0 * 8192 * 8192, exact_draws(got, rows, cols, dt));
        if (!same)
            return 1;
    }
    approx_table(ref, (double *)want, rows, cols, reps);
    free(ref);
    free(want);
    free(got);
    return 0;
}
