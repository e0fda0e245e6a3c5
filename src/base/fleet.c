/* fleet.c - a fleet's scores and verdicts (base/fleet.h). Pure. */
#include "base/fleet.h"

#include <math.h>
#include <stdlib.h>

#include "base/interval.h"
#include "base/stats.h"

const char *tpb_fleet_verdict_name(tpb_fleet_verdict_t v)
{
    return v == TPB_FLEET_EXCLUDE ? "exclude" : v == TPB_FLEET_SUSPECT ? "suspect" : "ok";
}

double tpb_fleet_median_of(const double *v, int n)
{
    double *w = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    int k = 0;
    for (int i = 0; w && i < n; i++)
        if (isfinite(v[i]) && v[i] > 0.0)
            w[k++] = v[i];
    double m = k ? tpb_stats_median(w, (size_t)k) : NAN;
    free(w);
    return m;
}

void tpb_fleet_scores(const double *v, const int *cohort, int n, int rounds, tpb_fleet_score_t *out)
{
    tpb_fleet_scores_at(v, cohort, n, rounds, 0.95, out);
}

void tpb_fleet_scores_at(const double *v, const int *cohort, int n, int rounds, double conf,
                         tpb_fleet_score_t *out)
{
    int ncoh = 1;
    for (int i = 0; cohort && i < n; i++)
        ncoh = cohort[i] >= ncoh ? cohort[i] + 1 : ncoh;
    double *col = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    double *ref = malloc((size_t)ncoh * (size_t)(rounds > 0 ? rounds : 1) * sizeof(double));
    double *inv = malloc((size_t)(rounds > 0 ? rounds : 1) * sizeof(double));
    for (int i = 0; i < n; i++)
        out[i] = (tpb_fleet_score_t){NAN, NAN, NAN};
    if (!col || !ref || !inv)
        goto out;
    for (int c = 0; c < ncoh; c++) /* each cohort's median in round j, once */
        for (int j = 0; j < rounds; j++) {
            int k = 0;
            for (int q = 0; q < n; q++)
                if (!cohort || cohort[q] == c)
                    col[k++] = v[(size_t)q * rounds + j];
            ref[(size_t)c * rounds + j] = tpb_fleet_median_of(col, k);
        }
    for (int i = 0; i < n; i++) {
        int k = 0;
        for (int j = 0; j < rounds; j++) {
            double x = v[(size_t)i * rounds + j];
            double r = ref[(size_t)(cohort ? cohort[i] : 0) * rounds + j];
            if (isfinite(x) && x > 0.0 && isfinite(r) && r > 0.0)
                inv[k++] = r / x; /* a time over the cohort's: lower is faster */
        }
        if (!k)
            continue;
        double s = 1.0 / tpb_stats_median(inv, (size_t)k),
               h = tpb_interval_median_half_at(inv, (size_t)k, conf);
        out[i] = (tpb_fleet_score_t){s, s * exp(-h), s * exp(h)};
    }
out:
    free(col);
    free(ref);
    free(inv);
}

void tpb_fleet_figure(const double *v, int rounds, double *median, double *half)
{
    double inv[rounds > 0 ? rounds : 1];
    int k = 0;
    for (int j = 0; j < rounds; j++)
        if (isfinite(v[j]) && v[j] > 0.0)
            inv[k++] = 1.0 / v[j];
    *median = k ? 1.0 / tpb_stats_median(inv, (size_t)k) : NAN;
    *half = k ? tpb_interval_median_half(inv, (size_t)k) : NAN;
}

tpb_fleet_verdict_t tpb_fleet_judge(tpb_fleet_score_t s, double threshold)
{
    if (!isfinite(s.score) || s.score >= threshold)
        return TPB_FLEET_OK;
    return s.hi < threshold ? TPB_FLEET_EXCLUDE : TPB_FLEET_SUSPECT;
}

void tpb_fleet_slowest(const tpb_fleet_score_t *ranks, const int *node_of, int world, int nnodes,
                       int *slowest)
{
    for (int j = 0; j < nnodes; j++)
        slowest[j] = -1;
    for (int r = 0; r < world; r++) {
        int *s = &slowest[node_of[r]];
        if (*s < 0 || (isfinite(ranks[r].score) &&
                       !(isfinite(ranks[*s].score) && ranks[r].score >= ranks[*s].score)))
            *s = r;
    }
}

int tpb_fleet_gemm_open(const tpb_fleet_score_t *ranks, const int *node_of, int world, int nnodes,
                        double threshold, int *first)
{
    int *slowest = malloc((size_t)(nnodes > 0 ? nnodes : 1) * sizeof(int)), open = 0;
    *first = -1;
    if (!slowest)
        return 0;
    tpb_fleet_slowest(ranks, node_of, world, nnodes, slowest);
    for (int j = 0; j < nnodes; j++)
        if (slowest[j] >= 0 && tpb_fleet_judge(ranks[slowest[j]], threshold) == TPB_FLEET_SUSPECT) {
            if (!open++)
                *first = slowest[j];
        }
    free(slowest);
    return open;
}
