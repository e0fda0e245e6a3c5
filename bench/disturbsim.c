/*
 * bench/disturbsim [TRIALS] - how often base/disturb.h calls a series of steps disturbed, on
 * constructed series whose truth is known: steady ones (log-normal noise of 2, 5 and 10 %, the
 * last with a slow drift), ones with rare spikes (1 step in 50 three times as long), and
 * disturbed ones (two modes taking turns, as the H200 showed with a second process on the GPU:
 * 1401 and 2737 us; or mixed at random in shares of 10 to 50 % and ratios of 1.2 to 2). For
 * 20 steps (gpu-check's --iters) and 50. Each series judged TRIALS times (default 2000) with
 * other draws: the share called disturbed, and among those how many bimodal. Results:
 * doc/METRICS.md, "Disturbed configs".
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/disturb.h"
#include "base/rng.h"

typedef struct {
    const char *name;
    int truth;         /* 1: disturbed */
    double sd;         /* log-normal noise */
    double drift;      /* over the series, relative */
    double spike_rate; /* a step 3x as long */
    double ratio;      /* a second mode this much slower (0: none) */
    double share;      /* its share; 0.5 with alternate */
    int alternate;     /* the modes take turns */
} model_t;

static double step_of(const model_t *m, int trial, int i, int n)
{
    double z = tpb_rng_normal(11, 1, (uint64_t)trial, (uint64_t)i);
    double u = 0.5 * (1.0 + erf(tpb_rng_normal(11, 2, (uint64_t)trial, (uint64_t)i) / sqrt(2.0)));
    double t = 1000.0 * exp(m->sd * z) * (1.0 + m->drift * i / n);
    if (m->ratio > 0.0 && (m->alternate ? i % 2 == 1 : u < m->share))
        t *= m->ratio;
    else if (m->spike_rate > 0.0 && u < m->spike_rate)
        t *= 3.0;
    return t;
}

int main(int argc, char **argv)
{
    int trials = argc > 1 ? atoi(argv[1]) : 2000;
    if (trials < 1) {
        fprintf(stderr, "usage: bench/disturbsim [TRIALS]\n");
        return 2;
    }
    static const model_t models[] = {
        {"steady, noise 2 %", 0, 0.02, 0, 0, 0, 0, 0},
        {"steady, noise 5 %", 0, 0.05, 0, 0, 0, 0, 0},
        {"steady, noise 10 %", 0, 0.10, 0, 0, 0, 0, 0},
        {"steady, noise 5 %, drift 10 %", 0, 0.05, 0.10, 0, 0, 0, 0},
        {"rare spikes (1 in 50, 3x), noise 2 %", 0, 0.02, 0, 0.02, 0, 0, 0}, /* p95 unmoved */
        {"taking turns 1401 / 2737 us, 2 %", 1, 0.02, 0, 0, 1.954, 0.5, 1},
        {"two modes x1.2, 30 %, noise 2 %", 1, 0.02, 0, 0, 1.2, 0.3, 0},
        {"two modes x1.5, 10 %, noise 2 %", 1, 0.02, 0, 0, 1.5, 0.1, 0},
        {"two modes x2, 50 %, noise 5 %", 1, 0.05, 0, 0, 2.0, 0.5, 0},
        {"two modes x1.2, 50 %, noise 5 %", 1, 0.05, 0, 0, 1.2, 0.5, 0},
    };
    static const int lens[] = {20, 50};
    printf("# base/disturb.h on constructed series, %d trials each: %% called disturbed "
           "(of them %% bimodal)\n",
           trials);
    printf("# %-40s %6s %18s %18s\n", "series", "truth", "20 steps", "50 steps");
    for (size_t m = 0; m < sizeof(models) / sizeof(models[0]); m++) {
        printf("  %-40s %6s", models[m].name, models[m].truth ? "dist." : "steady");
        for (size_t l = 0; l < 2; l++) {
            int n = lens[l], flagged = 0, bimodal = 0;
            double s[64];
            for (int t = 0; t < trials; t++) {
                for (int i = 0; i < n; i++)
                    s[i] = step_of(&models[m], t, i, n);
                tpb_disturb_t d = tpb_disturb_judge(s, n);
                flagged += d.verdict == TPB_DISTURBED;
                bimodal += d.bimodal;
            }
            printf("   %6.1f %% (%5.1f)", 100.0 * flagged / trials,
                   flagged ? 100.0 * bimodal / flagged : 0.0);
        }
        printf("\n");
    }
    return 0;
}
