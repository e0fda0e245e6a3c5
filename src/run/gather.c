/* gather.c - the timelines to rank 0 in parts: summaries reduced, records gathered, the
 * picked groups' marks gathered (run/gather.h). */
#include "run/gather.h"

#include <stdlib.h>
#include <string.h>

#include "run/agree.h"
#include "run/wire.h"

/* The index of the first of picks[n] (ascending) not below g. */
static int lower_bound(const int *picks, int n, int g)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (picks[mid] < g)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void tpb_gather_counts(const int *have, int size, const int *picks, int npick, int *rec_counts,
                       int *rec_displs, int *mark_counts, int *mark_displs)
{
    for (int r = 0; r < size; r++) {
        int n = have[2 * r], first = have[2 * r + 1];
        rec_counts[r] = n;
        rec_displs[r] = n ? first : 0;
        if (!mark_counts)
            continue;
        int a = 0, b = 0;
        if (n) { /* [first, first + n - 1]: first + n may pass INT_MAX */
            a = lower_bound(picks, npick, first);
            b = lower_bound(picks, npick, first + (n - 1));
            b += b < npick && picks[b] == first + (n - 1);
        }
        mark_counts[r] = b - a;
        mark_displs[r] = b > a ? a : 0;
    }
}

static void merge_op(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    tpb_iter_sum_merge(inout, in, *len);
}

/* The datatypes: one iteration's summary, one group's record, one group's marks. */
typedef struct {
    MPI_Datatype sum, rec, mark, row, grp;
    MPI_Op op;
} types_t;

static void types_free(types_t *t)
{
    MPI_Datatype *all[] = {&t->sum, &t->rec, &t->mark, &t->row, &t->grp};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        if (*all[i] != MPI_DATATYPE_NULL)
            MPI_Type_free(all[i]);
    if (t->op != MPI_OP_NULL)
        MPI_Op_free(&t->op);
}

static tpb_status_t types_make(const tpb_gather_spec_t *sp, types_t *t)
{
    *t = (types_t){MPI_DATATYPE_NULL, MPI_DATATYPE_NULL, MPI_DATATYPE_NULL,
                   MPI_DATATYPE_NULL, MPI_DATATYPE_NULL, MPI_OP_NULL};
    size_t bytes = tpb_part_record_bytes(sp->tp, sp->nb);
    if (bytes > (size_t)2147483647)
        return tpb_err_set(TPB_ERR_INVALID, "a TP group's record of %zu bytes is too large", bytes);
    TPB_CHECK_RET(tpb_wire_type(TPB_WIRE_MARK, &t->mark));
    TPB_MPI_RET(MPI_Type_contiguous(TPB_ITER_SUM_DOUBLES, MPI_DOUBLE, &t->sum), "summary type");
    TPB_MPI_RET(MPI_Type_contiguous((int)bytes, MPI_BYTE, &t->rec), "record type");
    TPB_MPI_RET(MPI_Type_contiguous(sp->iters, t->mark, &t->row), "marks type");
    TPB_MPI_RET(MPI_Type_contiguous(sp->tp, t->row, &t->grp), "group marks type");
    MPI_Datatype *commit[] = {&t->sum, &t->rec, &t->grp};
    for (int i = 0; i < 3; i++)
        TPB_MPI_RET(MPI_Type_commit(commit[i]), "gather types");
    TPB_MPI_RET(MPI_Op_create(merge_op, 1, &t->op), "the summaries' merge");
    return TPB_OK;
}

void tpb_gathered_free(tpb_gathered_t *g)
{
    free(g->ranks);
    free(g->steps);
    free(g->slow);
    free(g->dev);
    free(g->groups);
    free(g->marks);
    memset(g, 0, sizeof(*g));
}

void tpb_gathered_into(const tpb_gathered_t *g, tpb_result_t *res)
{
    res->analysed = 1;
    res->ranks = g->ranks;
    res->stats = g->cfg;
    res->whatif = g->whatif;
    res->steps = g->steps;
    res->slow = g->slow;
    res->slow_dev = g->dev;
    res->nslow = g->slow ? g->nb * (res->world / res->tp) : 0;
    res->kept_groups = g->groups;
    res->nkept_groups = g->ngroups;
}

