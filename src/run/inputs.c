/* inputs.c - seeded matrices generated once and kept (inputs.h). */
#include "run/inputs.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/rng.h"
#include "base/sizes.h"
#include "base/stamp.h"
#include "base/threads.h"

enum { KEPT = 4 }; /* X and W of two shapes */

typedef struct {
    tpb_inputs_block_t key; /* rows, cols, seed, id, scale, dtype (the block fields unused) */
    unsigned char *enc;
    size_t bytes;
    unsigned long used; /* the use counter when last used (0: empty) */
} kept_t;

static kept_t kept[KEPT];
static unsigned long uses;
static int sharers = 1; /* the node's ranks, each keeping its own */
static double drawn_us; /* drawing, since tpb_inputs_drawn_s last read it */

void tpb_inputs_share(int local_ranks)
{
    sharers = local_ranks > 0 ? local_ranks : 1;
}

double tpb_inputs_drawn_s(void)
{
    double s = drawn_us * 1e-6;
    drawn_us = 0.0;
    return s;
}

double tpb_inputs_budget(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    double phys = pages > 0 && page > 0 ? (double)pages * (double)page : 8e9;
    double share = phys / 4.0 / sharers;
    return share < 8e9 ? share : 8e9;
}

/* tpb_rng_encode, its time counted as drawing. */
static tpb_status_t draw(void *enc, long rows, long cols, long row0, long col0,
                         const tpb_inputs_block_t *b)
{
    double t0 = tpb_clock_now_us(NULL);
    tpb_status_t st =
        tpb_rng_encode(enc, rows, cols, row0, col0, b->seed, b->id, b->scale, b->dtype, 0);
    drawn_us += tpb_clock_now_us(NULL) - t0;
    return st;
}

static int same_matrix(const tpb_inputs_block_t *a, const tpb_inputs_block_t *b)
{
    return a->rows == b->rows && a->cols == b->cols && a->seed == b->seed && a->id == b->id &&
           a->scale == b->scale && a->dtype == b->dtype;
}

static void drop(kept_t *k)
{
    free(k->enc);
    memset(k, 0, sizeof(*k));
}

/* The host buffer a block that is not whole kept rows passes through on its way to the device,
 * PACK_BYTES (or one row) at a time: kept for the run, so that a config's copy touches no fresh
 * pages (a 64 MiB block packed into new memory cost a rank ~16k page faults). */
enum { PACK_BYTES = 16 << 20 };
static unsigned char *pack;
static size_t pack_cap;

static void pack_free(void)
{
    free(pack);
    pack = NULL;
    pack_cap = 0;
}

static unsigned char *pack_buffer(size_t bytes)
{
    if (bytes <= pack_cap)
        return pack;
    unsigned char *p = realloc(pack, bytes);
    if (p) {
        pack = p;
        pack_cap = bytes;
    }
    return p;
}

void tpb_inputs_free(void)
{
    for (int i = 0; i < KEPT; i++)
        drop(&kept[i]);
    pack_free();
}

/* The slot keeping b's matrix, or -1. */
static int kept_slot(const tpb_inputs_block_t *b)
{
    for (int i = 0; i < KEPT; i++)
        if (kept[i].used && same_matrix(&kept[i].key, b))
            return i;
    return -1;
}

/* Room for b's matrix (bytes): the least recently used ones leave until it fits the budget;
 * the slot it takes (emptied) and its memory, or NULL where it does not fit (alone larger than
 * the budget, or no memory). Its pages are not present yet: the drawer makes them so
 * (tpb_populate, in threads), not a fault a page in the draw or the gather. */
static unsigned char *reserve(const tpb_inputs_block_t *b, size_t *bytes, int *slot)
{
    if (!tpb_size_mul3(b->rows, b->cols, tpb_dtype_in_size(b->dtype), bytes))
        return NULL;
    double held = (double)*bytes;
    for (int i = 0; i < KEPT; i++)
        held += (double)kept[i].bytes;
    while (held > tpb_inputs_budget()) { /* the least recently used ones leave */
        int lru = -1;
        for (int i = 0; i < KEPT; i++)
            if (kept[i].used && (lru < 0 || kept[i].used < kept[lru].used))
                lru = i;
        if (lru < 0)
            return NULL; /* alone larger than the budget */
        held -= (double)kept[lru].bytes;
        drop(&kept[lru]);
    }
    *slot = 0;
    for (int i = 1; i < KEPT; i++)
        if (kept[i].used < kept[*slot].used)
            *slot = i;
    drop(&kept[*slot]);
    return malloc(*bytes ? *bytes : 1);
}

