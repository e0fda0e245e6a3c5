/* sweep_gather.c - a config's timelines to rank 0 in parts (--gather parts, run/gather.h):
 * every rank puts its own marks on rank 0's clock, each TP group's first rank analyses the
 * group, and rank 0 gets the summaries, the records and the picked groups' marks. */
#include <math.h>
#include <stdlib.h>

#include "run/agree.h"
#include "run/gather.h"
#include "run/sweep_state.h"
#include "run/wire.h"

int tpb_gather_in_parts(const tpb_measure_t *m, int world, int chunks)
{
    if (m->gather == TPB_GATHER_FULL || !m->timeline || m->block || chunks > 0)
        return 0;
    return m->gather == TPB_GATHER_PARTS ||
           (double)world * m->iters * sizeof(tpb_mark_t) > TPB_GATHER_AUTO_BYTES;
}

int tpb_sweep_in_parts(const tpb_sweep_t *s, const tpb_config_plan_t *p)
{
    return tpb_gather_in_parts(&s->plans.m, s->pos.topo->size, p->desc.chunks);
}

/* This rank's two clock samples (its start's and its latest), from rank 0 by position. */
static tpb_status_t my_samples(tpb_sweep_t *s, tpb_clock_sample_t mine[2])
{
    int size = s->pos.topo->size, n = (int)(2 * sizeof(tpb_clock_sample_t));
    tpb_clock_sample_t *all = s->rec ? malloc(2 * (size_t)size * sizeof(*all)) : NULL;
    tpb_status_t st = s->rec && !all ? tpb_err_set(TPB_ERR_NOMEM, "out of memory") : TPB_OK;
    for (int r = 0; all && r < size; r++) {
        all[2 * r] = s->rec->sync0[s->pos.rank_of[r]];
        all[2 * r + 1] = s->rec->sync1[s->pos.rank_of[r]];
    }
    st = tpb_agree(s->pos.world, st);
    if (st == TPB_OK &&
        MPI_Scatter(all, n, MPI_BYTE, mine, n, MPI_BYTE, 0, s->pos.world) != MPI_SUCCESS)
        st = tpb_err_call(TPB_ERR_MPI, "MPI_Scatter", "clock samples", __FILE__, __LINE__);
    free(all);
    return st;
}

/* The group's marks, uncertainties and FLOPs on its first rank (g: tp of each there). */
typedef struct {
    tpb_mark_t *marks;
    double *unc, *work;
} group_t;

static const tpb_mark_t *group_marks(void *ctx, int j)
{
    (void)j;
    return ((group_t *)ctx)->marks;
}

static tpb_status_t to_leader(tpb_sweep_t *s, int iters, const tpb_mark_t *own, double unc,
                              double work, group_t *g)
{
    MPI_Datatype mark;
    TPB_CHECK_RET(tpb_wire_type(TPB_WIRE_MARK, &mark));
    int rc = MPI_Gather(own, iters, mark, g->marks, iters, mark, 0, s->pos.group);
    if (rc == MPI_SUCCESS)
        rc = MPI_Gather(&unc, 1, MPI_DOUBLE, g->unc, 1, MPI_DOUBLE, 0, s->pos.group);
    if (rc == MPI_SUCCESS)
        rc = MPI_Gather(&work, 1, MPI_DOUBLE, g->work, 1, MPI_DOUBLE, 0, s->pos.group);
    MPI_Type_free(&mark);
    if (rc != MPI_SUCCESS)
        return tpb_err_call(TPB_ERR_MPI, "MPI_Gather", "a TP group's timelines", __FILE__,
                            __LINE__);
    return TPB_OK;
}

tpb_status_t tpb_sweep_gather_parts(tpb_sweep_t *s, const tpb_config_plan_t *p,
                                    const tpb_config_run_t *c, tpb_gathered_t *out)
{
    int iters = c->iters, tp = p->tp, pos = s->pos.topo->rank, lead = pos % tp == 0;
    int nb = tp > 1 && !p->desc.comm_only ? tpb_detect_nblocks(iters, c->rounds) : 0;
    size_t n = (size_t)iters;
    tpb_clock_sample_t mine[2];
    TPB_CHECK_RET(my_samples(s, mine));
    tpb_mark_t *own = malloc(n * sizeof(*own));
    group_t g = {NULL, NULL, NULL};
    if (lead) {
        g.marks = malloc((size_t)tp * n * sizeof(*g.marks));
        g.unc = malloc(2 * (size_t)tp * sizeof(double));
        g.work = g.unc ? g.unc + tp : NULL;
    }
    void *rec = malloc(tpb_part_record_bytes(tp, nb));
    tpb_iter_sum_t *sums = malloc(n * sizeof(*sums));
    tpb_status_t st = !own || !rec || !sums || (lead && (!g.marks || !g.unc))
                          ? tpb_err_set(TPB_ERR_NOMEM, "out of memory for the timelines")
                          : TPB_OK;
    st = tpb_agree(s->pos.world, st);
    for (size_t i = 0; st == TPB_OK && i < n; i++) /* onto rank 0's clock */
        own[i] = (tpb_mark_t){.c0 = tpb_clock_correct(&mine[0], &mine[1], c->raw[i].c0),
                              .c1 = tpb_clock_correct(&mine[0], &mine[1], c->raw[i].c1),
                              .x1 = tpb_clock_correct(&mine[0], &mine[1], c->raw[i].x1)};
    if (st == TPB_OK)
        st = tpb_agree(
            s->pos.world,
            to_leader(s, iters, own, 0.5 * fmax(mine[0].rtt_us, mine[1].rtt_us), c->info.flop, &g));
    if (st == TPB_OK) {
        tpb_iter_sum_init(sums, iters);
        if (lead)
            st = tpb_timeline_part(g.marks, 1, tp, iters, pos / tp, g.unc, g.work, nb, rec, sums);
        st = tpb_agree(s->pos.world, st);
    }
    long want = s->plans.m.trace_ranks < 0 ? s->pos.topo->size : s->plans.m.trace_ranks;
    int max = (int)((want + tp - 1) / tp); /* whole groups */
    tpb_gather_spec_t spec = {s->pos.topo->size, tp, iters, nb, max};
    if (st == TPB_OK)
        st = tpb_agree(s->pos.world, tpb_gather_parts(s->pos.world, &spec, lead, pos / tp, rec,
                                                      sums, group_marks, &g, out));
    free(own);
    free(g.marks);
    free(g.unc);
    free(rec);
    free(sums);
    return st;
}
