/*
 * seqsim_model.h - constructed series of two configs measured in interleaved
 * blocks, for checking a sequential verdict's false-decision rate (bench/seqsim
 * and tests/test_sequential.c). Deterministic: run r of a scenario always draws the
 * same numbers (base/rng.h's counter-based normals).
 *
 * Iteration i of config c (0: a, 1: b) in round j = i / BLOCK runs in block slot
 * t = 2 j + (c xor (j odd)) (ABBA order) and takes
 *     base_c * machine(t) * exp(e_i) * spike_i,
 * base_b = effect * base_a; e_i AR(1) with lag-1 rho and standard deviation sigma,
 * its own per config; spike_i 1.5 with probability 1 % (an interrupt, a page fault);
 * machine(t) = 1 + drift * t / horizon, times `slow` inside a slow stretch (a vCPU
 * that loses its core for a while: a random window of 30 % of the horizon, in a
 * random half of the runs), the same for both configs at one time.
 */
#ifndef TPB_SEQSIM_MODEL_H
#define TPB_SEQSIM_MODEL_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "base/rng.h"

#define SEQSIM_BLOCK 4 /* iterations of one config in a round (40 iterations: 10 rounds) */

typedef struct {
    const char *name;
    double effect; /* median(b) / median(a): 1 for equal configs, 0.9 for b 10 % faster */
    double sigma, rho, drift, slow;
} seqsim_scenario_t;

/* A uniform in [0, 1) from the counter-based normal (its CDF). */
static inline double seqsim_uniform(uint64_t seed, uint32_t id, uint64_t i, uint64_t j)
{
    double z = tpb_rng_normal(seed, id, i, j);
    return 0.5 * erfc(-z / sqrt(2.0)) * 0.999999999;
}

/* Fill a[n] and b[n] (n iterations each, n a multiple of SEQSIM_BLOCK) for run r of
 * scenario sc; horizon: the blocks of the longest run the budget allows (2 per round). */
static inline void seqsim_fill(const seqsim_scenario_t *sc, uint64_t r, size_t n, size_t horizon,
                               double *a, double *b)
{
    double s0 = horizon * seqsim_uniform(7, 1, r, 0), len = 0.3 * horizon;
    int stretch = seqsim_uniform(7, 2, r, 0) < 0.5;
    for (int c = 0; c < 2; c++) {
        double e = 0.0, base = c ? sc->effect : 1.0;
        double *v = c ? b : a;
        for (size_t i = 0; i < n; i++) {
            size_t j = i / SEQSIM_BLOCK;
            double t = 2.0 * (double)j + (double)((c ^ (int)(j & 1)));
            double z = tpb_rng_normal(11, (uint32_t)(c + 1), r, i);
            e = i ? sc->rho * e + sqrt(1.0 - sc->rho * sc->rho) * sc->sigma * z : sc->sigma * z;
            double m = 1.0 + sc->drift * t / (double)horizon;
            if (stretch && t >= s0 && t < s0 + len)
                m *= sc->slow;
            double spike = seqsim_uniform(13, (uint32_t)(c + 1), r, i) < 0.01 ? 1.5 : 1.0;
            v[i] = 1000.0 * base * m * exp(e) * spike;
        }
    }
}

#endif /* TPB_SEQSIM_MODEL_H */
