/* topo.c - where the ranks are: host indices (pure). */
#include "base/topo.h"

#include <stdlib.h>
#include <string.h>

int tpb_topo_index_hosts(char (*hosts)[TPB_HOST_LEN], int n, int *index)
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

void tpb_topo_free(tpb_topo_t *t)
{
    free(t->hosts);
    free(t->host_index);
    t->hosts = NULL;
    t->host_index = NULL;
}
