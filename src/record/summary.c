/* summary.c - the end of a run's record: T(N) = T_comp/N + T_comm(N) + T_idle(N)
 * per TP degree, the fastest degree, and the fitted communication model. */
#include <math.h>

#include "base/cpuload.h"
#include "base/metrics.h"
#include "record/answer.h"
#include "record/record.h"

/* The keys that name a config of the summary: tp, split, policy and shape. */
static void json_config_keys(tpb_buf_t *js, const tpb_history_t *h)
{
    tpb_config_key_json(js, &h->key, TPB_KEY_TP | TPB_KEY_CHOICE | TPB_KEY_SIZES);
}

static void json_decomp(tpb_buf_t *js, const tpb_history_t *h, const tpb_decomp_t *d, double e)
{
    tpb_json_obj_begin(js);
    json_config_keys(js, h);
    tpb_json_kv_num(js, "comp_us", d->comp_us);
    tpb_json_kv_num(js, "comm_us", d->comm_us);
    tpb_json_kv_num(js, "idle_us", d->idle_us);
    tpb_json_kv_num(js, "step_us", h->step_med);
    tpb_json_kv_num(js, "step_mean_us", h->step_mean);
    tpb_json_kv_num(js, "e", e);
    tpb_json_obj_end(js);
}

/* "%10.1f", or "-" where unknown. */
static void put_term(tpb_buf_t *out, const char *name, double v)
{
    if (isfinite(v))
        tpb_buf_printf(out, "  %s %10.1f", name, v);
    else
        tpb_buf_printf(out, "  %s %10s", name, "-");
}

/* T(N) per TP degree of the series of base: T the median step (the table's, the answer's),
 * its terms the means over iterations of the step-setting group's mean compute, transfer
 * after the last arrival and the rest (idle), which add up to the mean step by
 * construction, scaled by median / mean so that they add up to T; E = T_1 / (N T) beside
 * them, the table's E. */
static void summary_series(tpb_record_t *s, const tpb_history_t *base, tpb_buf_t *out,
                           tpb_buf_t *js, int *headed)
{
    const tpb_history_t *t1 = NULL;
    for (int i = 0; i < s->nhist; i++) {
        const tpb_history_t *h = &s->hist[i];
        if (h->tp == 1 && tpb_history_same_layer(h, base)) /* its T_1 may be unknown (NaN) */
            t1 = h;
    }
    if (!t1)
        return;
    if (!(*headed)++)
        tpb_buf_printf(
            out, "# T(N) = T_comp/N + T_comm(N) + T_idle(N) per TP degree, in us: T is the median "
                 "step (as in the table and the answer); its terms are the shares of the group "
                 "that set each step (its ranks' mean compute, the transfer after its last "
                 "arrival, the rest), averaged over the iterations and scaled to add up to T\n"
                 "#   E = T_1 / (N T), T_1 the fastest rank's whole layer: 1 = the N ranks lose "
                 "nothing to waits and transfers; > 1: shards run faster per FLOP (caches); at "
                 "tp 1, E < 1 is how much slower the slowest rank is\n");
    double t1_us = t1->t1_us;
    tpb_buf_printf(out, "# %-5s %-8s %ldx%ldx%ld%s\n", tpb_config_key_split(&base->key),
                   tpb_policy_name(base->policy), base->m, base->n, base->k,
                   base->placement == TPB_PLACE_SPREAD ? " (spread)" : "");
    int best = -1;
    for (int i = 0; i < s->nhist; i++) {
        const tpb_history_t *h = &s->hist[i];
        if (!tpb_history_same_layer(h, base) ||
            (h->tp > 1 && (h->policy != base->policy || h->placement != base->placement)))
            continue;
        double scale = h->step_med / h->step_mean; /* the mean terms onto the median */
        tpb_decomp_t d =
            tpb_metric_decompose(h->comp_mean * scale, h->xfer_mean * scale, h->step_med);
        double e = t1_us / (h->tp * h->step_med);
        tpb_buf_printf(out, "#   tp %3d", h->tp);
        put_term(out, "T_comp/N", d.comp_us);
        put_term(out, "T_comm", d.comm_us);
        put_term(out, "T_idle", d.idle_us);
        put_term(out, "T", h->step_med);
        if (isfinite(e))
            tpb_buf_printf(out, "  E %5.2f\n", e);
        else
            tpb_buf_printf(out, "  E     -\n");
        if (best < 0 || h->step_med < s->hist[best].step_med)
            best = i;
        json_decomp(js, h, &d, e);
    }
    if (best >= 0)
        tpb_buf_printf(out, "#   fastest: tp %d\n", s->hist[best].tp);
}

