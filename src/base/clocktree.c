/* clocktree.c - clock offsets composed down a binomial tree (clocktree.h). */
#include "base/clocktree.h"

int tpb_clock_tree_round(int c)
{
    int j = 0;
    while (c >> (j + 1))
        j++;
    return j;
}

int tpb_clock_tree_parent(int c)
{
    return c <= 0 ? -1 : c - (1 << tpb_clock_tree_round(c));
}

int tpb_clock_tree_rounds(int size)
{
    int j = 0;
    while (j < 31 && (1 << j) < size)
        j++;
    return j;
}

void tpb_clock_tree_compose(const tpb_clock_pair_t *pairs, int size, double at0_us,
                            tpb_clock_sample_t *out)
{
    if (size < 1)
        return;
    out[0] = (tpb_clock_sample_t){.offset_us = 0.0, .rtt_us = 0.0, .at_us = at0_us};
    for (int c = 1; c < size; c++) { /* a parent's rank is below its child's: done first */
        const tpb_clock_sample_t *p = &out[tpb_clock_tree_parent(c)];
        out[c].offset_us = pairs[c].offset_us + p->offset_us;
        out[c].rtt_us = pairs[c].rtt_us + p->rtt_us;
        out[c].at_us = pairs[c].at_us - p->offset_us;
    }
}
