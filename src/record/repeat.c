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
