/* rng.c - splitmix64 hashing and Box-Muller: a normal value per matrix element. */
#include "base/rng.h"

#include <math.h>
#include <stdlib.h>

#include "base/rng_internal.h"
#include "base/stamp.h"
#include "base/threads.h"

/* The normal value of an element from its row's part of the hash. */
static double normal_at(uint64_t seed, uint64_t row_part, uint64_t j)
{
    uint64_t a, b;
    tpb_rng_bits(seed, row_part, j, &a, &b);
    return tpb_rng_exact(a, b);
}

double tpb_rng_normal(uint64_t seed, uint32_t id, uint64_t i, uint64_t j)
{
    return normal_at(seed, tpb_rng_row_part(id, i), j);
}

void tpb_rng_row(double *dst, long n, uint64_t seed, uint32_t id, uint64_t i, uint64_t j0,
                 double scale)
{
    uint64_t rp = tpb_rng_row_part(id, i);
    for (long c = 0; c < n; c++)
        dst[c] = scale * normal_at(seed, rp, j0 + (uint64_t)c);
}

void tpb_rng_fill(double *dst, long rows, long cols, long ld, long row0, long col0, uint64_t seed,
                  uint32_t id, double scale)
{
    for (long r = 0; r < rows; r++)
        tpb_rng_row(dst + r * ld, cols, seed, id, (uint64_t)(row0 + r), (uint64_t)col0, scale);
}

/* Threads for `work` elements: `asked`, or (0) the CPUs with none below 64 Ki elements each;
 * at most `most` (the rows there are). */
static int threads_for(int asked, double work, long most)
{
    enum { MIN_ELEMS = 1 << 16 };
    int t = asked > 0 ? asked : tpb_cpus();
    t = t > TPB_MAX_THREADS ? TPB_MAX_THREADS : t;
    if (asked <= 0 && work < (double)MIN_ELEMS * t)
        t = work < 2.0 * MIN_ELEMS ? 1 : (int)(work / MIN_ELEMS);
    return t > most ? (most > 0 ? (int)most : 1) : t;
}

/* One thread's rows of tpb_rng_encode: [r0, r1) of the block. */
typedef struct {
    unsigned char *enc;
    long r0, r1, cols, row0, col0;
    uint64_t seed;
    uint32_t id;
    double scale;
    tpb_dtype_t dt;
    int failed;
} part_t;

/* Row r of the part, columns [c0, c0 + n) of the block, into `at`: fp64 as drawn, the narrower
 * dtypes through tpb_rng_row_encode (glibc's log and cos only where the encoding needs them). */
static void encode_cols(const part_t *p, long r, long c0, long n, unsigned char *at, double *tmp)
{
    uint64_t i = (uint64_t)(p->row0 + r), j0 = (uint64_t)(p->col0 + c0);
    if (p->dt == TPB_DTYPE_FP64)
        tpb_rng_row((double *)at, n, p->seed, p->id, i, j0, p->scale);
    else
        tpb_rng_row_encode(at, n, p->seed, tpb_rng_row_part(p->id, i), j0, p->scale, p->dt, tmp);
}

static void *encode_part(void *arg)
{
    enum { CHUNK = 4096 }; /* columns at a time: the scratch stays in the cache */
    part_t *p = arg;
    size_t esz = tpb_dtype_in_size(p->dt);
    double *tmp = malloc(3 * CHUNK * sizeof(double));
    if (!tmp) {
        p->failed = 1;
        return NULL;
    }
    for (long r = p->r0; r < p->r1; r++) {
        unsigned char *row = p->enc + (size_t)r * (size_t)p->cols * esz;
        for (long c0 = 0; c0 < p->cols; c0 += CHUNK)
            encode_cols(p, r, c0, p->cols - c0 < CHUNK ? p->cols - c0 : CHUNK,
                        row + (size_t)c0 * esz, tmp);
        if ((r & 63) == 63)
            tpb_stamp_progress(); /* a long generation is progress, not a stall */
    }
    free(tmp);
    return NULL;
}

tpb_status_t tpb_rng_encode(void *enc, long rows, long cols, long row0, long col0, uint64_t seed,
                            uint32_t id, double scale, tpb_dtype_t dt, int threads)
{
    int n = threads_for(threads, (double)rows * (double)cols, rows), failed = 0;
    part_t parts[TPB_MAX_THREADS];
    for (int t = 0; t < n; t++)
        parts[t] = (part_t){.enc = enc,
                            .r0 = rows * t / n,
                            .r1 = rows * (t + 1) / n,
                            .cols = cols,
                            .row0 = row0,
                            .col0 = col0,
                            .seed = seed,
                            .id = id,
                            .scale = scale,
                            .dt = dt};
    tpb_run_parts(n, encode_part, parts, sizeof(parts[0]));
    for (int t = 0; t < n; t++)
        failed |= parts[t].failed;
    if (failed)
        return tpb_err_set(TPB_ERR_NOMEM, "no host memory for a thread's scratch of inputs");
    return TPB_OK;
}

typedef struct {
    unsigned char *enc;
    size_t from, to;
    uint64_t seed;
    tpb_dtype_t dt;
} uniform_part_t;

static void *uniform_part(void *arg)
{
    enum { CHUNK = 4096 };
    uniform_part_t *p = arg;
    double v[CHUNK];
    size_t esz = tpb_dtype_in_size(p->dt);
    for (size_t at = p->from; at < p->to; at += CHUNK) {
        size_t k = p->to - at < CHUNK ? p->to - at : CHUNK;
        for (size_t i = 0; i < k; i++) /* [-1, 1): 53 bits of the hash */
            v[i] = (double)(tpb_splitmix64(p->seed ^ (at + i)) >> 11) * 0x1.0p-52 - 1.0;
        tpb_dtype_encode(p->dt, v, p->enc + at * esz, k);
    }
    return NULL;
}

void tpb_rng_uniform_encode(void *enc, size_t n, uint64_t seed, tpb_dtype_t dt)
{
    int nt = threads_for(0, (double)n, n > (size_t)TPB_MAX_THREADS ? TPB_MAX_THREADS : (long)n);
    uniform_part_t parts[TPB_MAX_THREADS];
    for (int t = 0; t < nt; t++)
        parts[t] = (uniform_part_t){enc, n * (size_t)t / (size_t)nt,
                                    n * (size_t)(t + 1) / (size_t)nt, seed, dt};
    tpb_run_parts(nt, uniform_part, parts, sizeof(parts[0]));
}

typedef struct {
    double *dst;
    const long *rows;
    int from, to;
    long cols;
    uint64_t seed;
    uint32_t id;
    double scale;
} rows_part_t;

static void *rows_part(void *arg)
{
    rows_part_t *p = arg;
    for (int r = p->from; r < p->to; r++)
        tpb_rng_row(p->dst + (size_t)r * (size_t)p->cols, p->cols, p->seed, p->id,
                    (uint64_t)p->rows[r], 0, p->scale);
    return NULL;
}

void tpb_rng_rows(double *dst, const long *rows, int n, long cols, uint64_t seed, uint32_t id,
                  double scale, int threads)
{
    int nt = threads_for(threads, (double)n * (double)cols, n);
    rows_part_t parts[TPB_MAX_THREADS];
    for (int t = 0; t < nt; t++)
        parts[t] = (rows_part_t){dst, rows, n * t / nt, n * (t + 1) / nt, cols, seed, id, scale};
    tpb_run_parts(nt, rows_part, parts, sizeof(parts[0]));
}
