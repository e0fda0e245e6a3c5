/*
 * overlap.h - the figures of a chunked config (--overlap chunked), from its marks.
 * Pure: no MPI, no I/O (one allocation for the per-iteration figures).
 *
 * Per measured iteration, the TP group that set the step (the longest, first c0 to last
 * x1, as the timeline's step): its step and its longest GEMM busy time (a rank's sum over
 * chunks of GEMM end - GEMM begin); the step beyond that GEMM is the communication left
 * exposed (the chunks' collectives not hidden, their starts and the progress calls); a
 * rank that waits for a slower one is load imbalance, not communication, and is not
 * counted. Medians over the iterations. Alone (outside the measured loop, each the median
 * of a few repetitions; the figure is the slowest rank's): the whole shard's GEMM, the C
 * chunks' GEMMs, the C chunks' collectives, the serial collective.
 *
 *   t_overlap      median step of the chunked iteration
 *   exposed        median (step - longest GEMM busy)
 *   gemm_busy      median longest GEMM busy
 *   t_gemm         the chunks' GEMMs alone
 *   t_comm         the chunks' collectives alone
 *   t_serial       max over ranks of (whole GEMM + serial collective), alone
 *   efficiency     1 - exposed / t_comm                    (0 none hidden, 1 all)
 *   interference   gemm_busy / t_gemm (a GEMM slowed by the collectives beside it)
 *   chunking_cost  max over ranks of chunks' GEMMs alone / whole GEMM alone
 *   speedup        t_serial / t_overlap                   (> 1: overlap pays)
 */
#ifndef TPB_OVERLAP_H
#define TPB_OVERLAP_H

#include "base/marks.h"
#include "base/timeline.h"

/** What tpb_overlap_alone holds per rank, in this order. */
enum {
    TPB_ALONE_GEMM_WHOLE = 0,
    TPB_ALONE_GEMM_CHUNKS,
    TPB_ALONE_COMM_CHUNKS,
    TPB_ALONE_COMM_WHOLE,
    TPB_ALONE_N
};

typedef struct {
    int chunks;
    double t_overlap_us, exposed_us, gemm_busy_us;
    double t_gemm_us, t_gemm_whole_us, t_comm_us, t_comm_whole_us, t_serial_us;
    double efficiency, interference, chunking_cost, speedup;
    int host_waits; /* the host waited for each collective (a GPU's --comm mpi stages it through
                       host memory with MPI's blocking call): nothing could overlap, and the
                       figures above measure no overlap (set by the sweep, not computed here) */
} tpb_overlap_t;

/**
 * The figures of `ranks` ranks in TP groups of tp (consecutive positions): marks[ranks x
 * iters] (c0, c1, x1), chunk[ranks x iters x
 * chunks x 3] (the chunk marks), alone[ranks x TPB_ALONE_N]. A figure whose inputs are
 * missing (NaN) is NaN; all are NaN when memory runs out.
 */
void tpb_overlap_figures(int ranks, int tp, int iters, int chunks, const tpb_mark_t *marks,
                         const double *chunk, const double *alone, tpb_overlap_t *out);

/** Busy GEMM time of one iteration's chunk marks (chunks x 3). */
double tpb_overlap_busy(const double *chunk_marks, int chunks);

#endif /* TPB_OVERLAP_H */
