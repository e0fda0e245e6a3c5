/* fleet_repeat.c - --fleet --repeat N: which nodes the passes excluded, and how often
 * (record/fleet_out.h). A node excluded in more than half of the passes is slow for the
 * launch's length (persistent: excluded over the passes); one excluded in fewer is a
 * slowdown of a pass (transient: left in, named). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/fleet_out.h"
#include "record/outfile.h"
#include "record/repeat.h"
#include "record/seal.h"

void tpb_fleet_passes_init(tpb_fleet_passes_t *p, int passes)
{
    memset(p, 0, sizeof(*p));
    p->passes = passes;
}

void tpb_fleet_passes_free(tpb_fleet_passes_t *p)
{
    free(p->host);
    free(p->count);
    memset(p, 0, sizeof(*p));
}

/* Count one exclusion of host (made on first sight). */
static tpb_status_t count(tpb_fleet_passes_t *p, const char *host, size_t len)
{
    for (int i = 0; i < p->n; i++)
        if (strlen(p->host[i]) == len && strncmp(p->host[i], host, len) == 0)
            return p->count[i]++, TPB_OK;
    if (p->n == p->cap) {
        int cap = p->cap ? 2 * p->cap : 8;
        char(*h)[TPB_HOST_LEN] = realloc(p->host, (size_t)cap * sizeof(*h));
        if (h)
            p->host = h;
        int *c = realloc(p->count, (size_t)cap * sizeof(*c));
        if (c)
            p->count = c;
        if (!h || !c)
            return tpb_err_set(TPB_ERR_NOMEM, "--fleet --repeat: out of memory for %d nodes", cap);
        p->cap = cap;
    }
    snprintf(p->host[p->n], TPB_HOST_LEN, "%.*s", (int)len, host);
    p->count[p->n++] = 1;
    return TPB_OK;
}

tpb_status_t tpb_fleet_passes_add(tpb_fleet_passes_t *p, const char *exclude)
{
    const char *s = strncmp(exclude, "--exclude=", 10) == 0 ? exclude + 10 : "";
    while (*s) {
        size_t len = strcspn(s, ",");
        TPB_CHECK_RET(count(p, s, len));
        s += len + (s[len] == ',');
    }
    p->done++;
    return TPB_OK;
}

/* The nodes excluded in more than half of the passes (persistent: 1) or fewer (0). */
static void list(tpb_buf_t *b, const tpb_fleet_passes_t *p, int persistent, const char *sep)
{
    int k = 0;
    for (int i = 0; i < p->n; i++)
        if ((2 * p->count[i] > p->done) == persistent)
            tpb_buf_printf(b, "%s%s", k++ ? sep : "", p->host[i]);
}

void tpb_fleet_passes_answer(const tpb_fleet_passes_t *p, tpb_buf_t *txt)
{
    tpb_buf_t ex = TPB_BUF_INIT, tr = TPB_BUF_INIT;
    list(&ex, p, 1, ",");
    list(&tr, p, 0, ", ");
    tpb_buf_printf(txt, "# over %d of %d passes: ", p->done, p->passes);
    for (int i = 0, k = 0; i < p->n; i++)
        tpb_buf_printf(txt, "%s%s excluded in %d", k++ ? ", " : "", p->host[i], p->count[i]);
    tpb_buf_puts(txt, p->n ? "\n" : "no node excluded in any pass\n");
    if (tr.len)
        tpb_buf_printf(txt,
                       "#   transient (excluded in half of the passes or fewer: left in): %s\n",
                       tpb_buf_str(&tr));
    if (ex.len)
        tpb_buf_printf(txt, "# exclude over the passes: --exclude=%s\n", tpb_buf_str(&ex));
    else
        tpb_buf_puts(txt, "# exclude over the passes: none (no node excluded in more than half)\n");
    tpb_buf_free(&ex);
    tpb_buf_free(&tr);
}

void tpb_fleet_passes_print(const tpb_fleet_passes_t *p, FILE *out)
{
    tpb_buf_t txt = TPB_BUF_INIT;
    tpb_fleet_passes_answer(p, &txt);
    fputs(tpb_buf_str(&txt), out);
    fflush(out);
    tpb_buf_free(&txt);
}

/* repeat.json's text over the passes done into js, saying status (NULL: by the passes
 * done). */
static void render(const tpb_fleet_passes_t *p, const char *cmd, const char *status, tpb_buf_t *js)
{
    tpb_buf_t ex = TPB_BUF_INIT;
    list(&ex, p, 1, ",");
    tpb_repeat_json_head(js, "fleet", cmd, p->passes, p->done, status);
    tpb_json_key(js, "nodes");
    tpb_json_arr_begin(js);
    for (int i = 0; i < p->n; i++) {
        tpb_json_obj_begin(js);
        tpb_json_kv_str(js, "host", p->host[i]);
        tpb_json_kv_int(js, "excluded_in", p->count[i]);
        tpb_json_kv_str(js, "verdict", 2 * p->count[i] > p->done ? "persistent" : "transient");
        tpb_json_obj_end(js);
    }
    tpb_json_arr_end(js);
    tpb_json_key(js, "exclude"); /* as fleet.json: the hosts, and Slurm's option */
    tpb_json_arr_begin(js);
    for (int i = 0; i < p->n; i++)
        if (2 * p->count[i] > p->done)
            tpb_json_str(js, p->host[i]);
    tpb_json_arr_end(js);
    tpb_buf_t opt = TPB_BUF_INIT;
    tpb_buf_printf(&opt, "--exclude=%s", tpb_buf_str(&ex));
    tpb_json_kv_str(js, "slurm_exclude", ex.len ? tpb_buf_str(&opt) : NULL);
    tpb_buf_free(&opt);
    tpb_repeat_json_close(js);
    tpb_buf_free(&ex);
}

tpb_status_t tpb_fleet_passes_write(const tpb_fleet_passes_t *p, const char *dir, const char *cmd)
{
    tpb_buf_t js = TPB_BUF_INIT, ends[TPB_SEAL_WAYS];
    render(p, cmd, NULL, &js);
    tpb_status_t st = tpb_buf_ok(&js) ? tpb_outfile_replace(dir, "repeat.json", js.data, js.len)
                                      : tpb_err_set(TPB_ERR_NOMEM, "out of memory for repeat.json");
    tpb_buf_free(&js);
    for (int i = 0; i < TPB_SEAL_WAYS; i++) { /* what it says if the run ends before its next */
        ends[i] = (tpb_buf_t)TPB_BUF_INIT;
        render(p, cmd, tpb_seal_status[i], &ends[i]);
    }
    tpb_seal_arm(dir, ends);
    return st;
}
