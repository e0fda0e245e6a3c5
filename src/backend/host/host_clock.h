/*
 * host_clock.h - the clock a CPU core runs at, measured: for VMs, where cpufreq gives no
 * maximum and /proc/cpuinfo's nominal clock can be far below the boost the GEMMs run at.
 */
#ifndef TPB_HOST_CLOCK_H
#define TPB_HOST_CLOCK_H

/**
 * The calling core's clock in GHz: a chain of dependent register adds (one per cycle)
 * timed, the fastest of 5 tries of 8 M adds (~2.5 ms each). 0 where not built (neither
 * x86-64 nor AArch64) or above TPB_GHZ_PLAUSIBLE (the chain was not one add a cycle).
 * The addend is a register: Golden Cove and later cores fold chains of "add $1" at
 * rename, several a cycle (bench/clock shows both against a chain of imuls).
 */
double tpb_cpu_measure_ghz(void);

/** No core runs above this clock (GHz): a faster chain was not timed right. */
#define TPB_GHZ_PLAUSIBLE 6.5

#endif
