/* inputs.c - seeded matrices generated once and kept (inputs.h). */
#include "run/inputs.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/rng.h"
#include "base/sizes.h"

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

void tpb_inputs_free(void)
{
    for (int i = 0; i < KEPT; i++)
        drop(&kept[i]);
}

/* The kept matrix of b, generated now if it is not kept yet; NULL where it does not fit the
 * budget (or memory): then b's block is drawn alone. */
static const unsigned char *matrix_of(const tpb_inputs_block_t *b, tpb_status_t *st)
{
    size_t bytes;
    *st = TPB_OK;
    for (int i = 0; i < KEPT; i++)
        if (kept[i].used && same_matrix(&kept[i].key, b)) {
            kept[i].used = ++uses;
            return kept[i].enc;
        }
    if (!tpb_size_mul3(b->rows, b->cols, tpb_dtype_in_size(b->dtype), &bytes))
        return NULL;
    double held = (double)bytes;
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
    int slot = 0;
    for (int i = 1; i < KEPT; i++)
        if (kept[i].used < kept[slot].used)
            slot = i;
    drop(&kept[slot]);
    unsigned char *enc = malloc(bytes ? bytes : 1);
    if (!enc)
        return NULL;
    *st = draw(enc, b->rows, b->cols, 0, 0, b);
    if (*st != TPB_OK) {
        free(enc);
        return NULL;
    }
    kept[slot] = (kept_t){.key = *b, .enc = enc, .bytes = bytes, .used = ++uses};
    return enc;
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
    unsigned char *blk = malloc(bytes ? bytes : 1);
    if (!blk)
        return tpb_err_set(TPB_ERR_NOMEM, "no host memory for a %ldx%ld input", b->nr, b->nc);
    if (m) /* its rows' columns, packed */
        for (long r = 0; r < b->nr; r++)
            memcpy(blk + (size_t)r * (size_t)b->nc * esz, m + at + (size_t)r * row,
                   (size_t)b->nc * esz);
    else
        st = draw(blk, b->nr, b->nc, b->r0, b->c0, b);
    if (st == TPB_OK)
        st = tpb_dev_copy(dev, dst, blk, bytes, TPB_COPY_TO_BACKEND);
    free(blk);
    return st;
}
