/* plancheck.c - read a shard plan as --shards-from does and check it against a run's
 * granularity and dtype (tpb_shardplan_load, tpb_shardplan_check): prints "ok" or the one
 * line tpbal would print. For tests/python/test_model.py to hold tpbal-plan's plans
 * against the C reader. Not a test itself. Usage: plancheck FILE GRANULARITY DTYPE */
#include <stdio.h>
#include <stdlib.h>

#include "base/dtype.h"
#include "base/infile.h"
#include "cli/shardplan.h"

int main(int argc, char **argv)
{
    tpb_shardplan_t p;
    tpb_dtype_t dt;
    if (argc != 4 || tpb_dtype_parse(argv[3], &dt) != TPB_OK) {
        fputs("usage: plancheck FILE GRANULARITY DTYPE\n", stderr);
        return 2;
    }
    tpb_status_t st = tpb_shardplan_load(argv[1], TPB_INFILE_MAX, &p);
    if (st == TPB_OK)
        st = tpb_shardplan_check(&p, atol(argv[2]), dt, argv[1]);
    puts(st == TPB_OK ? "ok" : tpb_err_msg());
    tpb_shardplan_free(&p);
    return st == TPB_OK ? 0 : 1;
}
