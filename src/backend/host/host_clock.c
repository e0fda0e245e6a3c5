/* host_clock.c - the clock a core runs at, measured (see host_clock.h). */
#include "backend/host/host_clock.h"

#include <stdint.h>

#include "base/clock.h"

/* Emerald Rapids here: "add $1" chains at 5.8-7.5 "GHz" (12 on CI's machine), register
 * adds 2.7-2.9, as a chain of 3-cycle imuls. */
double tpb_cpu_measure_ghz(void)
{
    double best = 0.0;
    const tpb_clock_t clk = {0.0};
#if defined(__x86_64__) || defined(__aarch64__)
    for (int t = 0; t < 5; t++) {
        uint64_t x = 0, one = 1;
        const long n = 1000000;
        double t0 = tpb_clock_now_us(&clk);
        for (long i = 0; i < n; i++)
#if defined(__x86_64__)
            __asm__ volatile("add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\t"
                             "add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0"
                             : "+r"(x)
                             : "r"(one));
#else
            __asm__ volatile("add %0, %0, %1\n\tadd %0, %0, %1\n\tadd %0, %0, %1\n\t"
                             "add %0, %0, %1\n\tadd %0, %0, %1\n\tadd %0, %0, %1\n\t"
                             "add %0, %0, %1\n\tadd %0, %0, %1"
                             : "+r"(x)
                             : "r"(one));
#endif
        double us = tpb_clock_now_us(&clk) - t0;
        if (us > 0 && x == 8 * (uint64_t)n && 8e-3 * n / us > best)
            best = 8e-3 * n / us;
    }
#endif
    return best <= TPB_GHZ_PLAUSIBLE ? best : 0.0;
}
