/* fleet_out.c - --fleet's scores, table, exclude line and fleet.json (record/fleet_out.h). */
#include "record/fleet_out.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/buf.h"
#include "record/outfile.h"

/* The worse (lower) of two scores (an unknown one loses to a known one). */
static tpb_fleet_score_t worse(tpb_fleet_score_t a, tpb_fleet_score_t b)
{
    return !isfinite(a.score) || (isfinite(b.score) && b.score < a.score) ? b : a;
}

/* One component's verdict into the node's, its reason appended. */
static void judge(tpb_fleet_node_t *n, const char *what, tpb_fleet_score_t s, double thr)
{
    tpb_fleet_verdict_t v = tpb_fleet_judge(s, thr);
    if (v == TPB_FLEET_OK)
        return;
    size_t len = strlen(n->why);
    snprintf(n->why + len, sizeof(n->why) - len, "%s%s %.2f [%.2f, %.2f]%s", len ? ", " : "", what,
             s.score, s.lo, s.hi, v == TPB_FLEET_SUSPECT ? " (suspect)" : "");
    if (v > n->verdict)
        n->verdict = v;
}

void tpb_fleet_judge_nodes(const tpb_fleet_data_t *d, double thr, tpb_fleet_score_t *ranks,
                           tpb_fleet_node_t *nodes)
{
    int nl = d->nnodes > 1 ? d->nnodes - 1 : 0;
    tpb_fleet_score_t *coll = malloc((size_t)d->nnodes * sizeof(*coll));
    tpb_fleet_score_t *link = malloc((size_t)(nl ? nl : 1) * sizeof(*link));
    int *slowest = malloc((size_t)d->nnodes * sizeof(int));
    double p = tpb_fleet_median_of(d->peak, d->world);
    tpb_fleet_score_t none = {NAN, NAN, NAN};
    tpb_fleet_scores_at(d->gemm, d->cohort, d->world, d->gemm_rounds, d->gemm_conf, ranks);
    if (coll)
        tpb_fleet_scores(d->coll, NULL, d->nnodes, d->rounds, coll);
    if (link)
        tpb_fleet_scores(d->link, NULL, nl, d->rounds, link);
    if (slowest)
        tpb_fleet_slowest(ranks, d->node_of, d->world, d->nnodes, slowest);
    for (int j = 0; j < d->nnodes; j++) {
        int s = slowest ? slowest[j] : -1;
        nodes[j] = (tpb_fleet_node_t){
            s >= 0 ? ranks[s] : none, coll ? coll[j] : none, none, none, TPB_FLEET_OK, s, ""};
    }
    for (int r = 0; r < d->world; r++) {
        tpb_fleet_node_t *n = &nodes[d->node_of[r]];
        if (d->peak[r] > 0 && p > 0) /* no interval: below the threshold, suspect at most */
            n->clock =
                worse(n->clock, (tpb_fleet_score_t){d->peak[r] / p, d->peak[r] / p, INFINITY});
    }
    for (int j = 0; j < d->nnodes; j++) {
        tpb_fleet_node_t *n = &nodes[j];
        if (link && j > 0)
            n->link = worse(n->link, link[j - 1]);
        if (link && j + 1 < d->nnodes)
            n->link = worse(n->link, link[j]);
        judge(n, "GEMM", n->gemm, thr);
        judge(n, "collective", n->coll, thr);
        judge(n, "link", n->link, thr);
        judge(n, "clock", n->clock, thr);
    }
    free(coll);
    free(link);
    free(slowest);
}

/* Why --budget's GEMM rounds stopped. */
static const char *budget_why(const tpb_fleet_budget_t *b)
{
    return b->why == 1 ? "budget spent" : b->why == 2 ? "the most looks" : "decided";
}

static void kv_score(tpb_buf_t *b, const char *key, tpb_fleet_score_t s)
{
    tpb_json_key(b, key);
    tpb_json_obj_begin(b);
    tpb_json_kv_num(b, "score", s.score);
    tpb_json_kv_num(b, "lo", s.lo);
    tpb_json_kv_num(b, "hi", s.hi);
    tpb_json_obj_end(b);
}

