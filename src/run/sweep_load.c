/* sweep_load.c - the CPU load of the run's machines beside the run (sweep.h): other processes'
 * share of each machine's CPUs between the sweep's start and its end. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/cpuload.h"
#include "run/agree.h"
#include "run/sweep_state.h"

static tpb_load_mark_t mark_now(void)
{
    tpb_load_mark_t m = {.self_s = tpb_cpuload_self(), .at_s = tpb_clock_now_us(NULL) * 1e-6};
    if (tpb_cpuload_read(&m.busy_s, &m.ncpu, &m.machine) != 0)
        m.ncpu = 0;
    return m;
}

tpb_status_t tpb_sweep_load_mark(tpb_sweep_t *s)
{
    s->acct.load0 = mark_now();
    return TPB_OK;
}

/* What rank 0 gathers of every rank at the end. */
typedef struct {
    double own_s, busy0, busy1, wall_s;
    int ncpu, rank;
    uint64_t machine;
} load_t;

static int by_machine(const void *a, const void *b)
{
    const load_t *x = a, *y = b;
    return x->machine != y->machine ? (x->machine < y->machine ? -1 : 1) : x->rank - y->rank;
}

/* Rank 0: each machine's share (its first rank's busy times, every rank's own CPU), the
 * largest into the record with the host of that machine's first rank. */
static void worst_machine(tpb_sweep_t *s, load_t *all, int n)
{
    tpb_record_t *rec = &s->rec->rec;
    qsort(all, (size_t)n, sizeof(*all), by_machine);
    for (int i = 0, j; i < n; i = j) {
        double own = 0.0;
        for (j = i; j < n && all[j].machine == all[i].machine; j++)
            own += all[j].own_s;
        if (all[i].ncpu < 1)
            continue;
        double share =
            tpb_cpuload_others(all[i].busy0, all[i].busy1, own, all[i].wall_s, all[i].ncpu);
        if (isfinite(share) && !(share <= rec->cpu_others)) {
            rec->cpu_others = share;
            snprintf(rec->cpu_others_host, sizeof(rec->cpu_others_host), "%s",
                     s->ctx.topo->hosts[all[i].rank]);
        }
    }
}

tpb_status_t tpb_sweep_load_end(tpb_sweep_t *s)
{
    tpb_load_mark_t now = mark_now(), *m0 = &s->acct.load0;
    int me, n;
    MPI_Comm_rank(s->ctx.world, &me);
    MPI_Comm_size(s->ctx.world, &n);
    load_t mine = {.own_s = now.self_s - m0->self_s,
                   .busy0 = m0->busy_s,
                   .busy1 = now.busy_s,
                   .wall_s = now.at_s - m0->at_s,
                   .ncpu = m0->ncpu && now.ncpu ? now.ncpu : 0,
                   .rank = me,
                   .machine = now.machine};
    load_t *all = s->rec ? malloc((size_t)n * sizeof(*all)) : NULL;
    tpb_status_t st = s->rec && !all ? tpb_err_set(TPB_ERR_NOMEM, "out of memory for the "
                                                                  "ranks' CPU load")
                                     : TPB_OK;
    TPB_CHECK_RET(tpb_agree(s->ctx.world, st)); /* rank 0 of the world holds the record */
    /* a fixed-size record of one architecture's numbers, as the device facts */
    int rc =
        MPI_Gather(&mine, sizeof(mine), MPI_BYTE, all, sizeof(mine), MPI_BYTE, 0, s->ctx.world);
    if (rc == MPI_SUCCESS && all)
        worst_machine(s, all, n);
    free(all);
    return rc == MPI_SUCCESS ? TPB_OK : tpb_err_set(TPB_ERR_MPI, "gathering the CPU load");
}
