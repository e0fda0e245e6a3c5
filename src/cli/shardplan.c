/* shardplan.c - reading tpbal-plan's shard plans (--shards-from). */
#include "cli/shardplan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/infile.h"
#include "base/jsonread.h"
#include "base/partition.h"

#define MAX_DIM 2147483647L
#define MAX_TP (1L << 20)

/* A named enum field of config i. */
static tpb_status_t name_field(const tpb_jv_t *c, const char *key, const tpb_name_table_t *t,
                               const char *what, int i, unsigned *out)
{
    const tpb_jv_t *v = tpb_jv_get(c, key);
    if (!v || v->kind != TPB_JV_STR || tpb_name_parse(t, v->str, out) != TPB_OK)
        return tpb_err_set(TPB_ERR_INVALID, "%s: config %d: \"%s\" must be one of %s", what, i, key,
                           t->accepted);
    return TPB_OK;
}

static tpb_status_t long_field(const tpb_jv_t *c, const char *key, long hi, const char *what, int i,
                               long *out)
{
    if (!tpb_jv_long(tpb_jv_get(c, key), 1, hi, out))
        return tpb_err_set(TPB_ERR_INVALID,
                           "%s: config %d: \"%s\" must be an integer from 1 to %ld", what, i, key,
                           hi);
    return TPB_OK;
}

