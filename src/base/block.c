/* block.c - a block's step and its tokens per second (base/block.h). Pure. */
#include "base/block.h"

#include <math.h>
#include <stddef.h>

void tpb_block_steps(const tpb_mark_t *const *marks, int ngemm, int world, int tp, int iters,
                     double *steps)
{
    const tpb_mark_t *first = marks[0], *last = marks[ngemm - 1];
    for (int i = 0; i < iters; i++) {
        steps[i] = -INFINITY;
        for (int g = 0; g < world / tp; g++) {
            double c0 = INFINITY, x1 = -INFINITY;
            for (int r = g * tp; r < (g + 1) * tp; r++) {
                c0 = fmin(c0, first[(size_t)r * iters + i].c0);
                x1 = fmax(x1, last[(size_t)r * iters + i].x1);
            }
            steps[i] = fmax(steps[i], x1 - c0);
        }
    }
}

double tpb_block_tokens_per_s(long tokens, int tp, double step_us)
{
    if (!(step_us > 0.0) || tp < 1)
        return NAN;
    return (double)tokens / ((double)tp * step_us * 1e-6);
}
