/* shardplan_pack.c - a shard plan as one flat buffer (shardplan.h: tpb_shardplan_pack), so
 * that one rank parses the file and the others take the plan it read. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/shardplan.h"

#define HEAD 9 /* m, n, k, split, policy, tp, has_dtype, dtype, nranks */

/* The bytes of entry e: its head, then its world ranks, shards and speeds. */
static size_t entry_bytes(int nranks)
{
    return HEAD * sizeof(int64_t) + (size_t)nranks * (2 * sizeof(int64_t) + sizeof(double));
}

tpb_status_t tpb_shardplan_pack(const tpb_shardplan_t *p, char **buf, size_t *len)
{
    size_t n = sizeof(int64_t);
    for (int i = 0; i < p->n; i++)
        n += entry_bytes(p->e[i].nranks);
    char *b = malloc(n), *at = b;
    if (!b)
        return tpb_err_set(TPB_ERR_NOMEM, "out of memory for a shard plan of %zu bytes", n);
    int64_t count = p->n;
    memcpy(at, &count, sizeof(count));
    at += sizeof(count);
    for (int i = 0; i < p->n; i++) {
        const tpb_shardplan_entry_t *e = &p->e[i];
        int64_t head[HEAD] = {e->m,  e->n,         e->k,     e->split, e->policy,
                              e->tp, e->has_dtype, e->dtype, e->nranks};
        memcpy(at, head, sizeof(head));
        at += sizeof(head);
        for (int r = 0; r < e->nranks; r++) {
            int64_t v[2] = {e->world_ranks[r], e->shards[r]};
            memcpy(at, v, sizeof(v));
            at += sizeof(v);
            memcpy(at, &e->speeds[r], sizeof(double));
            at += sizeof(double);
        }
    }
    *buf = b;
    *len = n;
    return TPB_OK;
}

/* The next n bytes of [*at, end) into dst, or 0 where the buffer is short. */
static int take(const char **at, const char *end, void *dst, size_t n)
{
    if ((size_t)(end - *at) < n)
        return 0;
    memcpy(dst, *at, n);
    *at += n;
    return 1;
}

/* Entry e from [*at, end): 0 where the buffer is short or a count is out of range. */
static int unpack_entry(const char **at, const char *end, tpb_shardplan_entry_t *e)
{
    int64_t h[HEAD];
    if (!take(at, end, h, sizeof(h)) || h[8] < 0 || (uint64_t)h[8] > (uint64_t)(end - *at))
        return 0;
    *e = (tpb_shardplan_entry_t){.m = h[0],
                                 .n = h[1],
                                 .k = h[2],
                                 .split = (tpb_split_t)h[3],
                                 .policy = (tpb_policy_t)h[4],
                                 .tp = (int)h[5],
                                 .has_dtype = (int)h[6],
                                 .dtype = (tpb_dtype_t)h[7]};
    size_t nr = (size_t)h[8];
    e->world_ranks = malloc((nr ? nr : 1) * sizeof(int));
    e->shards = malloc((nr ? nr : 1) * sizeof(long));
    e->speeds = malloc((nr ? nr : 1) * sizeof(double));
    if (!e->world_ranks || !e->shards || !e->speeds)
        return 0;
    for (size_t r = 0; r < nr; r++) {
        int64_t v[2];
        if (!take(at, end, v, sizeof(v)) || !take(at, end, &e->speeds[r], sizeof(double)))
            return 0;
        e->world_ranks[r] = (int)v[0];
        e->shards[r] = (long)v[1];
        e->nranks = (int)r + 1;
    }
    return 1;
}

tpb_status_t tpb_shardplan_unpack(const char *buf, size_t len, tpb_shardplan_t *out)
{
    const char *at = buf, *end = buf + len;
    int64_t count;
    memset(out, 0, sizeof(*out));
    if (!take(&at, end, &count, sizeof(count)) || count < 0 ||
        (uint64_t)count > len / (HEAD * sizeof(int64_t)) + 1)
        return tpb_err_set(TPB_ERR_INVALID, "a shard plan passed between ranks is damaged");
    out->e = calloc(count ? (size_t)count : 1, sizeof(*out->e));
    if (!out->e)
        return tpb_err_set(TPB_ERR_NOMEM, "out of memory for a shard plan");
    for (int64_t i = 0; i < count; i++) {
        out->n = (int)i + 1; /* freed with the rest on error */
        if (!unpack_entry(&at, end, &out->e[i])) {
            tpb_shardplan_free(out);
            return tpb_err_set(TPB_ERR_INVALID, "a shard plan passed between ranks is damaged");
        }
    }
    return TPB_OK;
}
