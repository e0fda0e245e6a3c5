/*
 * sweep_overlap.c - what a chunked config (--overlap chunked) adds to its
 * measurement: the chunks' marks of the measured iterations, and the times of its
 * parts alone (the median of TPB_ALONE_REPS rounds, every rank at once after a barrier,
 * each between two of the device's marks: CUDA events on a GPU, the clock on the host;
 * the whole GEMM, the chunks' GEMMs, the chunks' collectives, the serial collective),
 * gathered to rank 0 and put on its clock.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/metrics.h"
#include "base/overlap.h"
#include "run/agree.h"
#include "run/sweep_state.h"

#define TPB_ALONE_REPS 9

typedef tpb_status_t (*alone_fn)(tpb_layer_t *l);

static const alone_fn alone_fns[TPB_ALONE_N] = {tpb_layer_gemm_whole, tpb_layer_gemm_chunks,
                                                tpb_layer_comm_chunks, tpb_layer_comm_whole};

/* One run of phase f between two of the device's marks, slots 2k and 2k + 1 (CUDA events on
 * a GPU: the phase's time on the device, not the host's wait for it), every rank starting
 * together; the GEMM phases between compute marks, the collectives between comm marks. */
static tpb_status_t mark_once(tpb_sweep_t *s, tpb_layer_t *l, int f, size_t k)
{
    int gemm = alone_fns[f] == tpb_layer_gemm_whole || alone_fns[f] == tpb_layer_gemm_chunks;
    TPB_MPI_RET(MPI_Barrier(s->pos.world), "--overlap: alone timings");
    TPB_CHECK_RET(
        tpb_dev_mark(s->ctx.dev, 2 * k, gemm ? TPB_MARK_COMPUTE_BEGIN : TPB_MARK_COMM_BEGIN));
    TPB_CHECK_RET(alone_fns[f](l));
    TPB_CHECK_RET(tpb_dev_mark(s->ctx.dev, 2 * k + 1, gemm ? TPB_MARK_COMPUTE_END : TPB_MARK_COMM));
    return tpb_dev_sync(s->ctx.dev);
}

/* The median time of every phase: once untimed, then TPB_ALONE_REPS rounds that take the
 * phases in turn, so that a disturbance of this shared machine falls on all of them alike
 * rather than on one phase's repetitions. The device's marks are taken over for them (the
 * measured iterations' are read before). */
static tpb_status_t time_alone(tpb_sweep_t *s, tpb_layer_t *l, double *a)
{
    enum { RUNS = TPB_ALONE_N * (TPB_ALONE_REPS + 1) };
    double t[TPB_ALONE_N][TPB_ALONE_REPS], m[2 * RUNS];
    TPB_CHECK_RET(tpb_dev_marks_prepare(s->ctx.dev, 2 * RUNS));
    for (size_t k = 0; k < RUNS; k++) /* the first round untimed (warm) */
        TPB_CHECK_RET(mark_once(s, l, (int)(k % TPB_ALONE_N), k));
    TPB_CHECK_RET(tpb_dev_marks_read(s->ctx.dev, 2 * RUNS, m));
    for (int i = 0; i < TPB_ALONE_REPS; i++)
        for (int f = 0; f < TPB_ALONE_N; f++) {
            size_t k = (size_t)(i + 1) * TPB_ALONE_N + (size_t)f;
            t[f][i] = m[2 * k + 1] - m[2 * k];
        }
    for (int f = 0; f < TPB_ALONE_N; f++)
        a[f] = tpb_stats_median(t[f], TPB_ALONE_REPS);
    return TPB_OK;
}

/* This rank's chunk marks of the measured iterations into mine[iters x C x 3]. */
static tpb_status_t own_marks(tpb_sweep_t *s, const tpb_config_plan_t *p, double *mine)
{
    const tpb_measure_t *ms = &s->plans.m;
    const tpb_marks_layout_t *lay = &p->desc.marks;
    size_t total = tpb_marks_count(lay), per = tpb_chunk_marks_per_rank(1, lay->chunks);
    double *m = malloc(total * sizeof(double));
    if (!m)
        return tpb_err_set(TPB_ERR_NOMEM, "no memory for %zu chunk marks", total);
    tpb_status_t st = tpb_dev_marks_read(s->ctx.dev, total, m);
    for (int i = 0; st == TPB_OK && i < ms->iters; i++)
        memcpy(mine + tpb_chunk_marks_at((size_t)ms->iters, lay->chunks, 0, (size_t)i),
               m + tpb_marks_chunk(lay, (size_t)(ms->warmup + i), 0, 0), per * sizeof(double));
    free(m);
    return st;
}

void tpb_sweep_overlap_clock(const tpb_sweep_t *s, const tpb_config_plan_t *p, double *chunk)
{
    size_t per_rank = tpb_chunk_marks_per_rank((size_t)s->plans.m.iters, p->desc.chunks);
    for (int r = 0; r < s->pos.topo->size; r++) {
        int w = s->pos.rank_of[r];
        for (size_t i = 0; i < per_rank; i++)
            chunk[(size_t)r * per_rank + i] = tpb_clock_correct(
                &s->rec->sync0[w], &s->rec->sync1[w], chunk[(size_t)r * per_rank + i]);
    }
}

tpb_status_t tpb_sweep_overlap(tpb_sweep_t *s, const tpb_config_plan_t *p, tpb_layer_t *l,
                               double **chunk, double **alone)
{
    int size = s->pos.topo->size, root = s->rec != NULL;
    size_t per = tpb_chunk_marks_per_rank((size_t)s->plans.m.iters, p->desc.chunks);
    double *mine = malloc(per * sizeof(double)), a[TPB_ALONE_N];
    *chunk = root ? malloc((size_t)size * per * sizeof(double)) : NULL;
    *alone = root ? malloc((size_t)size * TPB_ALONE_N * sizeof(double)) : NULL;
    tpb_status_t st = !mine || (root && (!*chunk || !*alone))
                          ? tpb_err_set(TPB_ERR_NOMEM, "no memory for the chunk marks")
                          : own_marks(s, p, mine);
    if (tpb_agree(s->pos.world, st) == TPB_OK) /* every rank runs every phase: agreed on first */
        st = time_alone(s, l, a);
    st = tpb_agree(s->pos.world, st);
    if (st == TPB_OK && MPI_Gather(mine, (int)per, MPI_DOUBLE, *chunk, (int)per, MPI_DOUBLE, 0,
                                   s->pos.world) != MPI_SUCCESS)
        st = tpb_err_call(TPB_ERR_MPI, "MPI_Gather", "chunk marks", __FILE__, __LINE__);
    if (st == TPB_OK && MPI_Gather(a, TPB_ALONE_N, MPI_DOUBLE, *alone, TPB_ALONE_N, MPI_DOUBLE, 0,
                                   s->pos.world) != MPI_SUCCESS)
        st = tpb_err_call(TPB_ERR_MPI, "MPI_Gather", "alone timings", __FILE__, __LINE__);
    free(mine);
    if (st != TPB_OK) {
        free(*chunk);
        free(*alone);
        *chunk = *alone = NULL;
    }
    return st;
}
