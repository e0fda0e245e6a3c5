/* answer.c - the closing answer of a run (what to use and why), from the finished configs. */
#include "record/answer.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* A time the way a person reads it: 830 us, 12.3 ms, 1.25 s. */
static const char *human_us(char *out, size_t cap, double us)
{
    if (!isfinite(us))
        snprintf(out, cap, "-");
    else if (us < 1e3)
        snprintf(out, cap, "%.0f us", us);
    else if (us < 1e6)
        snprintf(out, cap, "%.3g ms", us / 1e3);
    else
        snprintf(out, cap, "%.3g s", us / 1e6);
    return out;
}

static int same_shape(const tpb_history_t *a, const tpb_history_t *b)
{
    return a->m == b->m && a->n == b->n && a->k == b->k &&
           strcmp(a->shape_name, b->shape_name) == 0;
}

/* Configs of one answer: the same shape, TP degree and placement. */
static int same_group(const tpb_history_t *a, const tpb_history_t *b)
{
    return same_shape(a, b) && a->tp == b->tp && a->placement == b->placement;
}

/* "4096x4096x4096 qkv_proj" */
static void shape_label(char *out, size_t cap, const tpb_history_t *h)
{
    snprintf(out, cap, "%ldx%ldx%ld%s%s", h->m, h->n, h->k, h->shape_name[0] ? " " : "",
             h->shape_name);
}

static const char *host_of(const char *const *hosts, int world_rank)
{
    return hosts && world_rank >= 0 ? hosts[world_rank] : NULL;
}

/* The even config of h's group and split, or NULL. */
static const tpb_history_t *even_of(const tpb_history_t *hist, int n, const tpb_history_t *h)
{
    for (int i = 0; i < n; i++)
        if (!hist[i].comm_only && same_group(&hist[i], h) && tpb_history_same_layer(&hist[i], h) &&
            hist[i].policy == TPB_POLICY_EVEN)
            return &hist[i];
    return NULL;
}

/* What a policy other than even bought over even: measured, and predicted where known. */
static void policy_line(tpb_buf_t *txt, tpb_buf_t *js, const tpb_history_t *hist, int n,
                        const tpb_history_t *h)
{
    const tpb_history_t *ev = even_of(hist, n, h);
    if (!ev || h->policy == TPB_POLICY_EVEN)
        return;
    double sp = ev->step_med / h->step_med, pred = h->predicted_speedup;
    int lost = sp < TPB_ANSWER_LOST;
    tpb_buf_printf(txt, "#     %-3s: %s %.2fx over even", tpb_split_label(h->split, h->seqpar),
                   tpb_policy_name(h->policy), sp);
    if (isfinite(pred))
        tpb_buf_printf(txt, " (predicted %.2fx)", pred);
    if (lost)
        tpb_buf_printf(txt, " -- LOST: the even split was faster; the speeds it was weighted by "
                            "did not hold (see the calibration line), or the shards' times are "
                            "not proportional to their size");
    else if (sp < 1.0)
        tpb_buf_printf(txt, " -- a draw (within %.0f %%)", 100.0 * (1.0 - TPB_ANSWER_LOST));
    tpb_buf_puts(txt, "\n");
    tpb_json_obj_begin(js);
    tpb_json_kv_str(js, "split", tpb_split_name(h->split));
    tpb_json_kv_str(js, "sequence_parallel", tpb_seqpar_name(h->seqpar));
    tpb_json_kv_str(js, "policy", tpb_policy_name(h->policy));
    tpb_json_kv_num(js, "speedup", sp);
    tpb_json_kv_num(js, "predicted_speedup", pred);
    tpb_json_kv_str(js, "lost", lost ? "yes" : "no");
    tpb_json_obj_end(js);
}

