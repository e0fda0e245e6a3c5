/* answer_overlap.c - the closing answer's overlap lines (--overlap chunked), decided into
 * the answer model (record/answer_model.h); answer_text.c and answer_json.c render them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "record/answer_model.h"

/* Chunked configs of one answer line: the same shape, TP, placement, split and policy. */
static int same_line(const tpb_history_t *a, const tpb_history_t *b)
{
    return tpb_history_same_layer(a, b) && a->tp == b->tp && a->placement == b->placement &&
           a->policy == b->policy && strcmp(a->shape_name, b->shape_name) == 0;
}

/* Over serial: against the whole GEMM and the serial collective timed in the same config
 * (the same moment; the serial config's own step, measured earlier, is shown beside it). */
static double over_serial(const tpb_history_t *h)
{
    return h->overlap.speedup;
}

/* Why overlap does not pay: the largest of its three costs. */
static tpb_overlap_why_t why_not(const tpb_overlap_t *o)
{
    double chunking = o->chunking_cost - 1.0, interference = o->interference - 1.0;
    if (!(o->efficiency >= 0.25) && chunking < 0.05 && interference < 0.05)
        return TPB_OVERLAP_NO_PROGRESS;
    return chunking >= interference ? TPB_OVERLAP_CHUNKING : TPB_OVERLAP_INTERFERENCE;
}

/* The line's verdict on its best chunk count. */
static tpb_overlap_line_t overlap_line(const tpb_history_t *best)
{
    tpb_overlap_line_t l = {.best = best, .speedup = over_serial(best)};
    l.verdict = best->overlap.host_waits               ? TPB_OVERLAP_HOST_WAITS
                : l.speedup >= TPB_ANSWER_OVERLAP_PAYS ? TPB_OVERLAP_PAYS
                                                       : why_not(&best->overlap);
    return l;
}

int tpb_overlap_answer_build(tpb_overlap_answer_t *a, const tpb_history_t *ohist, int n)
{
    *a = (tpb_overlap_answer_t){0};
    if (n == 0)
        return 0;
    a->lines = calloc((size_t)n, sizeof(*a->lines));
    if (!a->lines)
        return -1;
    for (int i = 0; i < n; i++) {
        int seen = 0;
        for (int j = 0; j < i && !seen; j++)
            seen = same_line(&ohist[j], &ohist[i]);
        if (seen)
            continue;
        const tpb_history_t *best = &ohist[i];
        for (int j = i + 1; j < n; j++)
            if (same_line(&ohist[j], &ohist[i]) && over_serial(&ohist[j]) > over_serial(best))
                best = &ohist[j];
        a->lines[a->nlines++] = overlap_line(best);
    }
    return 0;
}

void tpb_overlap_answer_free(tpb_overlap_answer_t *a)
{
    free(a->lines);
    *a = (tpb_overlap_answer_t){0};
}
