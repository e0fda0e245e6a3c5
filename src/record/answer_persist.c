/* answer_persist.c - the persistent straggler of a run's configs at one TP degree
 * (base/detect.h), their blocks read back one config at a time (record/spill.h): the
 * answer's straggler lines and --repeat's pooling over passes (record/repeat.h) use it. */
#include <math.h>
#include <stdlib.h>

#include "base/sequential.h"
#include "record/answer.h"
#include "record/spill.h"

/* 1 if h's blocks count toward the persistent straggler at tp (of a world of `world`, 0:
 * any). */
static int blocks_at(const tpb_history_t *h, int tp, int world)
{
    return h->tp == tp && !h->comm_only && h->nslow && (!world || h->world == world);
}

/* Pass `pass` over the slowest ranks of every block of the configs at tp, config by config
 * (each read back on its own: rank 0 never holds the run's at once): 0 counts them per rank
 * into c and *known; 1 finds the rank slowest most often (the first in the blocks' order
 * on a tie); 2 gathers its deficits into d and its log rates against the others' into x,
 * each config's around its median (configs differ in how much slower the rank is: a level
 * between configs is not dependence between blocks, base/detect.h). */
static int slow_pass(const tpb_history_t *hist, int n, int tp, int world, int pass, int *c,
                     int *known, int *best, int *count, double *d, int *k, double *x, int *m)
{
    for (int i = 0; i < n; i++) {
        const tpb_history_t *h = &hist[i];
        if (!blocks_at(h, tp, world))
            continue;
        tpb_slow_t *sl = tpb_history_dup(h, TPB_HIST_SLOW);
        if (!sl)
            return -1;
        for (int e = 0; e < h->nslow; e++) {
            int r = sl[e].rank;
            if (r < 0 || r >= world)
                continue;
            if (pass == 0)
                c[r]++, (*known)++;
            else if (pass == 1 && c[r] > *count)
                *best = r, *count = c[r];
            else if (pass == 2 && r == *best)
                d[(*k)++] = sl[e].deficit;
        }
        free(sl);
        int m0 = *m;
        for (int b = 0; pass == 2 && b < h->nslow / (world / tp); b++) {
            double v = NAN;
            if (tpb_history_load(h, TPB_HIST_DEV, (size_t)b * world + *best, 1, &v) != TPB_OK)
                return -1;
            if (isfinite(v))
                x[(*m)++] = v;
        }
        tpb_detect_center(x + m0, *m - m0); /* each config around its own level */
    }
    return 0;
}

int tpb_answer_extensions(const tpb_history_t *hist, int n, int tp, int *budget)
{
    int ext = 0;
    *budget = 0;
    for (int i = 0; i < n; i++) {
        const tpb_history_t *h = &hist[i];
        *budget |= h->looks > 0;
        int first = blocks_at(h, tp, 0) && h->looks > 1; /* a set's configs: its looks once */
        for (int j = 0; j < i && first && h->set >= 0; j++)
            first = !(hist[j].set == h->set && blocks_at(&hist[j], tp, 0));
        ext += first ? h->looks - 1 : 0;
    }
    return ext;
}

tpb_persistent_t tpb_answer_persistent(const tpb_history_t *hist, int n, int tp)
{
    int budget = 0, ext = tpb_answer_extensions(hist, n, tp, &budget);
    double alpha = budget ? tpb_seq_spend(TPB_DETECT_ALPHA, 1 + ext) : TPB_DETECT_ALPHA;
    return tpb_answer_persistent_at(hist, n, tp, alpha);
}

tpb_persistent_t tpb_answer_persistent_at(const tpb_history_t *hist, int n, int tp, double alpha)
{
    int nb = 0, world = 0, known = 0, best = -1, count = 0, k = 0, m = 0;
    for (int i = 0; i < n; i++)
        if (blocks_at(&hist[i], tp, 0))
            world = hist[i].world;
    for (int i = 0; i < n; i++)
        if (blocks_at(&hist[i], tp, world))
            nb += hist[i].nslow / (world / tp);
    tpb_persistent_t p = {.rank = -1, .deficit = NAN, .detectable = NAN, .alpha = alpha};
    int *c = calloc((size_t)(world > 0 ? world : 1), sizeof(*c));
    double *x = malloc((size_t)(nb > 0 ? nb : 1) * sizeof(*x)), *d = NULL;
    int ok = c && x &&
             slow_pass(hist, n, tp, world, 0, c, &known, &best, &count, d, &k, x, &m) == 0 &&
             slow_pass(hist, n, tp, world, 1, c, &known, &best, &count, d, &k, x, &m) == 0;
    if (ok && best >= 0) {
        d = malloc((size_t)count * sizeof(*d));
        ok = d && slow_pass(hist, n, tp, world, 2, c, &known, &best, &count, d, &k, x, &m) == 0;
    }
    if (ok)
        p = tpb_detect_persistent_of_at(best, count, known, d, k, x, m, tp, alpha);
    else
        tpb_err_clear(); /* unknown, as without the blocks */
    free(c);
    free(x);
    free(d);
    return p;
}