/* Configs of one communication series: the same collective, TP degree, policy (the
 * all-gather-v blocks), placement, and GEMM or --comm-only. */
static int same_series(const tpb_history_t *a, const tpb_history_t *b)
{
    return a->coll == b->coll && a->tp == b->tp && a->policy == b->policy &&
           a->placement == b->placement && a->comm_only == b->comm_only;
}

/* "[lo, hi] " of a 95 % interval, or nothing when it is unknown. */
static void print_interval(FILE *f, double lo, double hi, const char *fmt)
{
    if (isnan(lo) || isnan(hi))
        return;
    fputs(" [", f);
    fprintf(f, fmt, lo);
    fputs(", ", f);
    isinf(hi) ? fputs("inf", f) : fprintf(f, fmt, hi);
    fputs("]", f);
}

/* L, B with their 95 % intervals, R^2 and what the fit can be trusted with. */
static void print_fit(FILE *f, const tpb_comm_fit_t *fit)
{
    fprintf(f, "L %.1f us", fit->latency_us);
    print_interval(f, fit->latency_lo_us, fit->latency_hi_us, "%.1f");
    if (isinf(fit->bandwidth_gbs)) {
        fputs(", B not resolved (the larger messages were no slower)", f);
    } else {
        fprintf(f, ", B %.2f GB/s", fit->bandwidth_gbs);
        print_interval(f, fit->bandwidth_lo_gbs, fit->bandwidth_hi_gbs, "%.2f");
    }
    fprintf(f, ", R^2 %.3f (%d points)", fit->r2, fit->points);
    switch (fit->quality) {
    case TPB_FIT_EXACT: fputs(": two sizes, nothing checks the model", f); break;
    case TPB_FIT_POOR: fputs(": a poor fit, T is not L + V/B over these sizes", f); break;
    case TPB_FIT_NO_LATENCY:
        fputs(": a free fit put L below 0, so L is 0 (smaller than these sizes resolve)", f);
        break;
    case TPB_FIT_OK:
    case TPB_FIT_NO_BANDWIDTH: break; /* said above (no B) or nothing to say */
    }
    fputs("\n", f);
}

/* The fit of the series of hist[first] (its transfer times against message bytes). */
static void comm_model_row(tpb_record_t *s, int first, tpb_buf_t *js)
{
    const tpb_history_t *h0 = &s->hist[first];
    double v[s->nhist], x[s->nhist], bus = 0.0;
    int n = 0, sizes = 0, nbus = 0;
    for (int i = first; i < s->nhist; i++) {
        const tpb_history_t *h = &s->hist[i];
        if (!same_series(h, h0) || isnan(h->xfer_med))
            continue;
        if (isfinite(h->busbw_gbs)) {
            bus += h->busbw_gbs;
            nbus++;
        }
        sizes += n == 0 || h->coll_bytes != v[0];
        v[n] = h->coll_bytes;
        x[n++] = h->xfer_med;
    }
    tpb_comm_fit_t fit;
    if (sizes < 2 || tpb_metric_comm_fit(v, x, (size_t)n, 1, &fit) != 0)
        return;
    const char *name = tpb_coll_label(h0->coll);
    fprintf(s->run.table, "# comm model %s tp %d %s %s%s: T = L + V/B, ", name, h0->tp,
            tpb_policy_name(h0->policy), tpb_placement_name(h0->placement),
            h0->comm_only ? " comm-only" : "");
    print_fit(s->run.table, &fit);
    double avg = nbus ? bus / nbus : NAN; /* nccl-tests' closing "Avg bus bandwidth" */
    if (h0->comm_only && nbus)
        fprintf(s->run.table,
                "# avg bus bandwidth %s tp %d: %.3f GB/s (the mean of the busbw column over %d "
                "size%s, as nccl-tests' \"Avg bus bandwidth\")\n",
                name, h0->tp, avg, nbus, nbus == 1 ? "" : "s");
    tpb_json_obj_begin(js);
    tpb_json_kv_str(js, "collective", name);
    tpb_json_kv_int(js, "tp", h0->tp);
    tpb_json_kv_str(js, "policy", tpb_policy_name(h0->policy));
    tpb_json_kv_str(js, "placement", tpb_placement_name(h0->placement));
    tpb_json_kv_str(js, "comm_only", h0->comm_only ? "yes" : "no");
    tpb_json_kv_num(js, "latency_us", fit.latency_us);
    tpb_json_kv_num(js, "bandwidth_gbs", fit.bandwidth_gbs);
    tpb_json_kv_num(js, "r2", fit.r2);
    tpb_json_kv_int(js, "points", n);
    double lat[2] = {fit.latency_lo_us, fit.latency_hi_us};
    double bw[2] = {fit.bandwidth_lo_gbs, fit.bandwidth_hi_gbs};
    tpb_json_kv_nums(js, "latency_ci_us", lat, 2);
    tpb_json_kv_nums(js, "bandwidth_ci_gbs", bw, 2);
    tpb_json_kv_str(js, "quality", tpb_metric_fit_quality_name(fit.quality));
    tpb_json_kv_num(js, "avg_busbw_gbs", avg);
    tpb_json_obj_end(js);
}

