/* topo.c - where the ranks are: host indices (pure). */
#include "base/topo.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *name;
    int rank;
} host_ref_t;

static int by_name(const void *a, const void *b)
{
    const host_ref_t *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->rank > y->rank) - (x->rank < y->rank);
}

/* Without memory for the sort: each rank against the ranks before it (quadratic). */
static int index_slowly(char (*hosts)[TPB_HOST_LEN], int n, int *index)
{
    int nhosts = 0;
    for (int r = 0; r < n; r++) {
        index[r] = nhosts;
        for (int q = 0; q < r; q++) {
            if (strcmp(hosts[q], hosts[r]) == 0) {
                index[r] = index[q];
                break;
            }
        }
        if (index[r] == nhosts)
            nhosts++;
    }
    return nhosts;
}

int tpb_topo_index_hosts(char (*hosts)[TPB_HOST_LEN], int n, int *index)
{
    host_ref_t *v = n > 0 ? malloc((size_t)n * sizeof(*v)) : NULL;
    if (!v)
        return index_slowly(hosts, n, index);
    for (int r = 0; r < n; r++)
        v[r] = (host_ref_t){hosts[r], r};
    qsort(v, (size_t)n, sizeof(*v), by_name); /* n log n: 131,072 ranks in milliseconds */
    for (int i = 0, first = 0; i < n; i++) {  /* each rank: its host's first rank */
        if (i == 0 || strcmp(v[i].name, v[i - 1].name) != 0)
            first = v[i].rank;
        index[v[i].rank] = first;
    }
    free(v);
    int nhosts = 0; /* numbered in first-seen order: a first rank's entry is its own rank */
    for (int r = 0; r < n; r++)
        index[r] = index[r] == r ? nhosts++ : index[index[r]];
    return nhosts;
}

void tpb_topo_free(tpb_topo_t *t)
{
    free(t->hosts);
    free(t->host_index);
    t->hosts = NULL;
    t->host_index = NULL;
}
