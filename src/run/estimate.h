/*
 * estimate.h - how long a run of these plans takes, in its parts (pure): the GEMMs of every
 * iteration (warm-up and the layer's untimed first one included) at a rank's GEMM rate, the
 * collectives at a bus bandwidth and latency, each calibrating block's calibration (to its
 * time budget: on a noisy machine the spread rarely settles sooner), each config's set-up
 * (the seeded inputs, at a cost per byte of its buffers, and a fixed share for the clock
 * sync, the gather, the analysis and the files) and the start. --dry-run prints it; the
 * sweep's first progress line says it before the first config. The constants were fitted
 * on this project's CI machine and checked on three sweeps (doc/METRICS.md, "Time
 * estimates").
 */
#ifndef TPB_ESTIMATE_H
#define TPB_ESTIMATE_H

#include "run/plan.h"

/** Launch to the first config: MPI's start, the plans, the device, the clock sync. */
#define TPB_EST_START_S 0.5
/** A config's fixed share: its clock re-sync, gather, analysis, record and trace (3 ms a
 *  small config on this project's AMD CI machine, 2026-12-05; 0.05 s was the 2026-12-03
 *  Intel machine's, where calibrations ran to their budget too: doc/METRICS.md). */
#define TPB_EST_CONFIG_S 0.01
/** Filling a config's buffers (seeded normal inputs), a byte on one core: ~11 ns an fp32
 *  element with the draw's fast path (bench/rngrate, doc/METRICS.md "Host time"); 10 ns a
 *  byte before it, glibc's log and cos for every element. The ranks draw a matrix together,
 *  each on its CPUs (draw_cpus). */
#define TPB_EST_FILL_S_PER_BYTE 3e-9

/** The rates an estimate assumes. */
typedef struct {
    double gflops;    /**< a rank's GEMM rate (NaN: unknown, no estimate) */
    double busbw_gbs; /**< the collectives' bus bandwidth */
    double alpha_us;  /**< a collective's latency */
    int iters, warmup;
    const double *emulate; /**< --emulate-speed per world rank, or NULL */
    int world;
    double draw_cpus; /**< the CPUs the ranks draw inputs on together (run/sweep.h's
                           tpb_sweep_draw_cpus; 1 in tpb_est_rates_of) */
} tpb_est_rates_t;

/** The parts of a run's time, in seconds. A calibration runs until its ranks' speeds settle
 *  or its time budget is spent: calib_s assumes the budget (a noisy machine's case: on
 *  this project's CI machine most calibrations end there), calib_least_s the fewest samples
 *  (a quiet device's case); total_least_s is the total with the latter. */
typedef struct {
    double start_s, gemm_s, comm_s, calib_s, calib_least_s, setup_s, total_s, total_least_s;
    int calibrations; /**< blocks that calibrate */
} tpb_estimate_t;

/** The rates of a run of list on world ranks: its measure spec's iterations and emulation,
 *  the backend's link guesses (d), a rank's GEMM rate gflops. Pure. */
tpb_est_rates_t tpb_est_rates_of(const tpb_plan_list_t *list, const tpb_backend_defaults_t *d,
                                 int world, double gflops);

/** The estimate of the plans of list at rates r (total NaN where the rate is unknown). */
void tpb_plans_estimate(const tpb_plan_list_t *list, const tpb_est_rates_t *r, tpb_estimate_t *e);

/** The whole launch from one pass's estimate e: *about its passes' totals, *most with each
 *  pass's --budget (budget_s; 0: none) spent to the end, a bound (a set starts another look
 *  only while the budget has its time left). Pure. */
void tpb_estimate_whole(const tpb_estimate_t *e, int passes, double budget_s, double *about,
                        double *most);

#endif /* TPB_ESTIMATE_H */