/* Group g of config i: tp world ranks and shards, appended at e->nranks. */
static tpb_status_t read_group(const tpb_jv_t *grp, tpb_shardplan_entry_t *e, long dim,
                               const char *what, int i, int g)
{
    const tpb_jv_t *w = tpb_jv_get(grp, "world_ranks"), *s = tpb_jv_get(grp, "shards");
    const tpb_jv_t *sp = tpb_jv_get(grp, "speeds_gflops");
    if (!w || w->kind != TPB_JV_ARR || !s || s->kind != TPB_JV_ARR || w->n != e->tp ||
        s->n != e->tp)
        return tpb_err_set(TPB_ERR_INVALID,
                           "%s: config %d group %d: \"world_ranks\" and "
                           "\"shards\" must be lists of tp (%d) integers",
                           what, i, g, e->tp);
    long sum = 0;
    for (int r = 0; r < e->tp; r++) {
        long wr, sh;
        if (!tpb_jv_long(&w->items[r], 0, MAX_TP * 64, &wr) ||
            !tpb_jv_long(&s->items[r], 1, dim, &sh))
            return tpb_err_set(TPB_ERR_INVALID,
                               "%s: config %d group %d: a world rank or shard "
                               "out of range (shards from 1 to %ld)",
                               what, i, g, dim);
        double speed = NAN;
        if (sp && sp->kind == TPB_JV_ARR && sp->n == e->tp && sp->items[r].kind == TPB_JV_NUM &&
            sp->items[r].num > 0)
            speed = sp->items[r].num;
        e->world_ranks[e->nranks] = (int)wr;
        e->shards[e->nranks] = sh;
        e->speeds[e->nranks++] = speed;
        sum += sh;
    }
    if (sum != dim)
        return tpb_err_set(TPB_ERR_INVALID,
                           "%s: config %d group %d: the shards add up to %ld, "
                           "not the split dimension %ld",
                           what, i, g, sum, dim);
    double lo = INFINITY, hi = 0.0; /* the speeds given: within --speeds' bound of each other */
    for (int r = e->nranks - e->tp; r < e->nranks; r++)
        if (isfinite(e->speeds[r])) {
            lo = fmin(lo, e->speeds[r]);
            hi = fmax(hi, e->speeds[r]);
        }
    if (hi > 0.0 && hi > TPB_SPEED_MAX_RATIO * lo)
        return tpb_err_set(TPB_ERR_INVALID,
                           "%s: config %d group %d: speeds_gflops from %g to %g, a ratio over "
                           "%g (as --speeds refuses)",
                           what, i, g, lo, hi, TPB_SPEED_MAX_RATIO);
    return TPB_OK;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* No world rank planned twice in config i (sorted: n log n, whatever n). */
static tpb_status_t distinct_ranks(const tpb_shardplan_entry_t *e, const char *what, int i)
{
    int *r = malloc((size_t)e->nranks * sizeof(int));
    if (!r)
        return tpb_err_set(TPB_ERR_NOMEM, "out of memory reading %s", what);
    memcpy(r, e->world_ranks, (size_t)e->nranks * sizeof(int));
    qsort(r, (size_t)e->nranks, sizeof(int), cmp_int);
    int dup = -1;
    for (int q = 1; q < e->nranks && dup < 0; q++)
        if (r[q] == r[q - 1])
            dup = r[q];
    free(r);
    if (dup >= 0)
        return tpb_err_set(TPB_ERR_INVALID, "%s: config %d: world rank %d is planned twice", what,
                           i, dup);
    return TPB_OK;
}

static tpb_status_t read_config(const tpb_jv_t *c, tpb_shardplan_entry_t *e, const char *what,
                                int i)
{
    unsigned split, policy;
    long tp;
    TPB_CHECK_RET(long_field(c, "m", MAX_DIM, what, i, &e->m));
    TPB_CHECK_RET(long_field(c, "n", MAX_DIM, what, i, &e->n));
    TPB_CHECK_RET(long_field(c, "k", MAX_DIM, what, i, &e->k));
    TPB_CHECK_RET(long_field(c, "tp", MAX_TP, what, i, &tp));
    TPB_CHECK_RET(name_field(c, "split", &tpb_splits, what, i, &split));
    TPB_CHECK_RET(name_field(c, "policy", &tpb_policies, what, i, &policy));
    e->split = (tpb_split_t)split;
    e->policy = (tpb_policy_t)policy;
    e->tp = (int)tp;
    if (e->policy != TPB_POLICY_EVEN && e->policy != TPB_POLICY_WEIGHTED)
        return tpb_err_set(TPB_ERR_INVALID,
                           "%s: config %d: policy \"%s\" has no planned shards (a plan holds even "
                           "or weighted splits)",
                           what, i, tpb_policy_name(e->policy));
    const tpb_jv_t *dt = tpb_jv_get(c, "dtype");
    if (dt && (dt->kind != TPB_JV_STR || tpb_dtype_parse(dt->str, &e->dtype) != TPB_OK))
        return tpb_err_set(TPB_ERR_INVALID, "%s: config %d: \"dtype\" is not a dtype tpbal knows",
                           what, i);
    e->has_dtype = dt != NULL;
    const tpb_jv_t *groups = tpb_jv_get(c, "groups");
    if (!groups || groups->kind != TPB_JV_ARR || groups->n < 1 ||
        (long)groups->n * tp > MAX_TP * 64)
        return tpb_err_set(TPB_ERR_INVALID, "%s: config %d: \"groups\" must be a non-empty list",
                           what, i);
    size_t n = (size_t)groups->n * (size_t)tp;
    e->world_ranks = malloc(n * sizeof(int));
    e->shards = malloc(n * sizeof(long));
    e->speeds = malloc(n * sizeof(double));
    if (!e->world_ranks || !e->shards || !e->speeds)
        return tpb_err_set(TPB_ERR_NOMEM, "out of memory reading %s", what);
    long dim = e->split == TPB_SPLIT_ROW ? e->k : e->n;
    for (int g = 0; g < groups->n; g++)
        TPB_CHECK_RET(read_group(&groups->items[g], e, dim, what, i, g));
    return distinct_ranks(e, what, i);
}

static tpb_status_t read_plan(const tpb_jv_t *doc, const char *what, tpb_shardplan_t *out)
{
    const tpb_jv_t *schema = tpb_jv_get(doc, "schema"), *cfgs = tpb_jv_get(doc, "configs");
    if (!schema || schema->kind != TPB_JV_STR || strcmp(schema->str, TPB_SHARDPLAN_SCHEMA) != 0)
        return tpb_err_set(TPB_ERR_INVALID,
                           "%s: not a shard plan of schema %s (write one with "
                           "tpbal-plan --plan-out)",
                           what, TPB_SHARDPLAN_SCHEMA);
    if (!cfgs || cfgs->kind != TPB_JV_ARR || cfgs->n < 1)
        return tpb_err_set(TPB_ERR_INVALID, "%s: \"configs\" must be a non-empty list", what);
    if (!(out->e = calloc((size_t)cfgs->n, sizeof(*out->e))))
        return tpb_err_set(TPB_ERR_NOMEM, "out of memory reading %s", what);
    for (int i = 0; i < cfgs->n; i++) {
        out->n = i + 1; /* freed with the rest on error */
        TPB_CHECK_RET(read_config(&cfgs->items[i], &out->e[i], what, i));
        for (int j = 0; j < i; j++)
            if (tpb_shardplan_find(out, &out->e[i].key) != &out->e[i])
                return tpb_err_set(TPB_ERR_INVALID,
                                   "%s: config %d plans a config that config "
                                   "%d plans already",
                                   what, i, j);
    }
    return TPB_OK;
}

tpb_status_t tpb_shardplan_parse(const char *text, size_t len, const char *what,
                                 tpb_shardplan_t *out)
{
    memset(out, 0, sizeof(*out));
    tpb_jv_t doc;
    TPB_CHECK_RET(tpb_json_parse(text, len, what, &doc));
    tpb_status_t st = read_plan(&doc, what, out);
    tpb_jv_free(&doc);
    if (st != TPB_OK)
        tpb_shardplan_free(out);
    return st;
}

size_t tpb_shardplan_max_bytes(int world)
{
    double b = 1048576.0 + 32768.0 * (world > 0 ? world : 1);
    return b < (double)TPB_INFILE_MAX ? (size_t)b : TPB_INFILE_MAX;
}

tpb_status_t tpb_shardplan_load(const char *path, size_t max_bytes, tpb_shardplan_t *out)
{
    char *text;
    size_t len;
    int missing = 0;
    memset(out, 0, sizeof(*out));
    TPB_CHECK_RET(tpb_infile_read(path, "--shards-from", max_bytes, &text, &len, &missing));
    if (missing)
        return tpb_err_set(TPB_ERR_INVALID, "--shards-from '%s': no such file", path);
    char what[1100];
    snprintf(what, sizeof(what), "--shards-from %s", path);
    tpb_status_t st = tpb_shardplan_parse(text, len, what, out);
    free(text);
    return st;
}

/* Group g of entry e (shards sh[tp]) on granularity g and alignment a, and even when it
 * says so; why[] says what is wrong ("" when nothing). */
static void check_group(const tpb_shardplan_entry_t *e, const long *sh, long gran, tpb_dtype_t dt,
                        char *why, size_t cap)
{
    long align = tpb_dtype_align(dt);
    long total = e->split == TPB_SPLIT_ROW ? e->k : e->n;
    why[0] = '\0';
    for (int r = 0; r < e->tp && !why[0]; r++) {
        long units = r == e->tp - 1 ? sh[r] - total % gran : sh[r];
        if (units < gran || units % gran)
            snprintf(why, cap, "shard %d (%ld) is not a multiple of the granularity %ld", r, sh[r],
                     gran);
        else if (sh[r] % align)
            snprintf(why, cap, "shard %d (%ld) is not a multiple of %ld, as %s GEMMs need", r,
                     sh[r], align, tpb_dtype_name(dt));
    }
    long even[e->tp];
    if (!why[0] && e->policy == TPB_POLICY_EVEN &&
        tpb_partition_even(total, e->tp, gran, even) == TPB_OK &&
        memcmp(even, sh, sizeof(even)) != 0)
        snprintf(why, cap, "the shards are not the even split (%ld for the first) its policy says",
                 even[0]);
}

tpb_status_t tpb_shardplan_check(const tpb_shardplan_t *p, long g, tpb_dtype_t dt, const char *what)
{
    for (int i = 0; i < p->n; i++) {
        const tpb_shardplan_entry_t *e = &p->e[i];
        if (e->has_dtype && e->dtype != dt)
            return tpb_err_set(TPB_ERR_INVALID,
                               "%s: config %d was planned from %s speeds and this run is %s: plan "
                               "from a run of the dtype you run",
                               what, i, tpb_dtype_name(e->dtype), tpb_dtype_name(dt));
        for (int q = 0; q < e->nranks; q += e->tp) {
            char why[160];
            check_group(e, &e->shards[q], g, dt, why, sizeof(why));
            if (why[0])
                return tpb_err_set(TPB_ERR_INVALID,
                                   "%s: config %d group %d: %s (--granularity %ld, --dtype %s)",
                                   what, i, q / e->tp, why, g, tpb_dtype_name(dt));
        }
    }
    return TPB_OK;
}

void tpb_shardplan_free(tpb_shardplan_t *p)
{
    for (int i = 0; i < p->n; i++) {
        free(p->e[i].world_ranks);
        free(p->e[i].shards);
        free(p->e[i].speeds);
    }
    free(p->e);
    memset(p, 0, sizeof(*p));
}

const tpb_shardplan_entry_t *tpb_shardplan_find(const tpb_shardplan_t *p, const tpb_config_key_t *k)
{
    for (int i = 0; i < p->n; i++)
        if (tpb_config_key_same(&p->e[i].key, k, TPB_SHARDPLAN_KEY))
            return &p->e[i];
    return NULL;
}