static void fleet_json(tpb_buf_t *b, const tpb_fleet_data_t *d, double thr, const char *cmd,
                       const tpb_fleet_score_t *ranks, const tpb_fleet_node_t *nodes,
                       const char *exclude)
{
    char when[40];
    time_t now = time(NULL);
    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    tpb_json_obj_begin(b);
    tpb_json_kv_str(b, "schema", TPB_FLEET_SCHEMA);
    tpb_json_kv_str(b, "tool", "tpbal");
    tpb_json_kv_str(b, "written", when);
    tpb_json_kv_str(b, "command_line", cmd);
    tpb_json_kv_int(b, "world_size", d->world);
    tpb_json_kv_num(b, "threshold", thr);
    tpb_json_key(b, "gemm");
    tpb_json_obj_begin(b);
    tpb_json_kv_int(b, "m", d->m);
    tpb_json_kv_int(b, "n", d->n);
    tpb_json_kv_int(b, "k", d->k);
    tpb_json_kv_str(b, "dtype", d->dtype);
    tpb_json_kv_str(b, "turns", d->turns ? "yes" : "no");
    tpb_json_kv_int(b, "rounds", d->gemm_rounds);
    tpb_json_kv_num(b, "level", d->gemm_conf);
    tpb_json_obj_end(b);
    if (d->budget.budget_s > 0.0) {
        tpb_json_key(b, "budget");
        tpb_json_obj_begin(b);
        tpb_json_kv_num(b, "seconds", d->budget.budget_s);
        tpb_json_kv_num(b, "spent_s", d->budget.spent_s);
        tpb_json_kv_int(b, "looks", d->budget.looks);
        tpb_json_kv_int(b, "open", d->budget.open);
        tpb_json_kv_str(b, "stopped", budget_why(&d->budget));
        tpb_json_obj_end(b);
    }
    tpb_json_kv_num(b, "message_bytes", d->bytes);
    tpb_json_key(b, "ranks");
    tpb_json_arr_begin(b);
    for (int r = 0; r < d->world; r++) {
        tpb_json_obj_begin(b);
        tpb_json_kv_int(b, "rank", r);
        tpb_json_kv_str(b, "host", d->hosts[r]);
        double med, half;
        const double *g = d->gemm + (size_t)r * d->gemm_rounds;
        tpb_fleet_figure(g, d->gemm_rounds, &med, &half);
        tpb_json_kv_num(b, "gflops", med);
        tpb_json_kv_num(b, "gflops_half", half);
        tpb_json_kv_nums(b, "gflops_rounds", g, (size_t)d->gemm_rounds);
        tpb_json_kv_int(b, "cohort", d->cohort[r]);
        tpb_json_kv_num(b, "peak_gflops", d->peak[r] > 0 ? d->peak[r] : NAN);
        kv_score(b, "score", ranks[r]);
        tpb_json_obj_end(b);
    }
    tpb_json_arr_end(b);
    tpb_json_key(b, "nodes");
    tpb_json_arr_begin(b);
    for (int j = 0; j < d->nnodes; j++) {
        const tpb_fleet_node_t *n = &nodes[j];
        tpb_json_obj_begin(b);
        tpb_json_kv_int(b, "node", j);
        tpb_json_kv_str(b, "host", n->slowest >= 0 ? d->hosts[n->slowest] : "?");
        tpb_json_kv_int(b, "slowest_rank", n->slowest);
        kv_score(b, "gemm", n->gemm);
        double med, half;
        tpb_fleet_figure(d->coll + (size_t)j * d->rounds, d->rounds, &med, &half);
        tpb_json_kv_num(b, "allreduce_busbw_gbs", med);
        tpb_json_kv_num(b, "allreduce_busbw_half", half);
        tpb_json_kv_nums(b, "allreduce_rounds", d->coll + (size_t)j * d->rounds, (size_t)d->rounds);
        kv_score(b, "collective", n->coll);
        kv_score(b, "link", n->link);
        kv_score(b, "clock", n->clock);
        tpb_json_kv_str(b, "verdict", tpb_fleet_verdict_name(n->verdict));
        tpb_json_kv_str(b, "reason", n->why);
        tpb_json_obj_end(b);
    }
    tpb_json_arr_end(b);
    tpb_json_key(b, "links");
    tpb_json_arr_begin(b);
    for (int j = 0; j + 1 < d->nnodes; j++) {
        tpb_json_obj_begin(b);
        tpb_json_kv_int(b, "from", j);
        tpb_json_kv_int(b, "to", j + 1);
        double med, half;
        tpb_fleet_figure(d->link + (size_t)j * d->rounds, d->rounds, &med, &half);
        tpb_json_kv_num(b, "busbw_gbs", med);
        tpb_json_kv_num(b, "busbw_half", half);
        tpb_json_kv_nums(b, "busbw_rounds", d->link + (size_t)j * d->rounds, (size_t)d->rounds);
        tpb_json_kv_num(b, "alpha_us", d->link_alpha_us[j]);
        tpb_json_obj_end(b);
    }
    tpb_json_arr_end(b);
    tpb_json_key(b, "exclude");
    tpb_json_arr_begin(b);
    for (int j = 0; j < d->nnodes; j++)
        if (nodes[j].verdict == TPB_FLEET_EXCLUDE && nodes[j].slowest >= 0)
            tpb_json_str(b, d->hosts[nodes[j].slowest]);
    tpb_json_arr_end(b);
    tpb_json_kv_str(b, "slurm_exclude", exclude[0] ? exclude : NULL);
    tpb_json_obj_end(b);
    tpb_buf_puts(b, "\n");
}

/* A figure as the table shows it ("-": unknown). */
static const char *fig(char *out, size_t cap, const char *fmt, double v)
{
    if (isfinite(v))
        snprintf(out, cap, fmt, v);
    else
        snprintf(out, cap, "-");
    return out;
}

