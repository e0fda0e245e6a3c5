/* hostlist.c - print the names a Slurm hostlist expands to, one a line (tpb_hostlist_expand),
 * or "malformed": for tests/mpi/slurm.sh to hold against scontrol show hostnames. Not a
 * test itself. */
#include <stdio.h>

#include "base/slurm.h"

int main(int argc, char **argv)
{
    static char names[TPB_SLURM_MAX_NODES][TPB_SLURM_NAME_LEN];
    int n = argc == 2 ? tpb_hostlist_expand(argv[1], names, TPB_SLURM_MAX_NODES) : -1;
    if (n < 0) {
        puts("malformed");
        return 1;
    }
    for (int i = 0; i < n; i++)
        puts(names[i]);
    return 0;
}