/* One fit per series with TP degree > 1 and at least two message sizes. */
static void summary_comm_model(tpb_record_t *s, tpb_buf_t *js)
{
    for (int i = 0; i < s->nhist; i++) {
        int seen = s->hist[i].tp < 2;
        for (int j = 0; j < i && !seen; j++)
            seen = same_series(&s->hist[j], &s->hist[i]);
        if (!seen)
            comm_model_row(s, i, js);
    }
}

/* Packed against spread for every config measured both ways: a group inside one node
 * against a group across nodes (seed 2: keep communication in the fastest local domain). */
static void summary_placement(tpb_record_t *s, tpb_buf_t *js)
{
    for (int i = 0; i < s->nhist; i++) {
        const tpb_history_t *sp = &s->hist[i];
        if (sp->placement != TPB_PLACE_SPREAD || sp->tp < 2)
            continue;
        for (int j = 0; j < s->nhist; j++) {
            const tpb_history_t *pk = &s->hist[j];
            if (pk->placement != TPB_PLACE_PACKED || pk->tp != sp->tp ||
                !tpb_history_same_layer(pk, sp) || pk->policy != sp->policy)
                continue;
            fprintf(s->run.table,
                    "# placement tp %d %s %s %ldx%ldx%ld: packed (groups on %d node%s) %.1f us, "
                    "spread (on %d node%s) %.1f us: spread/packed %.2f\n",
                    sp->tp, tpb_config_key_split(&sp->key), tpb_policy_name(sp->policy), sp->m,
                    sp->n, sp->k, pk->group_nodes, pk->group_nodes == 1 ? "" : "s", pk->step_med,
                    sp->group_nodes, sp->group_nodes == 1 ? "" : "s", sp->step_med,
                    sp->step_med / pk->step_med);
            tpb_json_obj_begin(js);
            json_config_keys(js, sp);
            tpb_json_kv_int(js, "packed_nodes", pk->group_nodes);
            tpb_json_kv_num(js, "packed_step_us", pk->step_med);
            tpb_json_kv_int(js, "spread_nodes", sp->group_nodes);
            tpb_json_kv_num(js, "spread_step_us", sp->step_med);
            tpb_json_obj_end(js);
            break;
        }
    }
}

/* The closing answer (record/answer.c), printed after everything else. */
static void summary_answer(tpb_record_t *s, tpb_buf_t *js)
{
    int world = s->run.topo->size;
    const char *hosts[world];
    for (int r = 0; r < world; r++)
        hosts[r] = s->run.topo->hosts[r];
    tpb_buf_t txt = TPB_BUF_INIT;
    for (int r = 0, said = 0; s->run.emulate && r < world; r++) /* slow on purpose */
        if (s->run.emulate[r] < 1.0)
            tpb_buf_printf(&txt, "%s rank %d at %.2f",
                           said++ ? "," : "# emulated (--emulate-speed):", r, s->run.emulate[r]);
    if (tpb_buf_str(&txt)[0])
        tpb_buf_puts(&txt,
                     " of its speed: the ranks the answer calls slow were made slow on purpose\n");
    if (s->cpu_others > TPB_NOISY_LOAD) /* another process beside the run: its noise */
        tpb_buf_printf(&txt,
                       "# noise: other processes took %.0f %% of %s's CPU time during the run "
                       "(beside its ranks): the timings, and every verdict below, read with "
                       "care\n",
                       100 * s->cpu_others, s->cpu_others_host);
    const tpb_record_budget_t *b = &s->budget;
    if (b->budget_s > 0.0)
        tpb_buf_printf(&txt,
                       "# budget: %.1f s of --budget %g s spent on more looks of %d of %d sets "
                       "measured side by side (%d for the persistent straggler alone, %d for a "
                       "block's TP ranking alone); left open: %d when the budget ran out, %d "
                       "after %d looks\n",
                       b->spent_s, b->budget_s, b->extended, b->sets, b->for_straggler,
                       b->for_ranking, b->open_budget, b->open_looks, TPB_RECORD_BUDGET_LOOKS);
    /* a --block run ends with the block's answer: one block runs one TP degree and policy,
     * whatever its GEMMs would each prefer, so their lines come before it as its parts */
    if (s->nbhist) {
        tpb_buf_puts(&txt, "# the block's parts, GEMM by GEMM (each timed alone: what each "
                           "would pick by itself; the block's answer, last, is the one to "
                           "run)\n");
        tpb_answer_parts(&txt, js, s->hist, s->nhist, hosts, s->run.cal_target_spread);
    } else
        tpb_answer_write(&txt, js, s->hist, s->nhist, hosts, s->run.cal_target_spread);
    tpb_answer_overlap(&txt, js, s->ohist, s->nohist);
    tpb_answer_block(&txt, js, s->bhist, s->nbhist);
    fputs(tpb_buf_str(&txt), s->run.table);
    tpb_buf_free(&txt);
}

