/*
 * fleet_budget.c - --budget with --fleet: after each look of every rank's GEMM rounds, rank 0
 * scores them at the look's level (look k at 1 - 0.05 / (k (k + 1)), base/sequential.h) and
 * measures every rank's GEMM again while a node's slowest rank is still suspect (its score
 * below --fleet-threshold, its interval reaching above) and the budget allows. A node is
 * excluded only on the last look's interval, so by the union bound a node at the threshold
 * or above is excluded with a chance of 5 % at most whichever look the rounds stopped at
 * (bench/fleetsim measures it: doc/METRICS.md, "Fleets").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/sequential.h"
#include "run/agree.h"
#include "run/fleet.h"

/* Rank 0: the nodes still suspect in every rank's cohort and rates (all[world x (1 +
 * rounds)]) at look's level; *first their first slowest rank and s its score. */
static int suspects(const tpb_topo_t *topo, const double *all, int rounds, int look, double thr,
                    int *first, tpb_fleet_score_t *s)
{
    int w = topo->size, n = 1 + rounds, open = -1;
    double *v = malloc((size_t)w * (size_t)rounds * sizeof(double));
    int *cohort = malloc((size_t)w * sizeof(int));
    tpb_fleet_score_t *sc = malloc((size_t)w * sizeof(*sc));
    if (v && cohort && sc) {
        for (int r = 0; r < w; r++) {
            cohort[r] = (int)all[(size_t)r * n];
            memcpy(v + (size_t)r * rounds, all + (size_t)r * n + 1,
                   (size_t)rounds * sizeof(double));
        }
        tpb_fleet_scores_at(v, cohort, w, rounds, tpb_seq_conf(0.05, look), sc);
        open = tpb_fleet_gemm_open(sc, topo->host_index, w, topo->nhosts, thr, first);
        if (*first >= 0)
            *s = sc[*first];
    }
    free(v);
    free(cohort);
    free(sc);
    return open;
}

tpb_status_t tpb_fleet_budget_more(MPI_Comm world, const tpb_topo_t *topo,
                                   const tpb_fleet_plan_t *fp, const double *rate, int rounds,
                                   int cohort, int look, double look_s, tpb_fleet_budget_t *b,
                                   int *more)
{
    int n = 1 + rounds, decide[2] = {0, 0}; /* more, and why not: 0 decided, 1 budget, 2 looks */
    double mine[1 + rounds];
    mine[0] = cohort;
    memcpy(mine + 1, rate, (size_t)rounds * sizeof(double));
    double *all = topo->rank == 0 ? malloc((size_t)topo->size * (size_t)n * sizeof(double)) : NULL;
    tpb_status_t st = topo->rank == 0 && !all
                          ? tpb_err_set(TPB_ERR_NOMEM, "--budget: no memory for the fleet's rates")
                          : TPB_OK;
    TPB_CHECK_RET(tpb_agree(world, st));
    TPB_MPI_RET(MPI_Gather(mine, n, MPI_DOUBLE, all, n, MPI_DOUBLE, 0, world), "--budget");
    if (topo->rank == 0) {
        int first = -1;
        tpb_fleet_score_t s = {0};
        int open = suspects(topo, all, rounds, look, fp->threshold, &first, &s);
        st = open < 0 ? tpb_err_set(TPB_ERR_NOMEM, "--budget: no memory for the fleet's scores")
                      : TPB_OK;
        decide[1] = open <= 0                           ? 0
                    : look >= TPB_SEQ_LOOKS             ? 2
                    : b->budget_s - b->spent_s < look_s ? 1
                                                        : 0;
        decide[0] = open > 0 && decide[1] == 0;
        b->open = open > 0 ? open : 0;
        b->why = decide[1];
        if (open > 0 && !fp->quiet)
            fprintf(stderr,
                    "tpbal: budget: fleet: %d node%s suspect for its GEMM after look %d (rank %d "
                    "on %s: %.2f [%.2f, %.2f] at %.4g %%); %s\n",
                    open, open == 1 ? "" : "s", look, first, topo->hosts[first], s.score, s.lo,
                    s.hi, 100.0 * tpb_seq_conf(0.05, look),
                    decide[0]        ? "measuring every rank's GEMM again"
                    : decide[1] == 2 ? "stays suspect: the most looks"
                                     : "stays suspect: the budget is spent");
    }
    free(all);
    TPB_CHECK_RET(tpb_agree(world, st));
    TPB_MPI_RET(MPI_Bcast(decide, 2, MPI_INT, 0, world), "--budget's decision");
    *more = decide[0];
    return TPB_OK;
}
