/*
 * layer_check.c - --check: what a rank holds of Y at sampled rows and columns against an fp64
 * reference computed from the generator's global indices (base/rng.h), never from buffers read
 * back from the device, so that a shard filled from the wrong place fails. The samples hold
 * every boundary where a wrong offset shows: the first and last row and column, each shard's
 * first and last column (col), each chunk's first and last row (--overlap chunked) and, where a
 * collective cuts M by rank (sequence parallelism, reduce-scatter), each rank's row block's, the
 * first columns of a cost profile's blocks, and seeded random rows and columns. Its cost is (rows +
 * columns) x K draws and a rows x columns x K product: well under a second at the largest preset,
 * where the whole fp64 GEMM took hours.
 */
#include "run/layer_impl.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/rng.h"

#define TPB_CHECK_RANDOM 16 /* seeded random rows, and as many columns */

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* v[n] sorted, each value once; the count. */
static int unique(long *v, int n)
{
    qsort(v, (size_t)n, sizeof(long), cmp_long);
    int u = 0;
    for (int i = 0; i < n; i++)
        if (u == 0 || v[u - 1] != v[i])
            v[u++] = v[i];
    return u;
}

/* Append a and b (a block's first and last index) where they lie in [0, lim). */
static int edges(long *v, int n, long a, long b, long lim)
{
    if (a >= 0 && a < lim)
        v[n++] = a;
    if (b >= 0 && b < lim)
        v[n++] = b;
    return n;
}

/* Seeded random indices in [0, lim) (the same on every rank: a function of the seed). */
static int random_picks(long *v, int n, long lim, uint64_t seed, uint32_t salt)
{
    for (int i = 0; i < TPB_CHECK_RANDOM && lim > 0; i++) {
        double u = 0.5 * (1.0 + erf(tpb_rng_normal(seed, salt, (uint64_t)i, 0) / sqrt(2.0)));
        long x = (long)(u * (double)lim);
        v[n++] = x < lim ? x : lim - 1;
    }
    return n;
}

/* The sampled rows of Y (malloc'd, *n of them). */
static long *sample_rows(const tpb_layer_desc_t *d, int *n)
{
    int nc = tpb_layer_nchunks(d), cap = 2 + 2 * nc * (d->tp + 1) + TPB_CHECK_RANDOM;
    long *v = malloc((size_t)cap * sizeof(long));
    if (!v)
        return NULL;
    int k = edges(v, 0, 0, d->m - 1, d->m);
    int by_rows = d->coll->scatters || d->coll->gathers_x; /* a collective cuts M by rank */
    long r0, rows, share, start;
    for (int c = 0; c < nc; c++) { /* each chunk, and each rank's rows of it */
        tpb_layer_row_share(d->m, nc, c, &rows, &r0);
        k = edges(v, k, r0, r0 + rows - 1, d->m);
        for (int q = 0; by_rows && q < d->tp; q++) {
            tpb_layer_row_share(rows, d->tp, q, &share, &start);
            if (share > 0)
                k = edges(v, k, r0 + start, r0 + start + share - 1, d->m);
        }
    }
    k = random_picks(v, k, d->m, d->seed, 0x7001);
    *n = unique(v, k);
    return v;
}

/* The sampled columns of Y (malloc'd, *n of them). */
static long *sample_cols(const tpb_layer_desc_t *d, int *n)
{
    int col = d->orient->split == TPB_SPLIT_COL, blocks = 0;
    if (col && tpb_layer_sparse(d))
        blocks = d->profile->nblocks < 32 ? d->profile->nblocks : 32;
    int cap = 2 + 2 * d->tp + blocks + TPB_CHECK_RANDOM;
    long *v = malloc((size_t)cap * sizeof(long));
    if (!v)
        return NULL;
    int k = edges(v, 0, 0, d->n - 1, d->n);
    for (long q = 0, off = 0; col && q < d->tp; off += d->shards[q++])
        k = edges(v, k, off, off + d->shards[q] - 1, d->n);
    long units = d->granularity > 0 ? d->n / d->granularity : d->n;
    for (int b = 0; b < blocks; b++) /* a block's first column (costprofile.h's geometry) */
        v[k++] = (long)((double)b * (double)units / d->profile->nblocks) *
                 (d->granularity > 0 ? d->granularity : 1);
    k = random_picks(v, k, d->n, d->seed, 0x7002);
    *n = unique(v, k);
    return v;
}