void tpb_record_summary(tpb_record_t *s)
{
    if (s->sealed) /* stopped while finishing: no answer the files do not hold */
        return;
    fputs(tpb_buf_str(&s->warnings), s->run.table); /* said once, after the table */
    tpb_buf_t js = TPB_BUF_INIT;
    tpb_json_obj_begin(&js);
    tpb_json_kv_str(&js, "type", "summary");
    tpb_json_key(&js, "decomposition");
    tpb_json_arr_begin(&js);
    int headed = 0;
    tpb_buf_t decomp = TPB_BUF_INIT;
    for (int i = 0; i < s->nhist; i++) { /* one series per (split, shape, policy) */
        const tpb_history_t *h = &s->hist[i];
        int seen = h->tp == 1;
        for (int j = 0; j < i && !seen; j++)
            seen = s->hist[j].tp > 1 && tpb_history_same_layer(&s->hist[j], h) &&
                   s->hist[j].policy == h->policy && s->hist[j].placement == h->placement;
        if (!seen)
            summary_series(s, h, &decomp, &js, &headed);
    }
    tpb_json_arr_end(&js);
    /* the answer comes right after the table: the decomposition's lines with --wide */
    if (s->run.width == TPB_TABLE_WIDE)
        fputs(tpb_buf_str(&decomp), s->run.table);
    else if (headed)
        fputs("# T(N) = T_comp/N + T_comm(N) + T_idle(N) per TP degree: with --wide, and in "
              "results.jsonl's summary\n",
              s->run.table);
    tpb_buf_free(&decomp);
    tpb_json_key(&js, "comm_model");
    tpb_json_arr_begin(&js);
    summary_comm_model(s, &js);
    tpb_json_arr_end(&js);
    tpb_json_key(&js, "placement");
    tpb_json_arr_begin(&js);
    summary_placement(s, &js);
    tpb_json_arr_end(&js);
    tpb_json_key(&js, "cpu_others"); /* other processes' share of the busiest machine */
    if (isfinite(s->cpu_others)) {
        tpb_json_obj_begin(&js);
        tpb_json_kv_num(&js, "share", s->cpu_others);
        tpb_json_kv_str(&js, "host", s->cpu_others_host);
        tpb_json_kv_num(&js, "noisy_above", TPB_NOISY_LOAD);
        tpb_json_obj_end(&js);
    } else {
        tpb_json_str(&js, NULL);
    }
    if (s->budget.budget_s > 0.0) { /* --budget: what it spent, what stayed open and why */
        tpb_json_key(&js, "budget");
        tpb_json_obj_begin(&js);
        tpb_json_kv_num(&js, "seconds", s->budget.budget_s);
        tpb_json_kv_num(&js, "spent_s", s->budget.spent_s);
        tpb_json_kv_int(&js, "sets", s->budget.sets);
        tpb_json_kv_int(&js, "extended", s->budget.extended);
        tpb_json_kv_int(&js, "for_straggler", s->budget.for_straggler);
        tpb_json_kv_int(&js, "for_ranking", s->budget.for_ranking);
        tpb_json_kv_int(&js, "open_budget_spent", s->budget.open_budget);
        tpb_json_kv_int(&js, "open_most_looks", s->budget.open_looks);
        tpb_json_kv_int(&js, "most_looks", TPB_RECORD_BUDGET_LOOKS);
        tpb_json_obj_end(&js);
    }
    tpb_json_key(&js, "answer");
    tpb_json_arr_begin(&js);
    summary_answer(s, &js);
    tpb_json_arr_end(&js);
    tpb_json_obj_end(&js);
    tpb_buf_puts(&js, "\n");
    tpb_buf_puts(&s->jsonl, tpb_buf_str(&js));
    tpb_buf_free(&js);
    fflush(s->run.table);
}
