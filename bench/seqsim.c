/*
 * bench/seqsim [RUNS] [LOOKS] - the sequential verdict (base/sequential.h) on constructed
 * series (bench/seqsim_model.h): for equal configs and for b faster or slower, on a quiet
 * and on a drifting machine with slow stretches, how often RUNS runs of up to LOOKS looks
 * (40 iterations each: a run and its extensions under --budget) end better, worse, draw or
 * inconclusive, and after how many looks on average, under three rules:
 *   one look   today's fixed run: look 1 at 95 %, no extension
 *   naive      95 % at every look, stopping at the first decision (peeking)
 *   sequential look k at 1 - alpha / (k (k + 1)) (alpha 0.05), stopping likewise
 * A false decision on equal configs is better or worse; on unequal ones, anything but the
 * right direction that stopped. Results: doc/METRICS.md, "Sequential verdicts".
 */
#include <stdio.h>
#include <stdlib.h>

#include "base/sequential.h"
#include "seqsim_model.h"

#define PER 40

typedef struct {
    int count[5];
    double looks;
} tally_t;

static tally_t run_rule(const seqsim_scenario_t *sc, int runs, int looks, int rule, double *a,
                        double *b)
{
    tally_t t = {{0}, 0.0};
    int last = rule == 0 ? 1 : looks;
    for (int r = 0; r < runs; r++) {
        seqsim_fill(sc, (uint64_t)r, (size_t)(looks * PER), (size_t)(looks * PER / 2), a, b);
        tpb_verdict_t v = TPB_VERDICT_INCONCLUSIVE;
        int k = 1;
        for (; k <= last; k++) {
            size_t n = (size_t)(k * PER);
            int rounds = (int)(n / SEQSIM_BLOCK);
            tpb_ratio_ci_t ci = rule == 2
                                    ? tpb_interval_paired_at(a, b, n, rounds, tpb_seq_conf(0.05, k))
                                    : tpb_interval_paired(a, b, n, rounds);
            v = tpb_interval_decide(ci.ratio, ci.half, 0.05);
            if (v != TPB_VERDICT_INCONCLUSIVE)
                break;
        }
        t.count[v]++;
        t.looks += k > last ? last : k;
    }
    t.looks /= runs;
    return t;
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 2000, looks = argc > 2 ? atoi(argv[2]) : 8;
    if (runs < 1 || looks < 1 || looks > 100) {
        fprintf(stderr, "usage: bench/seqsim [RUNS >= 1] [LOOKS 1..100]\n");
        return 2;
    }
    const seqsim_scenario_t sc[] = {
        {"equal, quiet", 1.0, 0.04, 0.5, 0.0, 1.0},
        {"equal, drift+stretches", 1.0, 0.04, 0.5, 0.2, 1.3},
        {"equal, noisy (sd 10 %)", 1.0, 0.10, 0.7, 0.2, 1.5},
        {"b 5 % faster, drift+stretches", 0.95, 0.04, 0.5, 0.2, 1.3},
        {"b 10 % faster, drift+stretches", 0.90, 0.04, 0.5, 0.2, 1.3},
        {"b 10 % faster, noisy", 0.90, 0.10, 0.7, 0.2, 1.5},
        {"b 12 % slower, drift+stretches", 1.12, 0.04, 0.5, 0.2, 1.3},
    };
    const char *rules[] = {"one look", "naive", "sequential"};
    double *a = malloc(sizeof(double) * (size_t)(looks * PER));
    double *b = malloc(sizeof(double) * (size_t)(looks * PER));
    if (!a || !b)
        return 1;
    printf("# seqsim: %d runs, up to %d looks of %d iterations, tolerance 5 %%, alpha 0.05\n", runs,
           looks, PER);
    printf("%-32s %-11s %7s %7s %7s %7s %6s\n", "scenario", "rule", "better", "worse", "draw",
           "incon.", "looks");
    for (size_t s = 0; s < sizeof(sc) / sizeof(*sc); s++) {
        for (int rule = 0; rule < 3; rule++) {
            tally_t t = run_rule(&sc[s], runs, looks, rule, a, b);
            printf("%-32s %-11s %6.1f%% %6.1f%% %6.1f%% %6.1f%% %6.2f\n", sc[s].name, rules[rule],
                   100.0 * t.count[TPB_VERDICT_BETTER] / runs,
                   100.0 * t.count[TPB_VERDICT_WORSE] / runs,
                   100.0 * t.count[TPB_VERDICT_DRAW] / runs,
                   100.0 * t.count[TPB_VERDICT_INCONCLUSIVE] / runs, t.looks);
        }
    }
    free(a);
    free(b);
    return 0;
}