static void straggler_line(tpb_buf_t *txt, tpb_buf_t *js, const tpb_history_t *h,
                           const char *const *hosts)
{
    if (h->straggler_world < 0)
        return;
    char late[24];
    const char *host = host_of(hosts, h->straggler_world);
    tpb_buf_printf(txt,
                   "#     straggler in %s %s: rank %d%s%s%s, last in %.0f %% of iterations, "
                   "by %s\n",
                   tpb_split_label(h->split, h->seqpar), tpb_policy_name(h->policy),
                   h->straggler_world, host ? " (" : "", host ? host : "", host ? ")" : "",
                   100.0 * h->straggler_frac, human_us(late, sizeof(late), h->straggler_late_us));
    tpb_json_obj_begin(js);
    tpb_json_kv_str(js, "split", tpb_split_name(h->split));
    tpb_json_kv_str(js, "sequence_parallel", tpb_seqpar_name(h->seqpar));
    tpb_json_kv_str(js, "policy", tpb_policy_name(h->policy));
    tpb_json_kv_int(js, "rank", h->straggler_world);
    tpb_json_kv_num(js, "last_frac", h->straggler_frac);
    tpb_json_kv_num(js, "lateness_us", h->straggler_late_us);
    tpb_json_obj_end(js);
}

static void json_group_keys(tpb_buf_t *js, const tpb_history_t *h)
{
    tpb_json_kv_str(js, "shape", h->shape_name);
    tpb_json_kv_int(js, "m", h->m);
    tpb_json_kv_int(js, "n", h->n);
    tpb_json_kv_int(js, "k", h->k);
    tpb_json_kv_int(js, "tp", h->tp);
    tpb_json_kv_str(js, "placement", tpb_placement_name(h->placement));
}

/* The answer for the group of hist[first]; returns its fastest config. */
static const tpb_history_t *group_answer(tpb_buf_t *txt, tpb_buf_t *js, const tpb_history_t *hist,
                                         int n, int first, const char *const *hosts)
{
    const tpb_history_t *g = &hist[first], *best = g;
    for (int i = first; i < n; i++)
        if (!hist[i].comm_only && same_group(&hist[i], g) && hist[i].step_med < best->step_med)
            best = &hist[i];
    char shape[96], step[24];
    shape_label(shape, sizeof(shape), g);
    tpb_buf_printf(txt, "#   %s tp %d%s: fastest %s %s, %s a step\n", shape, g->tp,
                   g->placement == TPB_PLACE_SPREAD ? " (spread)" : "",
                   tpb_split_label(best->split, best->seqpar), tpb_policy_name(best->policy),
                   human_us(step, sizeof(step), best->step_med));
    tpb_json_obj_begin(js);
    tpb_json_kv_str(js, "kind", "tp");
    json_group_keys(js, g);
    tpb_json_kv_str(js, "best_split", tpb_split_name(best->split));
    tpb_json_kv_str(js, "best_sequence_parallel", tpb_seqpar_name(best->seqpar));
    tpb_json_kv_str(js, "best_policy", tpb_policy_name(best->policy));
    tpb_json_kv_num(js, "best_step_us", best->step_med);
    tpb_json_key(js, "policies");
    tpb_json_arr_begin(js);
    for (int i = first; i < n; i++)
        if (!hist[i].comm_only && same_group(&hist[i], g))
            policy_line(txt, js, hist, n, &hist[i]);
    tpb_json_arr_end(js);
    tpb_json_key(js, "stragglers");
    tpb_json_arr_begin(js);
    int named = 0;
    for (int i = first; i < n; i++)
        if (!hist[i].comm_only && same_group(&hist[i], g)) {
            named += hist[i].straggler_world >= 0;
            straggler_line(txt, js, &hist[i], hosts);
        }
    tpb_json_arr_end(js);
    tpb_json_obj_end(js);
    if (!named && g->tp > 1)
        tpb_buf_puts(txt, "#     no straggler beyond noise (whoever arrived last took turns)\n");
    return best;
}

