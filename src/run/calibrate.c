/* calibrate.c - GEMM speed measurement, every rank at once. */
#include "run/calibrate.h"
#include "run/signals.h"

#include <stdio.h>
#include <stdlib.h>

#include "base/metrics.h"
#include "base/sizes.h"
#include "base/stamp.h"
#include "base/testfault.h"
#include "run/agree.h"

/* Relative interquartile range of v[n]: (q75 - q25) / median. */
static double rel_iqr(const double *v, size_t n)
{
    return (tpb_stats_quantile(v, n, 0.75) - tpb_stats_quantile(v, n, 0.25)) /
           tpb_stats_median(v, n);
}

/* Time `batch` GEMMs into dur[0, batch) (microseconds). */
static tpb_status_t time_batch(tpb_device_t *dev, const tpb_gemm_t *g, int batch, double *marks,
                               double *dur)
{
    tpb_status_t st = TPB_OK;
    for (int i = 0; i < batch && st == TPB_OK; i++) {
        st = tpb_dev_mark(dev, (size_t)(2 * i), TPB_MARK_COMPUTE_BEGIN);
        if (st == TPB_OK)
            st = tpb_dev_gemm(dev, g);
        if (st == TPB_OK)
            st = tpb_dev_mark(dev, (size_t)(2 * i + 1), TPB_MARK_COMPUTE_END);
    }
    /* every rank reads (waits for its device) here, failed or not: a GPU backend pairs the
     * ranks' waits in order (its watchdog's arrivals), and a rank that skipped one left the
     * next ones of its peers unmatched until --timeout */
    tpb_status_t rd = tpb_dev_marks_read(dev, (size_t)(2 * batch), marks);
    TPB_CHECK_RET(st);
    TPB_CHECK_RET(rd);
    for (int i = 0; i < batch; i++)
        dur[i] = marks[2 * i + 1] - marks[2 * i];
    return TPB_OK;
}

/* Whether every rank may stop: all are stable, one has used its budget, or one failed
 * (its status is agreed on afterwards, so no rank is left waiting in a collective). */
static tpb_status_t all_done(MPI_Comm comm, int stable, int exhausted, int failed, int *done)
{
    int v[3] = {stable, -exhausted, -failed};
    TPB_MPI_RET(MPI_Allreduce(MPI_IN_PLACE, v, 3, MPI_INT, MPI_MIN, comm), "calibration");
    *done = v[0] || v[1] || v[2];
    return TPB_OK;
}

/* The GEMM's plan built and its kernels loaded outside the marks: one untimed GEMM, waited
 * for by every rank whatever its own status (a GPU backend pairs the ranks' waits). Inside
 * the marks a plan's first build would run behind the start gate (a GPU backend holds its
 * GEMM stream at c0 until the GEMM is queued), where a lazily loaded kernel waits for that
 * stream: a deadlock on a GPU. */
static tpb_status_t warm(tpb_device_t *dev, const tpb_gemm_t *g)
{
    /* TPBAL_TEST_FAULT=cold-plans (tpbal's own tests): no warm-up on any rank, so the first
     * timed GEMM meets its plan behind the gate, where only the backend's own release of the
     * gate before a build (cuda_gemm.c) keeps it from hanging */
    if (tpb_test_fault("cold-plans"))
        return TPB_OK;
    tpb_status_t st = tpb_dev_gemm(dev, g);
    tpb_status_t done = tpb_dev_sync(dev);
    return st != TPB_OK ? st : done;
}

/* The sampling loop: every rank times GEMMs in lock-step rounds until all are stable. */
static tpb_status_t sample(tpb_device_t *dev, MPI_Comm comm, const tpb_gemm_t *g,
                           const tpb_cal_policy_t *p, double *dur, int *n)
{
    double marks[2 * TPB_CAL_BATCH];
    tpb_status_t st = warm(dev, g);
    if (st == TPB_OK)
        st = time_batch(dev, g, 1, marks, dur); /* warm-up, not kept */
    else
        (void)tpb_dev_sync(dev); /* where the others read their marks */
    TPB_MPI_RET(MPI_Barrier(comm), "calibration");
    double t0 = tpb_clock_now_us(NULL);
    int done = 0;
    *n = 0;
    while (!done) {
        int batch = *n + TPB_CAL_BATCH <= p->max_samples ? TPB_CAL_BATCH : p->max_samples - *n;
        tpb_stamp_iter(*n); /* progress: a round of the calibration */
        if (st == TPB_OK && (st = time_batch(dev, g, batch, marks, dur + *n)) == TPB_OK)
            *n += batch;
        else if (st != TPB_OK) /* failed earlier: still wait where the others read their marks */
            (void)tpb_dev_sync(dev);
        int stable = *n >= p->min_samples && rel_iqr(dur, (size_t)*n) <= p->target_spread;
        /* a stop request (SIGTERM...) ends the calibration at this round: the sweep then
         * stops before its next config instead of after a whole time budget */
        int exhausted = *n >= p->max_samples || tpb_signal_received() ||
                        (*n >= p->min_samples && tpb_clock_now_us(NULL) - t0 >= p->budget_us);
        TPB_CHECK_RET(all_done(comm, stable, exhausted, st != TPB_OK, &done));
    }
    return tpb_agree(comm, st);
}

