/* repeat.c - --repeat's passes and what they say together (record/repeat.h). */
#include "record/repeat.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/stats.h"
#include "record/answer.h"
#include "record/seal.h"

void tpb_repeat_init(tpb_repeat_t *r, int passes)
{
    memset(r, 0, sizeof(*r));
    r->passes = passes < TPB_PASSES_MAX ? passes : TPB_PASSES_MAX;
}

void tpb_repeat_free(tpb_repeat_t *r)
{
    free(r->c);
    memset(r, 0, sizeof(*r));
}

/* The config of key (a block or not), made on first sight with nothing measured. */
static tpb_repeat_cfg_t *cfg_of(tpb_repeat_t *r, const tpb_config_key_t *key, int block)
{
    for (int i = 0; i < r->nc; i++)
        if (r->c[i].block == block && tpb_config_key_same(&r->c[i].key, key, TPB_KEY_ALL))
            return &r->c[i];
    if (r->nc == r->cap) {
        int cap = r->cap ? 2 * r->cap : 16;
        tpb_repeat_cfg_t *c = realloc(r->c, (size_t)cap * sizeof(*c));
        if (!c)
            return NULL;
        r->c = c, r->cap = cap;
    }
    tpb_repeat_cfg_t *c = &r->c[r->nc++];
    memset(c, 0, sizeof(*c));
    c->key = *key;
    c->block = block;
    for (int p = 0; p < TPB_PASSES_MAX; p++)
        c->step[p] = c->v[p].speedup = NAN, c->half[p] = INFINITY;
    return c;
}

/* Pass `pass` of the configs (or blocks) hist[n]: steps, and verdicts over even. */
static tpb_status_t add_hist(tpb_repeat_t *r, int pass, const tpb_history_t *hist, int n, int block)
{
    for (int i = 0; i < n; i++) {
        const tpb_history_t *h = &hist[i];
        tpb_repeat_cfg_t *c = cfg_of(r, &h->key, block);
        if (!c)
            return tpb_err_set(TPB_ERR_NOMEM, "out of memory for --repeat's %d configs", r->nc);
        c->step[pass] = h->step_med;
        c->half[pass] = h->steps && h->nsteps > 0
                            ? tpb_interval_median_half(h->steps, (size_t)h->nsteps)
                            : INFINITY;
        if (h->world > 0)
            r->world = h->world;
        const tpb_history_t *ev =
            h->comm_only || h->policy == TPB_POLICY_EVEN ? NULL : tpb_verdict_even_of(hist, n, h);
        if (ev) {
            c->v[pass] = tpb_verdict_of(ev, h, TPB_VERDICT_TOL);
            c->has_v = 1;
        }
    }
    return TPB_OK;
}

/* Pass `pass`'s straggler at every TP degree > 1 with blocks. */
static void add_stragglers(tpb_repeat_t *r, int pass, const tpb_history_t *hist, int n)
{
    for (int i = 0; i < n; i++) {
        const tpb_history_t *h = &hist[i];
        if (h->tp < 2 || h->comm_only || !h->nslow)
            continue;
        int t = 0;
        while (t < r->nt && r->t[t].tp != h->tp)
            t++;
        if (t == r->nt) {
            if (r->nt == TPB_REPEAT_TPS)
                continue;
            r->nt++;
            r->t[t].tp = h->tp;
            for (int p = 0; p < TPB_PASSES_MAX; p++)
                r->t[t].p[p] = (tpb_persistent_t){.rank = -1, .deficit = NAN};
        } else if (r->t[t].p[pass].of > 0) {
            continue; /* this pass's degree already read */
        }
        r->t[t].p[pass] = tpb_answer_persistent(hist, n, h->tp);
    }
}

tpb_status_t tpb_repeat_add(tpb_repeat_t *r, const tpb_record_t *rec)
{
    if (r->done >= r->passes)
        return tpb_err_set(TPB_ERR_INVALID, "--repeat: more passes than %d", r->passes);
    int pass = r->done;
    TPB_CHECK_RET(add_hist(r, pass, rec->hist, rec->nhist, 0));
    TPB_CHECK_RET(add_hist(r, pass, rec->bhist, rec->nbhist, 1));
    add_stragglers(r, pass, rec->hist, rec->nhist);
    r->done++;
    return TPB_OK;
}

