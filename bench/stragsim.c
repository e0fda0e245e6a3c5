/*
 * bench/stragsim [RUNS] - the persistent straggler under --budget (run/sweep_straggle.c) on
 * constructed blocks: two ranks of one TP group, two sets of two configs measured side by
 * side, 10 blocks (rounds) a config a look; a rank's rate in a block is its speed times
 * exp(e), e AR(1) over the blocks in time with sd sigma and lag-1 rho, its own per rank; in
 * 5 % of blocks one rank stalls (0.7x); in half the runs one rank (either) is slowed for a
 * random 30 % of the run (a vCPU that lost its core for a while: a transient, not a
 * straggler). How often RUNS runs name a persistent straggler, under three rules:
 *   one look   no --budget: each set once, the run's blocks tested at 1 %
 *   naive      each set again while its blocks, and the sets' before it, leave the straggler
 *              open (base/detect.h: tpb_detect_open) at 1 %, up to 8 looks; the run's
 *              blocks at 1 %
 *   sequential as --budget: look j of the degree at 1 % / (j (j + 1)), the run's blocks at
 *              1 % / (J (J + 1)), J = 1 + the extensions (record/answer_persist.c)
 * Deterministic (base/rng.h). Results: doc/METRICS.md, "Sequential verdicts".
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/detect.h"
#include "base/rng.h"
#include "base/sequential.h"
#include "seqsim_model.h"

enum { TP = 2, SETS = 2, K = 2, R = 10, LOOKS = 8, NB = SETS * K * R * LOOKS };

typedef struct {
    const char *name;
    double slow;       /* rank 1's speed (1: equal ranks) */
    double sigma, rho; /* block-to-block noise */
    int stretches;     /* 1: a 30 % slow stretch of one rank in half the runs */
} scenario_t;

/* rate[t * TP + q]: rank q's rate in time slot t of run r (slots: every block the run could
 * take, in time order) */
static void fill(const scenario_t *sc, uint64_t r, double *rate)
{
    int slow_rank = seqsim_uniform(31, 1, r, 0) < 0.5,
        stretch = sc->stretches && seqsim_uniform(31, 2, r, 0) < 0.5;
    double s0 = 0.7 * NB * seqsim_uniform(31, 3, r, 0);
    for (int q = 0; q < TP; q++) {
        double e = 0.0;
        for (int t = 0; t < NB; t++) {
            double z = tpb_rng_normal(37, (uint32_t)q + 1, r, (uint64_t)t);
            e = t ? sc->rho * e + sqrt(1.0 - sc->rho * sc->rho) * sc->sigma * z : sc->sigma * z;
            double v = (q == 1 ? sc->slow : 1.0) * exp(e);
            if (seqsim_uniform(41, (uint32_t)q + 1, r, (uint64_t)t) < 0.05 / TP)
                v *= 0.7;
            if (stretch && q == slow_rank && t >= s0 && t < s0 + 0.3 * NB)
                v /= 1.3;
            rate[t * TP + q] = v;
        }
    }
}

/* The blocks of config c of set `set` so far (looks x R), in their own order, from the time
 * slots: set after set, a set's looks one after another, its configs' rounds interleaved. */
static void config_blocks(const double *rate, int set_t0, int c, int looks, double *out)
{
    for (int b = 0; b < looks * R; b++)
        for (int q = 0; q < TP; q++)
            out[b * TP + q] = rate[(size_t)(set_t0 + b * K + c) * TP + q];
}

/* The test over nc configs' blocks (cfg[i]: its rate blocks, nb[i] of them) at alpha. */
static tpb_persistent_t test(double *const *cfg, const int *nb, int nc, double alpha)
{
    static tpb_slow_t s[NB];
    static double dev[NB * TP];
    int n = 0;
    for (int i = 0; i < nc; i++) {
        tpb_detect_rate_blocks(cfg[i], TP, TP, nb[i], s + n, dev + (size_t)n * TP);
        n += nb[i];
    }
    return tpb_detect_persistent_at(s, dev, n, TP, TP, alpha);
}

/* One run under rule (0 one look, 1 naive, 2 sequential): the rank named (-1: none), and
 * the looks the sets took. */
static int run_rule(const double *rate, int rule, int *looks_out)
{
    static double blocks[SETS * K][R * LOOKS * TP];
    double *cfg[SETS * K];
    int nb[SETS * K], t0 = 0, ext = 0;
    for (int i = 0; i < SETS * K; i++)
        cfg[i] = blocks[i];
    *looks_out = 0;
    for (int set = 0; set < SETS; set++) {
        int look = 1;
        for (;; look++) {
            for (int c = 0; c < K; c++) {
                config_blocks(rate, t0, c, look, blocks[set * K + c]);
                nb[set * K + c] = look * R;
            }
            if (rule == 0 || look == LOOKS)
                break;
            double a = rule == 1 ? TPB_DETECT_ALPHA : tpb_seq_spend(TPB_DETECT_ALPHA, ext + look);
            tpb_persistent_t p = test(cfg + set * K, nb + set * K, K, a);
            if (!tpb_detect_open(&p))
                break;
            if (set > 0) { /* the sets before it at the same share: what they decide */
                p = test(cfg, nb, set * K, a);
                if (!tpb_detect_open(&p))
                    break;
            }
        }
        ext += look - 1;
        *looks_out += look;
        t0 += look * R * K;
    }
    double a = rule == 2 ? tpb_seq_spend(TPB_DETECT_ALPHA, 1 + ext) : TPB_DETECT_ALPHA;
    tpb_persistent_t p = test(cfg, nb, SETS * K, a);
    return p.persistent ? p.rank : -1;
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 2000;
    if (runs < 1) {
        fprintf(stderr, "usage: bench/stragsim [RUNS >= 1]\n");
        return 2;
    }
    const scenario_t sc[] = {
        {"equal, quiet (sd 3 %)", 1.0, 0.03, 0.3, 0},
        {"equal, slow stretches (sd 5 %)", 1.0, 0.05, 0.5, 1},
        {"equal, noisy, no stretches", 1.0, 0.10, 0.7, 0},
        {"equal, noisy (sd 10 %, rho 0.7)", 1.0, 0.10, 0.7, 1},
        {"rank 1 at 0.95, stretches", 0.95, 0.05, 0.5, 1},
        {"rank 1 at 0.9, stretches", 0.9, 0.05, 0.5, 1},
        {"rank 1 at 0.9, noisy", 0.9, 0.10, 0.7, 1},
    };
    const char *rules[] = {"one look", "naive", "sequential"};
    double *rate = malloc((size_t)NB * TP * sizeof(double));
    if (!rate)
        return 1;
    printf("# stragsim: %d runs; %d ranks, %d sets of %d configs, %d blocks a config a look, up "
           "to %d looks\n",
           runs, TP, SETS, K, R, LOOKS);
    printf("%-34s %-11s %9s %9s %6s\n", "scenario", "rule", "rank 1", "rank 0", "looks");
    for (size_t i = 0; i < sizeof(sc) / sizeof(*sc); i++)
        for (int rule = 0; rule < 3; rule++) {
            int named[TP] = {0};
            double looks = 0.0;
            for (int r = 0; r < runs; r++) {
                fill(&sc[i], (uint64_t)r, rate);
                int l, who = run_rule(rate, rule, &l);
                if (who >= 0)
                    named[who]++;
                looks += (double)l / SETS;
            }
            printf("%-34s %-11s %8.1f%% %8.1f%% %6.2f\n", sc[i].name, rules[rule],
                   100.0 * named[1] / runs, 100.0 * named[0] / runs, looks / runs);
        }
    free(rate);
    return 0;
}
