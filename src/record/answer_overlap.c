/* answer_overlap.c - the closing answer's overlap lines (--overlap chunked). */
#include <math.h>
#include <string.h>

#include "record/answer.h"

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
static const char *why_not(const tpb_overlap_t *o)
{
    double chunking = o->chunking_cost - 1.0, interference = o->interference - 1.0;
    if (!(o->efficiency >= 0.25) && chunking < 0.05 && interference < 0.05)
        return "no progress: the collectives were not hidden behind the GEMMs";
    return chunking >= interference ? "chunking cost: the chunked GEMMs run slower than the whole"
                                    : "interference: the GEMM runs slower beside the collectives";
}

static void line(tpb_buf_t *txt, tpb_buf_t *js, const tpb_history_t *best)
{
    const tpb_overlap_t *o = &best->overlap;
    double sp = over_serial(best);
    int pays = sp >= TPB_ANSWER_OVERLAP_PAYS;
    tpb_buf_printf(txt, "#   overlap %ldx%ldx%ld tp %d %s %s: ", best->m, best->n, best->k,
                   best->tp, tpb_config_key_split(&best->key), tpb_policy_name(best->policy));
    if (o->host_waits) /* no figure of overlap: none could happen */
        tpb_buf_printf(txt, "the host waits for --comm mpi's staged collectives: nothing can "
                            "overlap (--comm ccl can");
    else if (pays)
        tpb_buf_printf(txt,
                       "best at %d chunks, %.2fx over serial (%.0f %% of the communication "
                       "hidden",
                       best->chunks, sp, 100.0 * o->efficiency);
    else
        tpb_buf_printf(txt,
                       "overlap does not pay here (best %.2fx at %d chunks): %s (chunking "
                       "%.2fx, interference %.2fx, %.0f %% hidden",
                       sp, best->chunks, why_not(o), o->chunking_cost, o->interference,
                       100.0 * o->efficiency);
    if (isfinite(best->speedup) && !o->host_waits)
        tpb_buf_printf(txt, "; %.2fx the serial config's step", best->speedup);
    tpb_buf_puts(txt, ")\n");
    tpb_json_obj_begin(js);
    tpb_json_kv_str(js, "kind", "overlap");
    tpb_config_key_json(js, &best->key,
                        TPB_KEY_SIZES | TPB_KEY_TP | TPB_KEY_PLACEMENT | TPB_KEY_CHOICE);
    tpb_json_kv_int(js, "best_chunks", best->chunks);
    tpb_json_kv_num(js, "speedup", sp);
    tpb_json_kv_num(js, "speedup_vs_serial_config", best->speedup);
    tpb_json_kv_str(js, "pays", pays && !o->host_waits ? "yes" : "no");
    tpb_json_kv_str(js, "reason",
                    o->host_waits ? "the host waits for --comm mpi's staged "
                                    "collectives: nothing can overlap"
                    : pays        ? NULL
                                  : why_not(o));
    tpb_json_obj_end(js);
}

void tpb_answer_overlap(tpb_buf_t *txt, tpb_buf_t *js, const tpb_history_t *ohist, int n)
{
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
        line(txt, js, best);
    }
}