/* "384x768x1024 tp 2 row weighted" (a block: its name). */
static void label(char *out, size_t cap, const tpb_repeat_cfg_t *c)
{
    if (c->block)
        snprintf(out, cap, "block %s tp %d %s", c->key.shape_name, c->key.tp,
                 tpb_policy_name(c->key.policy));
    else if (c->key.comm_only)
        snprintf(out, cap, "comm-only %s %ldx%ldx%ld tp %d", tpb_split_name(c->key.split), c->key.m,
                 c->key.n, c->key.k, c->key.tp);
    else
        snprintf(out, cap, "%ldx%ldx%ld%s%s tp %d %s", c->key.m, c->key.n, c->key.k,
                 c->key.shape_name[0] ? " " : "", c->key.shape_name, c->key.tp,
                 tpb_config_key_label(&c->key));
}

/* The configs' pass-to-pass spreads: the line and the JSON member. */
static void run_to_run(const tpb_repeat_t *r, tpb_buf_t *txt, tpb_buf_t *js)
{
    double *s = malloc(((size_t)r->nc + 1) * sizeof(*s)), worst = NAN;
    int k = 0, at = -1;
    for (int i = 0; s && i < r->nc; i++) {
        double v = tpb_passes_spread(r->c[i].step, r->done);
        if (!isfinite(v) || r->done < 2)
            continue;
        s[k++] = v;
        if (!(v <= worst))
            worst = v, at = i;
    }
    double mid = s ? tpb_stats_median(s, (size_t)k) : NAN;
    if (k) {
        char l[160];
        label(l, sizeof(l), &r->c[at]);
        tpb_buf_printf(txt,
                       "#   run to run: a config's median step moved by %.1f %% from pass to "
                       "pass (the median of %d configs' SD of log step; the most %.1f %%, %s)\n",
                       100.0 * mid, k, 100.0 * worst, l);
    }
    free(s);
    tpb_json_key(js, "run_to_run");
    tpb_json_obj_begin(js);
    tpb_json_kv_num(js, "median_spread", mid);
    tpb_json_kv_num(js, "max_spread", worst);
    tpb_json_kv_int(js, "configs", k);
    tpb_json_obj_end(js);
}

/* One policy's verdict over the passes: the line and its JSON object. */
static void verdict_over(const tpb_repeat_t *r, const tpb_repeat_cfg_t *c, tpb_buf_t *txt,
                         tpb_buf_t *js)
{
    int disturbed, measured;
    tpb_verdict_t verdict;
    tpb_passes_ratio_t pr = tpb_repeat_over_even(r, c, &disturbed, &measured, &verdict);
    double s = 1.0 / pr.ratio, lo = s * exp(-pr.half), hi = s * exp(pr.half);
    char l[160], rule[160];
    label(l, sizeof(l), c);
    if (pr.n < 2)
        snprintf(rule, sizeof(rule), "%d pass%s with an interval", pr.n, pr.n == 1 ? "" : "es");
    else if (pr.by_pass)
        snprintf(rule, sizeof(rule),
                 "a pass as the unit: they disagree more than their intervals (Q %.1f on %d "
                 "df), %.1f %% apart",
                 pr.q, pr.n - 1, 100.0 * pr.spread);
    else
        snprintf(rule, sizeof(rule),
                 "%d passes pooled: they agree within their intervals "
                 "(Q %.1f on %d df)",
                 pr.n, pr.q, pr.n - 1);
    if (pr.n > 0)
        tpb_buf_printf(txt, "#   %s over even: %.3gx [%.3g, %.3g] %s, %s", l, s, lo, hi,
                       tpb_verdict_name(verdict), rule);
    else /* every pass disturbed, or none measured it */
        tpb_buf_printf(txt, "#   %s over even: %s, no pass with an interval", l,
                       tpb_verdict_name(verdict));
    if (disturbed)
        tpb_buf_printf(txt, "; %d of %d passes disturbed, left out", disturbed, measured);
    tpb_buf_puts(txt, "\n");
    tpb_json_obj_begin(js);
    tpb_config_key_json(js, &c->key, TPB_KEY_ALL);
    tpb_json_kv_str(js, "kind", c->block ? "block" : "config");
    tpb_json_kv_num(js, "speedup", s);
    tpb_json_kv_num(js, "lo", lo);
    tpb_json_kv_num(js, "hi", hi);
    tpb_json_kv_num(js, "confidence", 0.95);
    tpb_json_kv_str(js, "verdict", tpb_verdict_name(verdict));
    tpb_json_kv_str(js, "rule", pr.by_pass ? "by_pass" : "pooled");
    tpb_json_kv_num(js, "q", pr.q);
    tpb_json_kv_num(js, "pass_spread", pr.spread);
    tpb_json_kv_int(js, "passes_used", pr.n);
    tpb_json_kv_int(js, "disturbed", disturbed);
    tpb_json_key(js, "per_pass");
    tpb_json_arr_begin(js);
    for (int p = 0; p < r->done; p++) {
        const tpb_policy_verdict_t *v = &c->v[p];
        tpb_json_obj_begin(js);
        tpb_json_kv_num(js, "speedup", v->speedup);
        tpb_json_kv_num(js, "lo", v->lo);
        tpb_json_kv_num(js, "hi", v->hi);
        tpb_json_kv_num(js, "confidence", v->speedup > 0.0 ? (v->conf > 0 ? v->conf : 0.95) : NAN);
        tpb_json_kv_str(js, "verdict", v->speedup > 0.0 ? tpb_verdict_name(v->verdict) : NULL);
        tpb_json_obj_end(js);
    }
    tpb_json_arr_end(js);
    tpb_json_obj_end(js);
}