/* rows[n] of the generated matrix id (K each), quantised to the dtype as the device got them,
 * into dst; W's rows with the cost profile's zeros. */
static tpb_status_t reference_rows(const tpb_layer_desc_t *d, int id, const long *rows, int n,
                                   double *dst)
{
    size_t all = (size_t)n * (size_t)d->k;
    void *q = malloc((all ? all : 1) * tpb_dtype_in_size(d->dtype));
    if (!q)
        return tpb_err_set(TPB_ERR_NOMEM, "--check: no host memory for %d reference rows", n);
    tpb_rng_rows(dst, rows, n, d->k, d->seed, (uint32_t)id,
                 id == TPB_MAT_W ? 1.0 / sqrt((double)d->k) : 1.0, 0);
    tpb_dtype_encode(d->dtype, dst, q, all);
    tpb_dtype_decode(d->dtype, q, dst, all);
    free(q);
    for (int r = 0; id == TPB_MAT_W && tpb_layer_sparse(d) && r < n; r++)
        TPB_CHECK_RET(tpb_layer_sparse_mask(d, dst + (size_t)r * (size_t)d->k, rows[r], 1));
    return TPB_OK;
}

/* The sampled rows this rank compares: all, or (all == 0) every tp-th from its group rank's. */
static int mine(const tpb_layer_desc_t *d, int all, int r)
{
    return all || r % d->tp == d->group_rank;
}

/* A sampled element this rank holds: where in its Y buffer, and which sample. */
typedef struct {
    long at;
    int r, c;
} pick_t;

static int cmp_pick(const void *a, const void *b)
{
    long x = ((const pick_t *)a)->at, y = ((const pick_t *)b)->at;
    return (x > y) - (x < y);
}

/* Y at the picks p[n] (sorted by place) into y[n]: read from the device in runs of nearby
 * places (one copy a run, not one an element), decoded. */
static tpb_status_t read_picks(tpb_layer_t *l, const pick_t *p, int n, double *y)
{
    enum { RUN = 1 << 16 }; /* elements a copy spans at most */
    size_t osz = tpb_dtype_out_size(l->d.dtype);
    unsigned char *raw = malloc((size_t)RUN * osz);
    if (!raw)
        return tpb_err_set(TPB_ERR_NOMEM, "--check: no host memory to read Y");
    tpb_status_t st = TPB_OK;
    for (int i = 0, e; i < n && st == TPB_OK; i = e) {
        for (e = i + 1; e < n && p[e].at - p[i].at < RUN;)
            e++;
        size_t span = (size_t)(p[e - 1].at - p[i].at + 1);
        st = tpb_dev_copy(l->dev, raw,
                          (const unsigned char *)tpb_layer_result(l) + (size_t)p[i].at * osz,
                          span * osz, TPB_COPY_TO_HOST);
        for (int j = i; j < e && st == TPB_OK; j++)
            tpb_dtype_decode(tpb_dtype_out(l->d.dtype), raw + (size_t)(p[j].at - p[i].at) * osz,
                             &y[j], 1);
    }
    free(raw);
    return st;
}

/* max |Y - ref| and max |ref| over the sampled elements this rank holds and compares. */
static tpb_status_t compare(tpb_layer_t *l, int all, const long *ri, int nr, const long *cj,
                            int ncol, const double *ref, double *max_err, double *max_ref)
{
    pick_t *p = malloc(((size_t)nr * (size_t)ncol + 1) * sizeof(*p));
    double *y = malloc(((size_t)nr * (size_t)ncol + 1) * sizeof(*y));
    int n = 0;
    tpb_status_t st = p && y ? TPB_OK : tpb_err_set(TPB_ERR_NOMEM, "--check: out of memory");
    for (int r = 0; st == TPB_OK && r < nr; r++)
        for (int c = 0; mine(&l->d, all, r) && c < ncol; c++) {
            long at = l->d.coll->y_index(l, ri[r], cj[c]);
            if (at >= 0) /* else not held here (a scattered part) */
                p[n++] = (pick_t){at, r, c};
        }
    if (st == TPB_OK) {
        qsort(p, (size_t)n, sizeof(*p), cmp_pick);
        st = read_picks(l, p, n, y);
    }
    *max_err = *max_ref = 0.0;
    for (int i = 0; st == TPB_OK && i < n; i++) {
        double want = ref[(size_t)p[i].r * (size_t)ncol + (size_t)p[i].c], e = fabs(y[i] - want);
        *max_ref = fmax(*max_ref, fabs(want));
        *max_err = isnan(e) ? INFINITY : fmax(*max_err, e);
    }
    free(p);
    free(y);
    return st;
}

