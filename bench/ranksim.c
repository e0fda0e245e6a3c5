/*
 * bench/ranksim [RUNS] - a --block's TP ranking under --budget (record/answer.h:
 * tpb_answer_block_open, tpb_block_verdict) on constructed steps: block A (tp 1) measured
 * first, block B (tp 2) after it, on one machine timeline; B's tokens/s per rank is `ahead`
 * times A's. A step in time slot t is base * machine(t) * exp(e_t) * spike: e AR(1) over
 * the whole timeline (sd sigma, lag-1 rho), a spike 1.5x in 1 % of slots, machine(t) = 1 +
 * drift t / H (H: the slots of the longest run) times `slow` inside a slow stretch (30 % of H,
 * in half the runs). A look is 40 iterations. How often RUNS runs end with the throughput
 * use line right, false or not sure, and how many looks each block took, under four rules:
 *   one look    no --budget: each block once, 95 %
 *   naive       each block measured again while --budget's rules say open, every look at
 *               95 % (looks not counted)
 *   tpbal, A once  B measured again while its ranking against A is open (look j at
 *               1 - 0.05 / (j (j + 1))), A once
 *   tpbal       as --budget: A measured again while its own interval is wider than
 *               TPB_BLOCK_HALF (its precision), B while its ranking or its precision is open
 * False: "better" where B is within 5 % of A (the truth a draw), "draw" or the wrong block
 * "better" where it is not. Deterministic (base/rng.h). Results: doc/METRICS.md,
 * "Sequential verdicts".
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/rng.h"
#include "base/stats.h"
#include "base/sequential.h"
#include "record/answer.h"
#include "seqsim_model.h"

enum { PER = 40, LOOKS = 8, H = 2 * LOOKS * PER };

typedef struct {
    const char *name;
    double ahead; /* B's tokens/s per rank over A's */
    double sigma, rho, drift, slow;
} scenario_t;

typedef struct {
    int right, wrong, open;
    double looks_a, looks_b;
} tally_t;

/* The machine's factor in every slot of run r (H slots). */
static void timeline(const scenario_t *sc, uint64_t r, double *m)
{
    double s0 = 0.7 * H * seqsim_uniform(53, 1, r, 0), e = 0.0;
    int stretch = seqsim_uniform(53, 2, r, 0) < 0.5;
    for (int t = 0; t < H; t++) {
        double z = tpb_rng_normal(59, 1, r, (uint64_t)t);
        e = t ? sc->rho * e + sqrt(1.0 - sc->rho * sc->rho) * sc->sigma * z : sc->sigma * z;
        double f = (1.0 + sc->drift * t / H) * exp(e);
        if (stretch && t >= s0 && t < s0 + 0.3 * H)
            f *= sc->slow;
        if (seqsim_uniform(61, 1, r, (uint64_t)t) < 0.01)
            f *= 1.5;
        m[t] = f;
    }
}

/* A block history over steps[n] (borrowed), at tp, measured as block id after `looks` looks. */
static tpb_history_t block(int id, int tp, double *steps, int n, int looks)
{
    tpb_history_t h = {.id = id,
                       .tp = tp,
                       .world = 2,
                       .policy = TPB_POLICY_EVEN,
                       .m = 512,
                       .steps = steps,
                       .nsteps = n,
                       .set = id,
                       .rounds = n / SEQSIM_BLOCK,
                       .looks = looks,
                       .straggler_world = -1};
    h.step_med = tpb_stats_median(steps, (size_t)n);
    strcpy(h.shape_name, "sim");
    return h;
}

/* One run under rule (0 one look, 1 naive, 2 tpbal with A once, 3 tpbal): B's verdict on the
 * throughput line, scored against the truth. */