/* A and B: the config's kept inputs, or a cheap fill where there are none (a fleet's
 * calibration). Nobody checks the calibration's product: its first m x k and n x k elements
 * (one copy each; a block of columns would be packed row by row). */
static tpb_status_t fill(tpb_device_t *dev, const tpb_gemm_shape_t *sh, void *a, void *b)
{
    if (sh->inputs) {
        tpb_inputs_block_t x = sh->inputs[0], w = sh->inputs[1];
        x.r0 = x.c0 = w.r0 = w.c0 = 0;
        x.nr = sh->m;
        w.nr = sh->n;
        x.nc = w.nc = sh->k;
        TPB_CHECK_RET(tpb_inputs_fill_any(dev, a, &x));
        return tpb_inputs_fill_any(dev, b, &w);
    }
    TPB_CHECK_RET(tpb_backend_fill_uniform(dev, a, (size_t)sh->m * (size_t)sh->k, 9, sh->dtype));
    return tpb_backend_fill_uniform(dev, b, (size_t)sh->n * (size_t)sh->k, 10, sh->dtype);
}

tpb_status_t tpb_calibrate_gemm(tpb_device_t *dev, MPI_Comm comm, const tpb_gemm_shape_t *sh,
                                const tpb_cal_policy_t *p, tpb_cal_speed_t *out)
{
    void *a = NULL, *b = NULL, *c = NULL;
    double *dur = NULL;
    long m = sh->m, n = sh->n, k = sh->k;
    size_t in = tpb_dtype_in_size(sh->dtype), outsz = tpb_dtype_out_size(sh->dtype);
    tpb_status_t st = TPB_OK;
    tpb_stamp(TPB_PHASE_CALIBRATE);
    if (!(dur = malloc((size_t)p->max_samples * sizeof(*dur))))
        st = tpb_err_set(TPB_ERR_NOMEM, "calibration: no memory for %d samples", p->max_samples);
    TPB_CHECK_GOTO(st, st, agree);
    size_t ba, bb, bc;
    double avail = 0.0;
    if (st == TPB_OK && !(tpb_size_mul3(m, k, in, &ba) && tpb_size_mul3(k, n, in, &bb) &&
                          tpb_size_mul3(m, n, outsz, &bc)))
        st = tpb_err_set(TPB_ERR_NOMEM, "calibration GEMM %ldx%ldx%ld: size overflows", m, n, k);
    if (st == TPB_OK)
        st = tpb_dev_mem_free(dev, &avail);
    if (st == TPB_OK) {
        char what[96];
        int rank = 0;
        MPI_Comm_rank(comm, &rank);
        snprintf(what, sizeof(what), "calibration GEMM %ldx%ldx%ld", m, n, k);
        st = tpb_mem_check((double)ba + (double)bb + (double)bc, avail, rank, what, "");
    }
    TPB_CHECK_GOTO(st, st, agree);
    TPB_CHECK_GOTO(tpb_dev_alloc(dev, ba, &a), st, agree);
    TPB_CHECK_GOTO(tpb_dev_alloc(dev, bb, &b), st, agree);
    TPB_CHECK_GOTO(tpb_dev_alloc(dev, bc, &c), st, agree);
    TPB_CHECK_GOTO(fill(dev, sh, a, b), st, agree);
    st = tpb_dev_marks_prepare(dev, 2 * TPB_CAL_BATCH);
agree:
    /* every rank enters the lock-step loop, or none does */
    TPB_CHECK_GOTO(tpb_agree(comm, st), st, done);
    tpb_gemm_t g = {.m = m,
                    .n = n,
                    .k = k,
                    .a = a,
                    .lda = k,
                    .b = b,
                    .ldb = k,
                    .c = c,
                    .ldc = n,
                    .dtype = sh->dtype,
                    .delay_us = 0.0};
    int ns = 0;
    TPB_CHECK_GOTO(sample(dev, comm, &g, p, dur, &ns), st, done);
    out->speed = 2.0 * m * n * k / (tpb_stats_median(dur, (size_t)ns) * 1e3);
    out->spread = rel_iqr(dur, (size_t)ns);
    out->samples = ns;
done:
    if (a)
        tpb_dev_free(dev, a);
    if (b)
        tpb_dev_free(dev, b);
    if (c)
        tpb_dev_free(dev, c);
    free(dur);
    return st;
}
