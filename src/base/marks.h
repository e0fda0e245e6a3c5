/*
 * marks.h - where a config's timer marks are: in the device's slots while it is
 * measured, and in the chunk marks gathered to rank 0. One layout, written once;
 * pure inline functions.
 *
 * Device slots (tpb_device_ops_t.mark) of a config of n iterations (warm-up included):
 *   iteration i: c0, c1, x1 at 3i + 0, 1, 2 (TPB_MARK_*);
 *   --overlap chunked, after them: chunk j of iteration i: its GEMM's begin, its GEMM's
 *   end and its collective's end at 3n + 3(i C + j) + 0, 1, 2 (TPB_CHUNK_*).
 * Gathered chunk marks: per rank, its measured iterations x C chunks x 3.
 */
#ifndef TPB_MARKS_H
#define TPB_MARKS_H

#include <stddef.h>

/** Mark k of a chunk (TPB_CHUNK_*), and of an iteration (c0, c1, x1). */
#define TPB_CHUNK_GEMM_BEGIN 0
#define TPB_CHUNK_GEMM_END 1
#define TPB_CHUNK_COMM_END 2

/** A config's marks on a device: its iterations (warm-up included) and chunks (0:
 *  serial). */
typedef struct {
    size_t iters;
    int chunks;
} tpb_marks_layout_t;

/** Slots the device must prepare. */
static inline size_t tpb_marks_count(const tpb_marks_layout_t *m)
{
    return 3 * m->iters * (1 + (size_t)m->chunks);
}

/** Slot of iteration i's mark k (0 c0, 1 c1, 2 x1). */
static inline size_t tpb_marks_iter(size_t i, int k)
{
    return 3 * i + (size_t)k;
}

/** Slot of chunk j's mark k in iteration i. */
static inline size_t tpb_marks_chunk(const tpb_marks_layout_t *m, size_t i, int j, int k)
{
    return 3 * m->iters + (i * (size_t)m->chunks + (size_t)j) * 3 + (size_t)k;
}

/** Gathered chunk marks of one rank: iters x chunks x 3. */
static inline size_t tpb_chunk_marks_per_rank(size_t iters, int chunks)
{
    return iters * (size_t)chunks * 3;
}

/** Where rank r's iteration i's chunk marks start in the gathered array. */
static inline size_t tpb_chunk_marks_at(size_t iters, int chunks, int r, size_t i)
{
    return ((size_t)r * iters + i) * (size_t)chunks * 3;
}

#endif /* TPB_MARKS_H */
