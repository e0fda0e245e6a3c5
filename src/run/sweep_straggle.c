/*
 * sweep_straggle.c - --budget: whether a set's persistent straggler is still open after a
 * look. Every rank has its rate in every block of the set's configs so far (a block: an
 * interleaved round, as the record cuts them: sweep_measure.c); each TP group shares its
 * members' rates and finds its slowest in every block (base/detect.h), rank 0 counts per
 * rank how often it was the slowest, and the rank most often slowest sends its deficits
 * and log rates. Rank 0 then tests it as the record will (tpb_detect_persistent_of_at),
 * held to the share of 1 % the look may spend (base/sequential.h): look 1 + the extensions
 * at this TP degree so far. The set is open while the test names no one and its blocks
 * could not have named a 10 % straggler (TPB_DETECT_BUDGET_TARGET), and the configs recorded
 * at this degree before it leave it open too (tested at the same share).
 */
#include <math.h>
#include <stdlib.h>

#include "base/detect.h"
#include "base/sequential.h"
#include "run/agree.h"
#include "run/sweep_state.h"

/* This rank's view of its group's blocks: how often it was the slowest, the blocks that
 * named one, its deficits where it was (d, NaN past them) and its log rate against the
 * others' in every block (x, NaN: unknown): rates[tp][nb] of the group's members. */
static void group_blocks(const double *rates, int tp, int gr, int nb, int *count, int *known,
                         double *d, double *x)
{
    double *r = malloc((size_t)nb * (size_t)tp * sizeof(double)),
           *dev = malloc((size_t)nb * (size_t)tp * sizeof(double));
    tpb_slow_t *out = malloc((size_t)nb * sizeof(*out));
    *count = *known = 0;
    for (int b = 0; b < nb; b++)
        d[b] = x[b] = NAN;
    if (r && dev && out) {
        for (int b = 0; b < nb; b++) /* block-major, as tpb_detect_rate_blocks reads them */
            for (int q = 0; q < tp; q++)
                r[(size_t)b * tp + q] = rates[(size_t)q * nb + b];
        tpb_detect_rate_blocks(r, tp, tp, nb, out, dev);
        for (int b = 0; b < nb; b++) {
            *known += out[b].rank >= 0;
            if (out[b].rank == gr)
                d[(*count)++] = out[b].deficit;
            x[b] = dev[(size_t)b * tp + gr];
        }
    }
    free(r);
    free(dev);
    free(out);
}

/* Rank 0: the position most often the slowest (the first on a tie), -1 for none. */
static int most_often(const int *count, int world)
{
    int best = -1;
    for (int r = 0; r < world; r++)
        if (count[r] > 0 && (best < 0 || count[r] > count[best]))
            best = r;
    return best;
}

/* Rank 0: the test of the most often slowest position `best` from its deficits and log rates
 * (d and x of nb each, NaN-padded), at look's share of the straggler test; *open: whether the
 * set's blocks leave it open and the configs recorded at tp before it do too (what they
 * decide needs no more of this set). */
static tpb_persistent_t test_best(tpb_sweep_t *s, int tp, int look, int best, int count, int known,
                                  double *d, double *x, int nb, int nc, int *open)
{
    int k = 0, m = 0;
    for (int i = 0; i < nc; i++) /* each config's around its own level, as the record does */
        tpb_detect_center(x + i * (nb / nc), nb / nc);
    for (int b = 0; b < nb; b++) {
        if (isfinite(d[b]) && k < count)
            d[k++] = d[b];
        if (isfinite(x[b]))
            x[m++] = x[b];
    }
    int j = 1 + (s->rec ? tpb_record_extensions_at(&s->rec->rec, tp) : 0) + (look - 1);
    double alpha = tpb_seq_spend(TPB_DETECT_ALPHA, j);
    tpb_persistent_t p = tpb_detect_persistent_of_at(best, count, known, d, k, x, m, tp, alpha);
    p.rank = best < 0 ? -1 : s->pos.rank_of ? s->pos.rank_of[best] : best; /* the world rank */
    *open = tpb_detect_open(&p);
    if (*open && s->rec) {
        tpb_persistent_t before = tpb_record_persistent_at(&s->rec->rec, tp, alpha);
        *open = before.rank < 0 || tpb_detect_open(&before);
    }
    return p;
}