/* Rank 0's buffers (size: the communicator's). */
typedef struct {
    int *have, *counts; /* [2 size], [4 size] */
    void *rec;          /* every group's record */
    tpb_iter_sum_t *sums;
    double *scratch; /* [4 iters] */
} root_t;

static tpb_status_t root_alloc(const tpb_gather_spec_t *sp, int size, root_t *r,
                               tpb_gathered_t *out)
{
    int groups = sp->world / sp->tp, nb = sp->nb;
    int max = sp->max_groups < 1 ? 1 : sp->max_groups > groups ? groups : sp->max_groups;
    out->nb = nb;
    r->have = malloc(2 * (size_t)size * sizeof(int));
    r->counts = malloc(4 * (size_t)size * sizeof(int));
    r->rec = malloc((size_t)groups * tpb_part_record_bytes(sp->tp, nb));
    r->sums = malloc((size_t)sp->iters * sizeof(*r->sums));
    r->scratch = malloc(4 * (size_t)sp->iters * sizeof(double));
    out->ranks = malloc((size_t)sp->world * sizeof(*out->ranks));
    out->steps = malloc((size_t)sp->iters * sizeof(double));
    out->groups = malloc((size_t)max * sizeof(int));
    out->marks = malloc((size_t)max * sp->tp * sp->iters * sizeof(tpb_mark_t));
    if (nb > 0) {
        out->slow = malloc((size_t)nb * groups * sizeof(*out->slow));
        out->dev = malloc((size_t)nb * sp->world * sizeof(double));
    }
    if (!r->have || !r->counts || !r->rec || !r->sums || !r->scratch || !out->ranks ||
        !out->steps || !out->groups || !out->marks || (nb > 0 && (!out->slow || !out->dev)))
        return tpb_err_set(TPB_ERR_NOMEM, "out of memory for the timelines of %d ranks", sp->world);
    return TPB_OK;
}

/* This rank's picked groups' marks, packed in buf (allocated), and how many. */
static tpb_status_t pack_picked(const tpb_gather_spec_t *sp, const int *picks, int npick,
                                int nlocal, int first, tpb_group_marks_fn marks, void *ctx,
                                tpb_mark_t **buf, int *k)
{
    size_t per = (size_t)sp->tp * sp->iters;
    *k = 0;
    *buf = NULL;
    for (int j = 0; j < npick; j++)
        *k += picks[j] >= first && picks[j] < first + nlocal;
    if (!*k)
        return TPB_OK;
    if (!(*buf = malloc((size_t)*k * per * sizeof(tpb_mark_t))))
        return tpb_err_set(TPB_ERR_NOMEM, "out of memory for %d groups' marks", *k);
    for (int j = 0, n = 0; j < npick; j++)
        if (picks[j] >= first && picks[j] < first + nlocal)
            memcpy(*buf + (size_t)n++ * per, marks(ctx, picks[j] - first),
                   per * sizeof(tpb_mark_t));
    return TPB_OK;
}

/* Rank 0: the analysis from the merged summaries and the records, and the groups picked. */
static void finish(const tpb_gather_spec_t *sp, root_t *r, tpb_gathered_t *out)
{
    tpb_timeline_finish(r->sums, r->rec, sp->world, sp->tp, sp->iters, sp->nb, out->ranks,
                        out->slow, out->dev, out->steps, r->scratch, &out->cfg);
    out->ngroups = tpb_timeline_pick_groups(r->sums, sp->iters, sp->world / sp->tp, sp->tp,
                                            &out->cfg, sp->max_groups, out->groups);
}

