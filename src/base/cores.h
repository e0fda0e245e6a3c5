/*
 * cores.h - how many cores a rank may use when several ranks of a node may run
 * on the same ones (mpirun --bind-to none or socket, srun without a binding), and
 * so how many BLAS threads it should start. Each rank gives the set of cores its
 * cpuset touches; a core that k ranks may run on counts 1/k to each. Pure.
 */
#ifndef TPB_CORES_H
#define TPB_CORES_H

#include <stddef.h>
#include <stdint.h>

/** Cores of a node, by hwloc logical index (at most TPB_CORESET_MAX). */
#define TPB_CORESET_MAX 4096

typedef struct {
    uint64_t bits[TPB_CORESET_MAX / 64];
} tpb_coreset_t;

/** Empty the set. */
void tpb_coreset_clear(tpb_coreset_t *s);

/** Add core c (indices outside [0, TPB_CORESET_MAX) are ignored). */
void tpb_coreset_add(tpb_coreset_t *s, int c);

/** 1 if core c is in s. */
int tpb_coreset_has(const tpb_coreset_t *s, int c);

/** Cores in s. */
int tpb_coreset_count(const tpb_coreset_t *s);

/** How rank `me` of n node-local ranks shares its cores with the others. */
typedef struct {
    double share; /**< sum over its cores of 1 / (ranks that may run there); 0 for no core */
    int sharing;  /**< ranks whose cores overlap its own, itself included (1: alone) */
    int threads;  /**< BLAS threads that fill its share: floor(share), at least 1 */
} tpb_core_share_t;

/** sets[0..n) are the core sets of the node's ranks. */
tpb_core_share_t tpb_core_share(const tpb_coreset_t *sets, int n, int me);

/** A rank's BLAS threads and what set them. */
typedef struct {
    int threads;
    const char *from; /**< "--threads", the variable's name, or "auto" */
} tpb_threads_choice_t;

/**
 * asked (--threads, > 0) wins; else the first of the variables OpenBLAS itself
 * reads, in its order (env[0] OPENBLAS_NUM_THREADS, env[1] GOTO_NUM_THREADS,
 * env[2] OMP_NUM_THREADS; NULL when unset) whose value starts with a positive
 * integer; else auto_threads ("auto").
 */
tpb_threads_choice_t tpb_threads_choose(int asked, const char *const env[3], int auto_threads);

/** The cores a rank uses: its threads, at most its share (threads when the share is unknown). */
double tpb_cores_used(const tpb_core_share_t *s, int threads);

/**
 * One line on a rank's threads, "" when they fit cores of its own: more threads
 * than its share holds (oversubscribed: what set them and what to do), or cores
 * it shares with other ranks (cpuset: the cores it may run on).
 */
void tpb_threads_note(const tpb_core_share_t *s, const tpb_threads_choice_t *c, const char *cpuset,
                      char *out, size_t cap);

#endif /* TPB_CORES_H */
