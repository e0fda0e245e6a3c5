/* overlap.c - the figures of a chunked config from its marks and alone timings. */
#include "base/overlap.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>

#include "base/metrics.h"

double tpb_overlap_busy(const double *cm, int chunks)
{
    double busy = 0.0;
    for (int j = 0; j < chunks; j++)
        busy += cm[3 * j + TPB_CHUNK_GEMM_END] - cm[3 * j + TPB_CHUNK_GEMM_BEGIN];
    return busy;
}

/* Iteration i of group g: its step (last x1 - first c0) and its longest GEMM busy time. */
static void group_iter(const tpb_mark_t *marks, const double *chunk, int iters, int chunks, int tp,
                       int g, int i, double *span, double *busy)
{
    double c0 = INFINITY, x1 = -INFINITY, b = 0.0;
    for (int r = g * tp; r < (g + 1) * tp; r++) {
        const tpb_mark_t *m = &marks[(size_t)r * iters + i];
        c0 = fmin(c0, m->c0);
        x1 = fmax(x1, m->x1);
        b = fmax(b, tpb_overlap_busy(
                        &chunk[tpb_chunk_marks_at((size_t)iters, chunks, r, (size_t)i)], chunks));
    }
    *span = x1 - c0;
    *busy = b;
}

/* The largest of column k of alone over the ranks. */
static double alone_max(const double *alone, int ranks, int k)
{
    double v = -INFINITY;
    for (int r = 0; r < ranks; r++)
        v = fmax(v, alone[(size_t)r * TPB_ALONE_N + k]);
    return isinf(v) ? NAN : v;
}

void tpb_overlap_figures(int ranks, int tp, int iters, int chunks, const tpb_mark_t *marks,
                         const double *chunk, const double *alone, tpb_overlap_t *o)
{
    double nan = NAN;
    *o = (tpb_overlap_t){.chunks = chunks};
    o->t_overlap_us = o->exposed_us = o->gemm_busy_us = o->interference = nan;
    o->efficiency = o->speedup = nan;
    o->t_gemm_us = alone_max(alone, ranks, TPB_ALONE_GEMM_CHUNKS);
    o->t_gemm_whole_us = alone_max(alone, ranks, TPB_ALONE_GEMM_WHOLE);
    o->t_comm_us = alone_max(alone, ranks, TPB_ALONE_COMM_CHUNKS);
    o->t_comm_whole_us = alone_max(alone, ranks, TPB_ALONE_COMM_WHOLE);
    o->t_serial_us = -INFINITY;
    o->chunking_cost = -INFINITY;
    for (int r = 0; r < ranks; r++) {
        const double *a = &alone[(size_t)r * TPB_ALONE_N];
        o->t_serial_us = fmax(o->t_serial_us, a[TPB_ALONE_GEMM_WHOLE] + a[TPB_ALONE_COMM_WHOLE]);
        o->chunking_cost =
            fmax(o->chunking_cost, a[TPB_ALONE_GEMM_CHUNKS] / a[TPB_ALONE_GEMM_WHOLE]);
    }
    if (ranks < 1 || tp < 1 || iters < 1) {
        o->t_serial_us = o->chunking_cost = nan;
        return;
    }
    double *span = malloc(3 * (size_t)iters * sizeof(double)), *exp = span + iters,
           *busy = exp + iters;
    if (!span)
        return;
    for (int i = 0; i < iters; i++) { /* the group that set the step, as the timeline does */
        span[i] = -INFINITY;
        for (int g = 0; g < ranks / tp; g++) {
            double s, b;
            group_iter(marks, chunk, iters, chunks, tp, g, i, &s, &b);
            if (s > span[i]) {
                span[i] = s;
                busy[i] = b;
            }
        }
        exp[i] = span[i] - busy[i];
    }
    o->t_overlap_us = tpb_stats_median(span, (size_t)iters);
    o->exposed_us = tpb_stats_median(exp, (size_t)iters);
    o->gemm_busy_us = tpb_stats_median(busy, (size_t)iters);
    free(span);
    o->interference = o->gemm_busy_us / o->t_gemm_us;
    o->efficiency = o->t_comm_us > 0.0 ? 1.0 - o->exposed_us / o->t_comm_us : nan;
    o->speedup = o->t_overlap_us > 0.0 ? o->t_serial_us / o->t_overlap_us : nan;
}
