/*
 * cpuload.h - how much of a machine's CPU time other processes took while a run ran: the
 * machine's busy time (/proc/stat: user, nice, system, irq, softirq, steal) over the run,
 * less the CPU time of the run's own ranks on it, as a share of its CPUs' wall time. A share
 * above TPB_NOISY_LOAD is carried into the answer and tpbal-compare's verdict as noise.
 */
#ifndef TPB_CPULOAD_H
#define TPB_CPULOAD_H

#include <stdint.h>

/** A share of the CPUs taken by others above which the timings are called noisy (0.25: the
 *  tests' own gate, doc/TESTING.md). */
#define TPB_NOISY_LOAD 0.25

/** The busy seconds and the CPUs of the text of /proc/stat (its "cpu " and "cpuN" lines),
 *  clock ticks of hz a second. 0, or -1 where the text has no "cpu " line. Pure. */
int tpb_cpuload_parse(const char *text, long hz, double *busy_s, int *ncpu);

/** The share of ncpu CPUs over wall_s seconds that others used: (busy1 - busy0 - own_s) /
 *  (wall_s x ncpu), within [0, 1]; NaN where it cannot be told (no time, no CPU, a busy time
 *  that went backwards). Pure. */
double tpb_cpuload_others(double busy0, double busy1, double own_s, double wall_s, int ncpu);

/** This machine now: its busy seconds and CPUs (-1: no /proc/stat: not Linux), and an id
 *  of the machine itself (its boot id: the ranks of emulated hosts on one machine, in
 *  namespaces of their own, share it; 0 where unknown). */
int tpb_cpuload_read(double *busy_s, int *ncpu, uint64_t *machine);

/** This process's CPU time (user and system, every thread), in seconds. */
double tpb_cpuload_self(void);

#endif /* TPB_CPULOAD_H */
