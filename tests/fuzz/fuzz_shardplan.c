/* fuzz_shardplan.c - libFuzzer target: the text of a shard plan (--shards-from); what is
 * accepted holds its promises: every group's shards add up to its split dimension and no
 * world rank is planned twice in a config. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
    }
    tpb_shardplan_free(&p);
    return 0;
}