/* The table: ranks, then nodes, then the exclude line. */
static void fleet_table(FILE *f, const tpb_fleet_data_t *d, double thr,
                        const tpb_fleet_score_t *ranks, const tpb_fleet_node_t *nodes,
                        const char *exclude)
{
    char a[5][32];
    fprintf(f,
            "# fleet: %d ranks on %d node%s; GEMM %ldx%ldx%ld %s%s; all-reduce of %.0f bytes; "
            "scores against the fleet's median with 95 %% intervals (GEMM: %.4g %% over %d "
            "rounds); threshold %.2f\n",
            d->world, d->nnodes, d->nnodes == 1 ? "" : "s", d->m, d->n, d->k, d->dtype,
            d->turns ? " (a node's ranks in turns: they share cores or a GPU)" : "", d->bytes,
            100.0 * d->gemm_conf, d->gemm_rounds, thr);
    if (d->budget.budget_s > 0.0)
        fprintf(f,
                "# budget: %.1f s of --budget %g s spent on %d more look%s of every rank's GEMM "
                "(%d rounds a look); %s%d node%s left suspect for its GEMM%s\n",
                d->budget.spent_s, d->budget.budget_s, d->budget.looks - 1,
                d->budget.looks == 2 ? "" : "s", d->rounds,
                d->budget.open ? "" : "decided: ", d->budget.open, d->budget.open == 1 ? "" : "s",
                d->budget.why == 1   ? " when the budget ran out"
                : d->budget.why == 2 ? " after the most looks"
                                     : "");
    fprintf(f, "#  rank host             GFLOP/s   score [%.4g %%]\n", 100.0 * d->gemm_conf);
    for (int r = 0; r < d->world; r++)
        fprintf(f, "  %5d %-16.16s %8.1f   %.2f [%.2f, %.2f]\n", r, d->hosts[r],
                tpb_fleet_median_of(d->gemm + (size_t)r * d->gemm_rounds, d->gemm_rounds),
                ranks[r].score, ranks[r].lo, ranks[r].hi);
    fprintf(f, "#  node host              GEMM  all-reduce GB/s  link to next GB/s  alpha us  "
               "verdict\n");
    for (int j = 0; j < d->nnodes; j++) {
        const tpb_fleet_node_t *n = &nodes[j];
        int next = j + 1 < d->nnodes;
        fprintf(
            f, "  %5d %-16.16s %5.2f  %8s (%4s)  %8s (%4s)  %8s  %s%s%s\n", j,
            n->slowest >= 0 ? d->hosts[n->slowest] : "?", n->gemm.score,
            fig(a[0], 32, "%.2f", tpb_fleet_median_of(d->coll + (size_t)j * d->rounds, d->rounds)),
            fig(a[1], 32, "%.2f", n->coll.score),
            fig(a[2], 32, "%.2f",
                next ? tpb_fleet_median_of(d->link + (size_t)j * d->rounds, d->rounds) : NAN),
            fig(a[3], 32, "%.2f", n->link.score),
            fig(a[4], 32, "%.1f", next ? d->link_alpha_us[j] : NAN),
            tpb_fleet_verdict_name(n->verdict), n->why[0] ? ": " : "", n->why);
    }
    if (exclude[0])
        fprintf(f, "# exclude: %s\n", exclude);
    else
        fprintf(f, "# exclude: none (no node below %.2f with its whole interval)\n", thr);
    fflush(f);
}

tpb_status_t tpb_fleet_report(const tpb_fleet_data_t *d, double thr, const char *cmd, FILE *table,
                              const char *out_dir, int *excluded, tpb_buf_t *exclude)
{
    tpb_fleet_score_t *ranks = calloc((size_t)d->world, sizeof(*ranks));
    tpb_fleet_node_t *nodes = calloc((size_t)d->nnodes, sizeof(*nodes));
    tpb_buf_t ex = TPB_BUF_INIT, js = TPB_BUF_INIT;
    tpb_status_t st = TPB_OK;
    if (!ranks || !nodes) {
        st = tpb_err_set(TPB_ERR_NOMEM, "--fleet: out of memory for %d ranks", d->world);
        goto out;
    }
    tpb_fleet_judge_nodes(d, thr, ranks, nodes);
    *excluded = 0;
    for (int j = 0; j < d->nnodes; j++)
        if (nodes[j].verdict == TPB_FLEET_EXCLUDE && nodes[j].slowest >= 0)
            tpb_buf_printf(&ex, "%s%s",
                           (*excluded)++ ? "," : "--exclude=", d->hosts[nodes[j].slowest]);
    fleet_table(table, d, thr, ranks, nodes, tpb_buf_str(&ex));
    fleet_json(&js, d, thr, cmd, ranks, nodes, tpb_buf_str(&ex));
    if (exclude)
        tpb_buf_puts(exclude, tpb_buf_str(&ex));
    if (!tpb_buf_ok(&js) || !tpb_buf_ok(&ex))
        st = tpb_err_set(TPB_ERR_NOMEM, "--fleet: out of memory for fleet.json");
    else if (out_dir[0])
        st = tpb_outfile_replace(out_dir, "fleet.json", tpb_buf_str(&js), js.len);
out:
    tpb_buf_free(&ex);
    tpb_buf_free(&js);
    free(ranks);
    free(nodes);
    return st;
}