/* Rank 0: the what-if replays, the straggler's with its group's marks (always picked). */
static tpb_status_t replay(const tpb_gather_spec_t *sp, root_t *r, tpb_gathered_t *out)
{
    const tpb_mark_t *gm = NULL;
    int s = out->cfg.straggler_rank;
    for (int j = 0; s >= 0 && j < out->ngroups; j++)
        if (out->groups[j] == s / sp->tp)
            gm = out->marks + (size_t)j * sp->tp * sp->iters;
    return tpb_whatif_from_parts(r->sums, sp->iters, sp->tp, gm, gm ? s : -1, out->cfg.step_med,
                                 &out->whatif);
}

static tpb_status_t exchange(MPI_Comm comm, const tpb_gather_spec_t *sp, int nlocal, int first,
                             const void *records, const tpb_iter_sum_t *sums,
                             tpb_group_marks_fn marks, void *ctx, root_t *r, tpb_gathered_t *out,
                             types_t *t)
{
    int rank, size, mine[2] = {nlocal, first}, npick = 0, k = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int *rc = r->counts, *rd = rc ? rc + size : NULL, *mc = rc ? rc + 2 * size : NULL;
    int *md = rc ? rc + 3 * size : NULL;
    TPB_MPI_RET(MPI_Reduce(sums, r->sums, sp->iters, t->sum, t->op, 0, comm), "summaries");
    TPB_MPI_RET(MPI_Gather(mine, 2, MPI_INT, r->have, 2, MPI_INT, 0, comm), "groups held");
    if (rank == 0)
        tpb_gather_counts(r->have, size, NULL, 0, rc, rd, NULL, NULL);
    TPB_MPI_RET(MPI_Gatherv(records, nlocal, t->rec, r->rec, rc, rd, t->rec, 0, comm),
                "group records");
    if (rank == 0) {
        finish(sp, r, out);
        npick = out->ngroups;
    }
    TPB_MPI_RET(MPI_Bcast(&npick, 1, MPI_INT, 0, comm), "picked groups");
    int *picks = rank == 0 ? out->groups : malloc((size_t)(npick > 0 ? npick : 1) * sizeof(int));
    tpb_mark_t *buf = NULL;
    tpb_status_t st = picks ? TPB_OK : tpb_err_set(TPB_ERR_NOMEM, "out of memory");
    if (st == TPB_OK && MPI_Bcast(picks, npick, MPI_INT, 0, comm) != MPI_SUCCESS)
        st = tpb_err_call(TPB_ERR_MPI, "MPI_Bcast", "picked groups", __FILE__, __LINE__);
    if (st == TPB_OK)
        st = pack_picked(sp, picks, npick, nlocal, first, marks, ctx, &buf, &k);
    st = tpb_agree(comm, st);
    if (st == TPB_OK && rank == 0)
        tpb_gather_counts(r->have, size, picks, npick, rc, rd, mc, md);
    if (st == TPB_OK &&
        MPI_Gatherv(buf, k, t->grp, out->marks, mc, md, t->grp, 0, comm) != MPI_SUCCESS)
        st = tpb_err_call(TPB_ERR_MPI, "MPI_Gatherv", "picked timelines", __FILE__, __LINE__);
    if (rank != 0)
        free(picks);
    free(buf);
    if (st == TPB_OK && rank == 0)
        st = replay(sp, r, out);
    return st;
}

tpb_status_t tpb_gather_parts(MPI_Comm comm, const tpb_gather_spec_t *spec, int nlocal,
                              int first_group, const void *records, const tpb_iter_sum_t *sums,
                              tpb_group_marks_fn marks, void *ctx, tpb_gathered_t *out)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    root_t r = {NULL, NULL, NULL, NULL, NULL};
    types_t t;
    tpb_status_t st = types_make(spec, &t);
    if (rank == 0) {
        memset(out, 0, sizeof(*out));
        if (st == TPB_OK)
            st = root_alloc(spec, size, &r, out);
    }
    st = tpb_agree(comm, st);
    if (st == TPB_OK)
        st = exchange(comm, spec, nlocal, first_group, records, sums, marks, ctx, &r, out, &t);
    types_free(&t);
    free(r.have);
    free(r.counts);
    free(r.rec);
    free(r.sums);
    free(r.scratch);
    if (st != TPB_OK && rank == 0)
        tpb_gathered_free(out);
    return st;
}