tpb_status_t tpb_sweep_straggler_look(tpb_sweep_t *s, const tpb_config_run_t *c, int nc,
                                      const double *rate, int nb, int look, int *open,
                                      tpb_persistent_t *p)
{
    const tpb_config_plan_t *pl = c[0].plan;
    int tp = pl->tp, gr, world, me;
    *open = 0;
    *p = (tpb_persistent_t){.rank = -1, .deficit = NAN, .detectable = NAN};
    if (tp < 2 || pl->desc.comm_only || nb < 1)
        return TPB_OK; /* no blocks to name a straggler in (the same on every rank) */
    MPI_Comm_size(s->pos.world, &world);
    MPI_Comm_rank(s->pos.world, &me);
    MPI_Comm_rank(s->pos.group, &gr); /* the order of the group's Allgather */
    double *rates = malloc((size_t)tp * (size_t)nb * sizeof(double)),
           *dx = malloc(2 * (size_t)nb * sizeof(double));
    int *count = me == 0 ? malloc((size_t)world * sizeof(int)) : NULL, mine[2] = {0, 0}, known = 0;
    tpb_status_t st = rates && dx && (me != 0 || count)
                          ? TPB_OK
                          : tpb_err_set(TPB_ERR_NOMEM, "no memory for --budget's blocks");
    st = tpb_agree(s->pos.world, st);
    if (st == TPB_OK &&
        MPI_Allgather(rate, nb, MPI_DOUBLE, rates, nb, MPI_DOUBLE, s->pos.group) != MPI_SUCCESS)
        st = tpb_err_call(TPB_ERR_MPI, "MPI_Allgather", "--budget's blocks", __FILE__, __LINE__);
    st = tpb_agree(s->pos.world, st);
    if (st == TPB_OK) {
        group_blocks(rates, tp, gr, nb, &mine[0], &mine[1], dx, dx + nb);
        int group_known = gr == 0 ? mine[1] : 0; /* a group's blocks counted once */
        int best = -1;
        if (MPI_Gather(&mine[0], 1, MPI_INT, count, 1, MPI_INT, 0, s->pos.world) != MPI_SUCCESS ||
            MPI_Reduce(&group_known, &known, 1, MPI_INT, MPI_SUM, 0, s->pos.world) != MPI_SUCCESS)
            st = tpb_err_call(TPB_ERR_MPI, "MPI_Gather", "--budget's blocks", __FILE__, __LINE__);
        if (st == TPB_OK && me == 0)
            best = most_often(count, world);
        if (st == TPB_OK && MPI_Bcast(&best, 1, MPI_INT, 0, s->pos.world) != MPI_SUCCESS)
            st = tpb_err_call(TPB_ERR_MPI, "MPI_Bcast", "--budget's blocks", __FILE__, __LINE__);
        if (st == TPB_OK && best > 0 && me == best &&
            MPI_Send(dx, 2 * nb, MPI_DOUBLE, 0, 0, s->pos.world) != MPI_SUCCESS)
            st = tpb_err_call(TPB_ERR_MPI, "MPI_Send", "--budget's blocks", __FILE__, __LINE__);
        if (st == TPB_OK && best > 0 && me == 0 &&
            MPI_Recv(dx, 2 * nb, MPI_DOUBLE, best, 0, s->pos.world, MPI_STATUS_IGNORE) !=
                MPI_SUCCESS)
            st = tpb_err_call(TPB_ERR_MPI, "MPI_Recv", "--budget's blocks", __FILE__, __LINE__);
        if (st == TPB_OK && me == 0) {
            *p = test_best(s, tp, look, best, best >= 0 ? count[best] : 0, known, dx, dx + nb, nb,
                           nc, open);
        }
    }
    free(rates);
    free(dx);
    free(count);
    return tpb_agree(s->pos.world, st);
}
