/*
 * clock.c - the clock tpbal measures for a host rank's peak (tpb_cpu_measure_ghz, a chain
 * of dependent register adds) against a reference that shares no code with it: a chain of
 * dependent 64-bit imuls, 3 cycles each on every x86-64 core since Sandy Bridge and Zen.
 * The chain of "add $1" that tpbal timed before is shown too: Golden Cove and later cores
 * fold it at rename, several adds a cycle, so it reads far above any real clock.
 *
 *   bench/clock [TRIES]        (default 5; run it pinned: taskset -c 0 bench/clock)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "backend/host/host_clock.h"

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

#define CHAIN 8
#define LOOPS 1000000L

/* The fastest of tries runs of fn, in GHz for cycles_per_op cycles per chained op. */
static double fastest(double (*fn)(void), int tries, double cycles_per_op)
{
    double best = 0;
    for (int t = 0; t < tries; t++) {
        double us = fn();
        if (us > 0 && cycles_per_op * CHAIN * LOOPS * 1e-3 / us > best)
            best = cycles_per_op * CHAIN * LOOPS * 1e-3 / us;
    }
    return best;
}

#if defined(__x86_64__)
static double imul_chain(void)
{
    uint64_t y = 3, m = 1;
    double t0 = now_us();
    for (long i = 0; i < LOOPS; i++)
        __asm__ volatile("imul %1, %0\n\timul %1, %0\n\timul %1, %0\n\timul %1, %0\n\t"
                         "imul %1, %0\n\timul %1, %0\n\timul %1, %0\n\timul %1, %0"
                         : "+r"(y)
                         : "r"(m));
    return y == 3 ? now_us() - t0 : -1;
}

static double imm_add_chain(void)
{
    uint64_t x = 0;
    double t0 = now_us();
    for (long i = 0; i < LOOPS; i++)
        __asm__ volatile("add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\t"
                         "add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0"
                         : "+r"(x));
    return x == CHAIN * LOOPS ? now_us() - t0 : -1;
}
#endif

int main(int argc, char **argv)
{
    int tries = argc > 1 ? atoi(argv[1]) : 5;
    if (tries < 1) {
        fprintf(stderr, "usage: bench/clock [TRIES >= 1]\n");
        return 2;
    }
    double tpbal = 0;
    for (int t = 0; t < tries; t++) {
        double g = tpb_cpu_measure_ghz();
        tpbal = g > tpbal ? g : tpbal;
    }
    printf("tpbal (register add chain):   %.2f GHz\n", tpbal);
#if defined(__x86_64__)
    double ref = fastest(imul_chain, tries, 3.0);
    printf("reference (imul chain, 3 cyc): %.2f GHz\n", ref);
    printf("immediate add chain (folded?): %.2f \"GHz\"\n", fastest(imm_add_chain, tries, 1.0));
    printf("tpbal / reference: %.3f\n", ref > 0 ? tpbal / ref : 0.0);
#else
    printf("reference: x86-64 only\n");
#endif
    return 0;
}