/* One TP degree's straggler over the passes: the line and its JSON object. */
static void straggler_over(const tpb_repeat_t *r, const tpb_repeat_tp_t *t, tpb_buf_t *txt,
                           tpb_buf_t *js)
{
    tpb_passes_straggler_t s = tpb_passes_straggler(t->p, r->done, t->tp);
    switch (s.verdict) {
    case TPB_PASSES_PERSISTENT:
        tpb_buf_printf(txt,
                       "#   straggler at tp %d: rank %d, persistent over the passes: the slowest "
                       "most often in %d of %d, in %d of %d windows pooled (%d needed: chance "
                       "alone names one at most once in 100 runs), %.1f %% slower\n",
                       t->tp, s.rank, s.named, r->done, s.count, s.blocks, s.need,
                       100.0 * s.deficit);
        break;
    case TPB_PASSES_TRANSIENT:
        tpb_buf_printf(txt,
                       "#   transient at tp %d: rank %d, the slowest most often in %d of %d "
                       "passes only (a slowdown of a pass, not the rank's)\n",
                       t->tp, s.rank, s.named, r->done);
        break;
    case TPB_PASSES_NONE:
        tpb_buf_printf(txt,
                       "#   no persistent straggler at tp %d over the passes (most often the "
                       "slowest: rank %d, in %d of %d windows pooled; %d needed)\n",
                       t->tp, s.rank, s.count, s.blocks, s.need);
        break;
    case TPB_PASSES_UNDECIDABLE:
        tpb_buf_printf(txt,
                       "#   no persistent straggler at tp %d: not enough data even over the "
                       "passes (%d windows; more --iters or passes)\n",
                       t->tp, s.blocks);
    }
    tpb_json_obj_begin(js);
    tpb_json_kv_int(js, "tp", t->tp);
    tpb_json_kv_num(js, "rank", s.rank >= 0 ? s.rank : NAN);
    tpb_json_kv_str(js, "verdict", tpb_passes_slow_name(s.verdict));
    tpb_json_kv_int(js, "named_in", s.named);
    tpb_json_kv_int(js, "persistent_in", s.flagged);
    tpb_json_kv_int(js, "slowest_blocks", s.count);
    tpb_json_kv_int(js, "blocks", s.blocks);
    tpb_json_kv_int(js, "blocks_needed", s.need);
    tpb_json_kv_num(js, "deficit", s.deficit);
    tpb_json_kv_num(js, "false_alarm", TPB_DETECT_ALPHA);
    tpb_json_key(js, "per_pass");
    tpb_json_arr_begin(js);
    for (int p = 0; p < r->done; p++) {
        tpb_json_obj_begin(js);
        tpb_json_kv_num(js, "rank", t->p[p].rank >= 0 ? t->p[p].rank : NAN);
        tpb_json_kv_int(js, "slowest_blocks", t->p[p].slowest);
        tpb_json_kv_int(js, "blocks", t->p[p].of);
        tpb_json_kv_str(js, "persistent", t->p[p].persistent ? "yes" : "no");
        tpb_json_obj_end(js);
    }
    tpb_json_arr_end(js);
    tpb_json_obj_end(js);
}