static void keep(int slot, const tpb_inputs_block_t *b, unsigned char *enc, size_t bytes)
{
    kept[slot] = (kept_t){.key = *b, .enc = enc, .bytes = bytes, .used = ++uses};
}

/* The kept matrix of b, generated now if it is not kept yet; NULL where it does not fit the
 * budget (or memory): then b's block is drawn alone. */
static const unsigned char *matrix_of(const tpb_inputs_block_t *b, tpb_status_t *st)
{
    size_t bytes;
    int slot = kept_slot(b);
    *st = TPB_OK;
    if (slot >= 0) {
        kept[slot].used = ++uses;
        return kept[slot].enc;
    }
    unsigned char *enc = reserve(b, &bytes, &slot);
    if (!enc)
        return NULL;
    double t0 = tpb_clock_now_us(NULL);
    tpb_populate(enc, bytes, 0);
    drawn_us += tpb_clock_now_us(NULL) - t0;
    *st = draw(enc, b->rows, b->cols, 0, 0, b);
    if (*st != TPB_OK) {
        free(enc);
        return NULL;
    }
    keep(slot, b, enc, bytes);
    return enc;
}

/* Every rank's 1 in `mine` (the minimum over comm), or an MPI error. */
static tpb_status_t all_of(MPI_Comm comm, int mine, int *all)
{
    if (MPI_Allreduce(&mine, all, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
        return tpb_err_call(TPB_ERR_MPI, "MPI_Allreduce", "the inputs' draw", __FILE__, __LINE__);
    return TPB_OK;
}

/* Rank q's rows of a matrix drawn by `size` ranks: [rows q / size, rows (q + 1) / size). */
static long share_row(long rows, int q, int size)
{
    return (long)((long long)rows * q / size); /* rows <= INT_MAX: no overflow */
}

/* The ranks' shares of enc's rows (each drawn by its rank) gathered into every rank's enc. */
static tpb_status_t gather_rows(MPI_Comm comm, unsigned char *enc, const tpb_inputs_block_t *b)
{
    int size;
    MPI_Comm_size(comm, &size);
    int *counts = malloc(2 * (size_t)size * sizeof(int)), *displs = counts + size;
    if (!counts)
        return tpb_err_set(TPB_ERR_NOMEM, "no memory to gather the inputs");
    for (int q = 0; q < size; q++) {
        displs[q] = (int)share_row(b->rows, q, size);
        counts[q] = (int)(share_row(b->rows, q + 1, size) - displs[q]);
    }
    MPI_Datatype row;
    int rc =
        MPI_Type_contiguous((int)((size_t)b->cols * tpb_dtype_in_size(b->dtype)), MPI_BYTE, &row);
    if (rc == MPI_SUCCESS && (rc = MPI_Type_commit(&row)) == MPI_SUCCESS) {
        tpb_stamp_peers(1);
        rc = MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, enc, counts, displs, row, comm);
        tpb_stamp_peers(0);
        MPI_Type_free(&row);
    }
    free(counts);
    if (rc != MPI_SUCCESS)
        return tpb_err_call(TPB_ERR_MPI, "MPI_Allgatherv", "the inputs' rows", __FILE__, __LINE__);
    return TPB_OK;
}

/* Whether comm's ranks can share b's draw: its rows and a row's bytes count in an int. */
static int shareable(const tpb_inputs_block_t *b)
{
    return b->rows <= INT_MAX && (double)b->cols * (double)tpb_dtype_in_size(b->dtype) <= INT_MAX;
}

/* b's matrix kept on every rank of comm, drawn by all of them (tpb_inputs_prepare). */
static tpb_status_t prepare_one(MPI_Comm comm, const tpb_inputs_block_t *b)
{
    int slot = kept_slot(b), all, rank, size;
    TPB_CHECK_RET(all_of(comm, slot >= 0, &all));
    if (all) {
        kept[slot].used = ++uses;
        return TPB_OK;
    }
    if (slot >= 0) /* kept here, not everywhere: drawn again with the others */
        drop(&kept[slot]);
    size_t bytes = 0;
    unsigned char *enc = shareable(b) ? reserve(b, &bytes, &slot) : NULL;
    tpb_status_t st = all_of(comm, enc != NULL, &all);
    if (st != TPB_OK || !all) { /* not kept anywhere: tpb_inputs_fill draws the blocks */
        free(enc);
        return st;
    }
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    long r0 = share_row(b->rows, rank, size), r1 = share_row(b->rows, rank + 1, size);
    size_t row = (size_t)b->cols * tpb_dtype_in_size(b->dtype);
    double t0 = tpb_clock_now_us(NULL);
    tpb_populate(enc, bytes, 0); /* every row: its share drawn here, the others gathered */
    st = tpb_rng_encode(enc + (size_t)r0 * row, r1 - r0, b->cols, r0, 0, b->seed, b->id, b->scale,
                        b->dtype, 0);
    TPB_CHECK_GOTO(all_of(comm, st == TPB_OK, &all), st, out);
    if (!all) {
        st = st != TPB_OK ? st : tpb_err_set(TPB_ERR_NOMEM, "another rank could not draw inputs");
        goto out;
    }
    TPB_CHECK_GOTO(gather_rows(comm, enc, b), st, out);
    drawn_us += tpb_clock_now_us(NULL) - t0; /* the share and the gather */
    keep(slot, b, enc, bytes);
    return TPB_OK;
out:
    free(enc);
    return st;
}

tpb_status_t tpb_inputs_prepare(MPI_Comm comm, const tpb_inputs_block_t *m, int n)
{
    for (int i = 0; i < n; i++)
        TPB_CHECK_RET(prepare_one(comm, &m[i]));
    return TPB_OK;
}

tpb_status_t tpb_inputs_fill(tpb_device_t *dev, void *dst, const tpb_inputs_block_t *b)
{
    size_t esz = tpb_dtype_in_size(b->dtype), bytes;
    if (!tpb_size_mul3(b->nr, b->nc, esz, &bytes))
        return tpb_err_set(TPB_ERR_NOMEM, "a %ldx%ld input: size overflows", b->nr, b->nc);
    tpb_status_t st;
    const unsigned char *m = matrix_of(b, &st);
    TPB_CHECK_RET(st);
    size_t row = (size_t)b->cols * esz, at = (size_t)b->r0 * row + (size_t)b->c0 * esz;
    if (m && b->nc == b->cols) /* whole rows: one copy out of the kept matrix */
        return tpb_dev_copy(dev, dst, m + at, bytes, TPB_COPY_TO_BACKEND);
    size_t width = (size_t)b->nc * esz;
    long step = width && width < PACK_BYTES ? (long)(PACK_BYTES / width) : 1;
    unsigned char *buf = pack_buffer(width * (size_t)(step < b->nr ? step : b->nr) + 1);
    if (!buf)
        return tpb_err_set(TPB_ERR_NOMEM, "no host memory for a %ldx%ld input", b->nr, b->nc);
    for (long r = 0; r < b->nr && st == TPB_OK; r += step) {
        long n = b->nr - r < step ? b->nr - r : step;
        if (m) /* its rows' columns, packed */
            for (long i = 0; i < n; i++)
                memcpy(buf + (size_t)i * width, m + at + (size_t)(r + i) * row, width);
        else
            st = draw(buf, n, b->nc, b->r0 + r, b->c0, b);
        if (st == TPB_OK)
            st = tpb_dev_copy(dev, (unsigned char *)dst + (size_t)r * width, buf, (size_t)n * width,
                              TPB_COPY_TO_BACKEND);
    }
    return st;
}

tpb_status_t tpb_inputs_fill_any(tpb_device_t *dev, void *dst, const tpb_inputs_block_t *b)
{
    size_t bytes;
    tpb_status_t st;
    const unsigned char *m = matrix_of(b, &st);
    TPB_CHECK_RET(st);
    if (m && b->nr <= b->rows && b->nc <= b->cols &&
        tpb_size_mul3(b->nr, b->nc, tpb_dtype_in_size(b->dtype), &bytes))
        return tpb_dev_copy(dev, dst, m, bytes, TPB_COPY_TO_BACKEND);
    return tpb_inputs_fill(dev, dst, b);
}