tpb_status_t tpb_check_samples(const tpb_layer_desc_t *d, long **rows, int *nr, long **cols,
                               int *ncol)
{
    *rows = sample_rows(d, nr);
    *cols = sample_cols(d, ncol);
    if (*rows && *cols)
        return TPB_OK;
    free(*rows);
    free(*cols);
    *rows = *cols = NULL;
    return tpb_err_set(TPB_ERR_NOMEM, "--check: no host memory for its samples");
}

tpb_status_t tpb_check_reference(const tpb_layer_desc_t *d, const long *rows, int nr,
                                 const long *cols, int ncol, double *ref)
{
    size_t k = (size_t)d->k;
    double *x = malloc(((size_t)nr * k + 1) * sizeof(double));
    double *w = malloc(((size_t)ncol * k + 1) * sizeof(double));
    tpb_status_t st = TPB_OK;
    if (!x || !w)
        st = tpb_err_set(TPB_ERR_NOMEM, "--check: no host memory for %d x %d samples", nr, ncol);
    if (st == TPB_OK)
        st = reference_rows(d, TPB_MAT_X, rows, nr, x);
    if (st == TPB_OK)
        st = reference_rows(d, TPB_MAT_W, cols, ncol, w);
    if (st == TPB_OK) /* Y[i][j] = sum_k X[i][k] W[j][k] (W stored N x K) */
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, nr, ncol, (int)d->k, 1.0, x, (int)d->k,
                    w, (int)d->k, 0.0, ref, ncol);
    free(x);
    free(w);
    return st;
}

tpb_status_t tpb_layer_check(tpb_layer_t *l, int all, double *max_rel_err)
{
    int nr = 0, ncol = 0;
    long *ri = NULL, *cj = NULL;
    TPB_CHECK_RET(tpb_check_samples(&l->d, &ri, &nr, &cj, &ncol));
    double *ref = malloc(((size_t)nr * (size_t)ncol + 1) * sizeof(double));
    tpb_status_t st = ref ? tpb_check_reference(&l->d, ri, nr, cj, ncol, ref)
                          : tpb_err_set(TPB_ERR_NOMEM, "--check: out of memory");
    double max_err = 0.0, max_ref = 0.0;
    if (st == TPB_OK)
        st = compare(l, all, ri, nr, cj, ncol, ref, &max_err, &max_ref);
    if (st == TPB_OK)
        *max_rel_err = max_ref > 0.0 ? max_err / max_ref : max_err;
    free(ri);
    free(cj);
    free(ref);
    return st;
}

tpb_status_t tpb_layer_result_hash(tpb_layer_t *l, uint64_t *hash)
{
    size_t bytes = l->nresult * tpb_dtype_out_size(l->d.dtype), words = bytes / 8;
    unsigned char *raw = malloc(bytes + 8);
    if (!raw)
        return tpb_err_set(TPB_ERR_NOMEM, "--check: no host memory for %zu bytes of Y", bytes);
    tpb_status_t st = tpb_dev_copy(l->dev, raw, tpb_layer_result(l), bytes, TPB_COPY_TO_HOST);
    uint64_t h = 14695981039346656037ull, v;
    for (size_t i = 0; st == TPB_OK && i < words; i++) { /* a word at a time: 128 MiB in ~0.1 s */
        memcpy(&v, raw + 8 * i, 8);
        h = (h ^ v) * 1099511628211ull;
        h ^= h >> 29;
    }
    for (size_t i = 8 * words; st == TPB_OK && i < bytes; i++)
        h = (h ^ raw[i]) * 1099511628211ull;
    *hash = h;
    free(raw);
    return st;
}