/* Once for the run: the worst calibration spread of any config that measured speeds. */
static void calibration_line(tpb_buf_t *txt, const tpb_history_t *hist, int n,
                             const char *const *hosts, double target)
{
    const tpb_history_t *w = NULL;
    for (int i = 0; i < n; i++)
        if (isfinite(hist[i].spread_worst) && (!w || hist[i].spread_worst > w->spread_worst))
            w = &hist[i];
    if (!w)
        return;
    const char *host = host_of(hosts, w->spread_world);
    tpb_buf_printf(txt, "#   calibration: worst spread %.1f %% (rank %d%s%s; goal %.0f %%)%s\n",
                   100.0 * w->spread_worst, w->spread_world, host ? " on " : "", host ? host : "",
                   100.0 * target,
                   w->spread_worst <= target ? ": the speeds settled"
                                             : ": did not settle, weighted shards may be off");
}

/* Per shape: the fastest config over every TP degree and placement, and why. */
static void use_line(tpb_buf_t *txt, tpb_buf_t *js, const tpb_history_t *hist, int n,
                     const tpb_history_t *best, const char *const *hosts)
{
    char shape[96], step[24];
    shape_label(shape, sizeof(shape), best);
    tpb_buf_printf(txt, "# use for %s: %s %s at tp %d%s (%s a step", shape,
                   tpb_split_label(best->split, best->seqpar), tpb_policy_name(best->policy),
                   best->tp, best->placement == TPB_PLACE_SPREAD ? " spread" : "",
                   human_us(step, sizeof(step), best->step_med));
    const tpb_history_t *ev = even_of(hist, n, best);
    if (ev && ev != best) {
        tpb_buf_printf(txt, "; %.2fx the even split's speed", ev->step_med / best->step_med);
        if (ev->straggler_world >= 0) {
            const char *host = host_of(hosts, ev->straggler_world);
            tpb_buf_printf(txt, ", which waits for rank %d%s%s%s", ev->straggler_world,
                           host ? " (" : "", host ? host : "", host ? ")" : "");
        }
    }
    tpb_buf_puts(txt, ")\n");
    tpb_json_obj_begin(js);
    tpb_json_kv_str(js, "kind", "use");
    json_group_keys(js, best);
    tpb_json_kv_str(js, "split", tpb_split_name(best->split));
    tpb_json_kv_str(js, "sequence_parallel", tpb_seqpar_name(best->seqpar));
    tpb_json_kv_str(js, "policy", tpb_policy_name(best->policy));
    tpb_json_kv_num(js, "step_us", best->step_med);
    tpb_json_obj_end(js);
}

void tpb_answer_write(tpb_buf_t *txt, tpb_buf_t *js, const tpb_history_t *hist, int n,
                      const char *const *hosts, double target_spread)
{
    int any = 0;
    for (int i = 0; i < n; i++)
        any |= !hist[i].comm_only;
    if (!any)
        return;
    tpb_buf_t use = TPB_BUF_INIT; /* the use lines close the answer */
    tpb_buf_puts(txt, "# answer (median steps, as in the table; a straggler is named when it "
                      "arrived last in more than (1 + 1/tp)/2 of the iterations, by >= 5 % of "
                      "the step)\n");
    for (int i = 0; i < n; i++) { /* one shape at a time, in the order measured */
        int seen = hist[i].comm_only;
        for (int j = 0; j < i && !seen; j++)
            seen = !hist[j].comm_only && same_shape(&hist[j], &hist[i]);
        if (seen)
            continue;
        const tpb_history_t *best = NULL;
        for (int k = i; k < n; k++) {
            int first = !hist[k].comm_only && same_shape(&hist[k], &hist[i]);
            for (int j = i; j < k && first; j++)
                first = hist[j].comm_only || !same_group(&hist[j], &hist[k]);
            if (!first)
                continue;
            const tpb_history_t *b = group_answer(txt, js, hist, n, k, hosts);
            best = !best || b->step_med < best->step_med ? b : best;
        }
        use_line(&use, js, hist, n, best, hosts);
    }
    calibration_line(txt, hist, n, hosts, target_spread);
    tpb_buf_puts(txt, tpb_buf_str(&use));
    if (!tpb_buf_ok(&use))
        tpb_buf_puts(txt, "# (out of memory for the use lines)\n");
    tpb_buf_free(&use);
}
