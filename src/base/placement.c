/* placement.c - the order of ranks that TP groups are cut from. */
#include "base/placement.h"

void tpb_placement_order(tpb_placement_t p, const int *host_index, int n, int *rank_of)
{
    if (p != TPB_PLACE_SPREAD) {
        for (int r = 0; r < n; r++)
            rank_of[r] = r;
        return;
    }
    /* spread: round k takes the k-th rank of every node, nodes in first-seen order */
    int pos = 0;
    for (int k = 0; pos < n; k++) {
        for (int h = 0; h < n && pos < n; h++) {
            int seen = 0;
            for (int r = 0; r < n; r++) {
                if (host_index[r] != h)
                    continue;
                if (seen++ == k) {
                    rank_of[pos++] = r;
                    break;
                }
            }
        }
    }
}

int tpb_placement_group_nodes(const int *host_of_pos, int t, int g)
{
    int n = 0;
    for (int i = g * t; i < (g + 1) * t; i++) {
        int dup = 0;
        for (int j = g * t; j < i && !dup; j++)
            dup = host_of_pos[j] == host_of_pos[i];
        n += !dup;
    }
    return n;
}
