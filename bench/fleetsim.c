/*
 * bench/fleetsim [RUNS] - --fleet's GEMM verdicts under --budget (run/fleet_budget.c) on
 * constructed rounds (bench/fleetsim_model.h): 8 ranks, one a node, rank 0 at a given speed
 * of the others; how often RUNS runs end with rank 0's node excluded, suspect or ok at
 * --fleet-threshold 0.9, after how many looks of 5 rounds (at most 8), under three rules:
 *   one look   --fleet without --budget: 5 rounds, 95 %
 *   naive      95 % at every look, another look while the node is suspect (peeking)
 *   sequential look k at 1 - 0.05 / (k (k + 1)), as --budget does
 * An exclusion of a rank at 0.9 or faster is false. Results: doc/METRICS.md, "Fleets".
 */
#include <stdio.h>
#include <stdlib.h>

#include "base/fleet.h"
#include "base/sequential.h"
#include "fleetsim_model.h"

#define LOOK 5 /* rounds a look (run/fleet.c's FLEET_ROUNDS) */

typedef struct {
    int count[3]; /* ok, suspect, exclude */
    double looks;
} tally_t;

static tally_t run_rule(const fleetsim_scenario_t *sc, int runs, int rule, double *v, double *w)
{
    enum { N = FLEETSIM_RANKS };
    int node_of[N], last = rule == 0 ? 1 : TPB_SEQ_LOOKS, first;
    for (int q = 0; q < N; q++)
        node_of[q] = q;
    tally_t t = {{0}, 0.0};
    tpb_fleet_score_t s[N];
    for (int r = 0; r < runs; r++) {
        fleetsim_fill(sc, (uint64_t)r, LOOK * TPB_SEQ_LOOKS, LOOK * TPB_SEQ_LOOKS, v);
        int k = 1;
        for (;; k++) {
            int rounds = LOOK * k;
            for (int q = 0; q < N; q++) /* the first `rounds` of every rank */
                for (int j = 0; j < rounds; j++)
                    w[q * rounds + j] = v[q * LOOK * TPB_SEQ_LOOKS + j];
            tpb_fleet_scores_at(w, NULL, N, rounds, rule == 2 ? tpb_seq_conf(0.05, k) : 0.95, s);
            if (k == last || !tpb_fleet_gemm_open(s, node_of, N, N, 0.9, &first))
                break;
        }
        t.count[tpb_fleet_judge(s[0], 0.9)]++;
        t.looks += k;
    }
    t.looks /= runs;
    return t;
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 2000;
    if (runs < 1) {
        fprintf(stderr, "usage: bench/fleetsim [RUNS >= 1]\n");
        return 2;
    }
    const fleetsim_scenario_t sc[] = {
        {"equal, quiet", 1.0, 0.03, 0.3, 0.0, 1.0},
        {"at the threshold, quiet", 0.9, 0.03, 0.3, 0.0, 1.0},
        {"at the threshold, drift+stretches", 0.9, 0.05, 0.5, 0.2, 1.3},
        {"at the threshold, noisy (sd 10 %)", 0.9, 0.10, 0.7, 0.2, 1.5},
        {"0.85, drift+stretches", 0.85, 0.05, 0.5, 0.2, 1.3},
        {"0.8, drift+stretches", 0.8, 0.05, 0.5, 0.2, 1.3},
        {"0.8, noisy", 0.8, 0.10, 0.7, 0.2, 1.5},
    };
    const char *rules[] = {"one look", "naive", "sequential"};
    enum { V = FLEETSIM_RANKS * LOOK * TPB_SEQ_LOOKS };
    double *v = malloc(sizeof(double) * V), *w = malloc(sizeof(double) * V);
    if (!v || !w)
        return 1;
    printf("# fleetsim: %d runs, %d ranks (one a node), up to %d looks of %d rounds, "
           "threshold 0.9\n",
           runs, FLEETSIM_RANKS, TPB_SEQ_LOOKS, LOOK);
    printf("%-36s %-11s %8s %8s %8s %6s\n", "rank 0's speed", "rule", "exclude", "suspect", "ok",
           "looks");
    for (size_t i = 0; i < sizeof(sc) / sizeof(*sc); i++)
        for (int rule = 0; rule < 3; rule++) {
            tally_t t = run_rule(&sc[i], runs, rule, v, w);
            printf("%-36s %-11s %7.1f%% %7.1f%% %7.1f%% %6.2f\n", sc[i].name, rules[rule],
                   100.0 * t.count[TPB_FLEET_EXCLUDE] / runs,
                   100.0 * t.count[TPB_FLEET_SUSPECT] / runs, 100.0 * t.count[TPB_FLEET_OK] / runs,
                   t.looks);
        }
    free(v);
    free(w);
    return 0;
}
