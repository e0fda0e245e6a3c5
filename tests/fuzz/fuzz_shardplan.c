/* fuzz_shardplan.c - libFuzzer target: the text of a shard plan (--shards-from); what is
 * accepted holds its promises: every group's shards add up to its split dimension, no
 * world rank is planned twice in a config, the policy is even or weighted; and what the
 * check against a run (granularity 1..64, each dtype) accepts is on the granularity and
 * the dtype's alignment, an even entry the even split. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/partition.h"
#include "cli/shardplan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536)
        return 0;
    tpb_shardplan_t p;
    if (tpb_shardplan_parse((const char *)data, size, "fuzz.json", &p) != TPB_OK)
        return 0;
    for (int i = 0; i < p.n; i++) {
        const tpb_shardplan_entry_t *e = &p.e[i];
        long dim = e->split == TPB_SPLIT_ROW ? e->k : e->n;
        if (e->nranks % e->tp != 0)
            abort();
        for (int g = 0; g < e->nranks; g += e->tp) {
            long sum = 0;
            for (int r = g; r < g + e->tp; r++)
                sum += e->shards[r];
            if (sum != dim)
                abort();
        }
        for (int a = 0; a < e->nranks; a++)
            for (int b = a + 1; b < e->nranks; b++)
                if (e->world_ranks[a] == e->world_ranks[b])
                    abort();
        if (e->policy != TPB_POLICY_EVEN && e->policy != TPB_POLICY_WEIGHTED)
            abort();
    }
    long g = size ? 1L << (data[size - 1] % 7) : 1; /* 1 .. 64, from the input */
    tpb_dtype_t dt = (tpb_dtype_t)(size ? data[0] % TPB_DTYPE_COUNT : 0);
    if (tpb_shardplan_check(&p, g, dt, "fuzz.json") == TPB_OK)
        for (int i = 0; i < p.n; i++) {
            const tpb_shardplan_entry_t *e = &p.e[i];
            long dim = e->split == TPB_SPLIT_ROW ? e->k : e->n, even[e->tp];
            int is_even = tpb_partition_even(dim, e->tp, g, even) == TPB_OK;
            if (e->has_dtype && e->dtype != dt)
                abort();
            for (int q = 0; q < e->nranks; q++) {
                long sh = e->shards[q] - (q % e->tp == e->tp - 1 ? dim % g : 0);
                if (sh < g || sh % g || e->shards[q] % tpb_dtype_align(dt))
                    abort();
                if (e->policy == TPB_POLICY_EVEN && (!is_even || even[q % e->tp] != e->shards[q]))
                    abort();
            }
        }
    tpb_shardplan_free(&p);
    return 0;
}