void tpb_repeat_answer(const tpb_repeat_t *r, tpb_buf_t *txt, tpb_buf_t *js)
{
    tpb_buf_printf(txt,
                   "# over %d of %d passes (each its own calibration and clock sync; 95 %% "
                   "intervals: doc/METRICS.md, \"Repeated passes\"):\n",
                   r->done, r->passes);
    run_to_run(r, txt, js);
    tpb_json_key(js, "verdicts");
    tpb_json_arr_begin(js);
    for (int i = 0; i < r->nc; i++)
        if (r->c[i].has_v)
            verdict_over(r, &r->c[i], txt, js);
    tpb_json_arr_end(js);
    tpb_json_key(js, "stragglers");
    tpb_json_arr_begin(js);
    for (int t = 0; t < r->nt; t++)
        straggler_over(r, &r->t[t], txt, js);
    tpb_json_arr_end(js);
    tpb_repeat_use(r, txt, js);
    tpb_json_key(js, "configs");
    tpb_json_arr_begin(js);
    for (int i = 0; i < r->nc; i++) {
        tpb_json_obj_begin(js);
        tpb_config_key_json(js, &r->c[i].key, TPB_KEY_ALL);
        tpb_json_kv_str(js, "kind", r->c[i].block ? "block" : "config");
        tpb_json_kv_nums(js, "step_us", r->c[i].step, (size_t)r->done);
        tpb_json_kv_num(js, "spread", r->done > 1 ? tpb_passes_spread(r->c[i].step, r->done) : NAN);
        tpb_json_obj_end(js);
    }
    tpb_json_arr_end(js);
}

void tpb_repeat_json_head(tpb_buf_t *js, const char *kind, const char *command_line, int passes,
                          int done, const char *status)
{
    tpb_json_obj_begin(js);
    tpb_json_kv_str(js, "type", "repeat");
    tpb_json_kv_str(js, "kind", kind);
    tpb_json_kv_int(js, "schema", TPB_SCHEMA_VERSION);
    tpb_json_kv_str(js, "command_line", command_line);
    tpb_json_kv_int(js, "passes", passes);
    tpb_json_kv_int(js, "passes_done", done);
    tpb_json_kv_str(js, "status", status ? status : done == passes ? "finished" : "running");
    tpb_json_key(js, "pass_dirs");
    tpb_json_arr_begin(js);
    for (int p = 0; p < done; p++) {
        char name[32];
        snprintf(name, sizeof(name), "pass-%d", p + 1);
        tpb_json_str(js, name);
    }
    tpb_json_arr_end(js);
}

void tpb_repeat_json_close(tpb_buf_t *js)
{
    tpb_json_obj_end(js);
    tpb_buf_puts(js, "\n");
}

tpb_status_t tpb_repeat_json_save(tpb_buf_t *js, const char *dir)
{
    tpb_repeat_json_close(js);
    tpb_status_t st = tpb_buf_ok(js) ? tpb_outfile_replace(dir, "repeat.json", js->data, js->len)
                                     : tpb_err_set(TPB_ERR_NOMEM, "out of memory for repeat.json");
    tpb_buf_free(js);
    return st;
}

/* repeat.json's whole text over the passes done, saying status (NULL: "running" or
 * "finished" by the passes done); the answer's '#' lines into txt where given. */
static void render(const tpb_repeat_t *r, const char *command_line, const char *status,
                   tpb_buf_t *js, tpb_buf_t *txt)
{
    tpb_buf_t drop = TPB_BUF_INIT;
    tpb_repeat_json_head(js, "sweep", command_line, r->passes, r->done, status);
    if (r->done > 0)
        tpb_repeat_answer(r, txt ? txt : &drop, js);
    tpb_buf_free(&drop);
}

tpb_status_t tpb_repeat_write(const tpb_repeat_t *r, const char *dir, const char *command_line)
{
    tpb_buf_t js = TPB_BUF_INIT, ends[TPB_SEAL_WAYS];
    render(r, command_line, NULL, &js, NULL);
    tpb_status_t st = tpb_repeat_json_save(&js, dir);
    for (int i = 0; i < TPB_SEAL_WAYS; i++) { /* what it says if the run ends before its next */
        ends[i] = (tpb_buf_t)TPB_BUF_INIT;
        render(r, command_line, tpb_seal_status[i], &ends[i], NULL);
        tpb_repeat_json_close(&ends[i]);
    }
    tpb_seal_arm(dir, ends);
    return st;
}

tpb_status_t tpb_repeat_finish(const tpb_repeat_t *r, FILE *out, const char *dir,
                               const char *command_line)
{
    tpb_buf_t js = TPB_BUF_INIT, txt = TPB_BUF_INIT;
    tpb_seal_disarm();
    if (r->done < 1)
        return TPB_OK;
    render(r, command_line, NULL, &js, &txt);
    if (out) {
        fputs(tpb_buf_str(&txt), out);
        fflush(out);
    }
    tpb_buf_free(&txt);
    if (!dir[0]) {
        tpb_buf_free(&js);
        return TPB_OK;
    }
    return tpb_repeat_json_save(&js, dir);
}