static void run(const scenario_t *sc, uint64_t r, int rule, const double *m, tally_t *t)
{
    double a[LOOKS * PER], b[LOOKS * PER];
    int la = 1, lb = 1, cnt = rule >= 2; /* looks counted for the level (else 95 %) */
    tpb_block_open_t o;
    tpb_history_t ha, hb;
    for (;; la++) { /* A: 1 000 us a step at tp 1; naive: while imprecise at 95 % */
        for (int i = (la - 1) * PER; i < la * PER; i++)
            a[i] = 1000.0 * m[i];
        ha = block(0, 1, a, la * PER, cnt ? la : 0);
        if (rule == 0 || rule == 2 || la == LOOKS || !tpb_answer_block_open(NULL, 0, &ha, 1, 2, &o))
            break;
    }
    int t0 = la * PER;
    for (;; lb++) { /* B at tp 2: half A's step over `ahead` */
        for (int i = (lb - 1) * PER; i < lb * PER; i++)
            b[i] = 500.0 / sc->ahead * m[t0 + i];
        hb = block(1, 2, b, lb * PER, cnt ? lb : 0);
        if (rule == 0 || lb == LOOKS ||
            !tpb_answer_block_open(&ha, 1, &hb, 1, rule == 2 ? 1 : 2, &o))
            break;
    }
    const tpb_history_t *best = hb.step_med * 2.0 < ha.step_med ? &hb : &ha;
    tpb_policy_verdict_t v = tpb_block_verdict(best, best == &hb ? &ha : &hb, 1);
    int truth_draw = sc->ahead < 1.05 && sc->ahead > 1.0 / 1.05;
    int right_best = (best == &hb) == (sc->ahead > 1.0);
    if (v.verdict == TPB_VERDICT_INCONCLUSIVE)
        t->open++;
    else if (v.verdict == TPB_VERDICT_DRAW ? truth_draw : !truth_draw && right_best)
        t->right++;
    else
        t->wrong++;
    t->looks_a += la;
    t->looks_b += lb;
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 2000;
    if (runs < 1) {
        fprintf(stderr, "usage: bench/ranksim [RUNS]\n");
        return 2;
    }
    const scenario_t sc[] = {
        {"equal, steady (sd 1 %)", 1.0, 0.01, 0.5, 0.0, 1.0},
        {"B 3 % ahead, steady", 1.03, 0.01, 0.5, 0.0, 1.0},
        {"B 7 % ahead, steady", 1.07, 0.01, 0.5, 0.0, 1.0},
        {"equal, quiet", 1.0, 0.04, 0.5, 0.0, 1.0},
        {"equal, drift+stretches", 1.0, 0.04, 0.5, 0.2, 1.3},
        {"equal, noisy (sd 10 %)", 1.0, 0.10, 0.7, 0.2, 1.5},
        {"B 3 % ahead, quiet", 1.03, 0.04, 0.5, 0.0, 1.0},
        {"B 10 % ahead, quiet", 1.10, 0.04, 0.5, 0.0, 1.0},
        {"B 10 % ahead, drift+stretches", 1.10, 0.04, 0.5, 0.2, 1.3},
        {"A 10 % ahead, noisy", 1.0 / 1.10, 0.10, 0.7, 0.2, 1.5},
    };
    const char *rules[] = {"one look", "naive", "tpbal, A once", "tpbal"};
    double *m = malloc(H * sizeof(double));
    printf("# bench/ranksim %d: the throughput line's verdict (%% of runs) and the looks each "
           "block took (A, B)\n",
           runs);
    printf("%-32s %-14s %7s %7s %9s %6s %6s\n", "scenario", "rule", "right", "false", "not sure",
           "A", "B");
    for (size_t s = 0; s < sizeof(sc) / sizeof(*sc); s++)
        for (int rule = 0; rule < 4; rule++) {
            tally_t t = {0};
            for (int r = 0; r < runs; r++) {
                timeline(&sc[s], (uint64_t)r, m);
                run(&sc[s], (uint64_t)r, rule, m, &t);
            }
            printf("%-32s %-14s %6.1f%% %6.1f%% %8.1f%% %6.2f %6.2f\n", sc[s].name, rules[rule],
                   100.0 * t.right / runs, 100.0 * t.wrong / runs, 100.0 * t.open / runs,
                   t.looks_a / runs, t.looks_b / runs);
        }
    free(m);
    return 0;
}
