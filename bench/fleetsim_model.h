/*
 * fleetsim_model.h - a fleet's GEMM rounds constructed for checking --budget's exclusions
 * (bench/fleetsim and tests/test_fleet.c). Deterministic: run r of a scenario always draws
 * the same numbers (base/rng.h's counter-based normals).
 *
 * FLEETSIM_RANKS ranks, one a node; rank 0 runs at `speed` of the others. Rank q's rate in
 * round j is 100 * speed_q / (machine(j) * exp(e_qj) * spike_qj): e AR(1) over the rounds
 * with lag-1 rho and sd sigma, its own per rank; spike 1.5 with probability 2 % (a round that
 * met an interrupt); machine(j) = 1 + drift * j / horizon, times `slow` in a random 30 % of
 * the horizon in half of the runs, the same for every rank of a round (it cancels in the
 * scores: base/fleet.h).
 */
#ifndef TPB_FLEETSIM_MODEL_H
#define TPB_FLEETSIM_MODEL_H

#include <math.h>
#include <stdint.h>

#include "base/rng.h"
#include "seqsim_model.h"

#define FLEETSIM_RANKS 8

typedef struct {
    const char *name;
    double speed; /* rank 0's speed: 1 equal, 0.9 at the threshold, 0.8 slow */
    double sigma, rho, drift, slow;
} fleetsim_scenario_t;

/* v[FLEETSIM_RANKS x rounds]: run r of sc, rounds of the horizon's (its first rounds are the
 * same whatever the horizon beyond them). */
static inline void fleetsim_fill(const fleetsim_scenario_t *sc, uint64_t r, int rounds, int horizon,
                                 double *v)
{
    double s0 = horizon * seqsim_uniform(17, 1, r, 0), len = 0.3 * horizon;
    int stretch = seqsim_uniform(17, 2, r, 0) < 0.5;
    for (int q = 0; q < FLEETSIM_RANKS; q++) {
        double e = 0.0, speed = q == 0 ? sc->speed : 1.0;
        for (int j = 0; j < rounds; j++) {
            double z = tpb_rng_normal(19, (uint32_t)(q + 1), r, (uint64_t)j);
            e = j ? sc->rho * e + sqrt(1.0 - sc->rho * sc->rho) * sc->sigma * z : sc->sigma * z;
            double m = 1.0 + sc->drift * j / (double)horizon;
            if (stretch && j >= s0 && j < s0 + len)
                m *= sc->slow;
            double spike = seqsim_uniform(23, (uint32_t)(q + 1), r, (uint64_t)j) < 0.02 ? 1.5 : 1.0;
            v[(size_t)q * rounds + j] = 100.0 * speed / (m * exp(e) * spike);
        }
    }
}

#endif /* TPB_FLEETSIM_MODEL_H */
