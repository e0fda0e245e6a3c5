/*
 * host_backend.c - the always-built backend: CPU BLAS for the GEMM, MPI for the
 * collectives (the blocking calls, or with --collectives nonblocking the
 * non-blocking ones polled; both under the --timeout watchdog of mpi_watch.h),
 * CLOCK_MONOTONIC for the marks. --emulate-speed f spins for
 * (1/f - 1) times the GEMM's own duration inside the compute phase
 * (--emulate-mode time), or repeats the GEMM for 1/f of its work (work).
 */
#include <cblas.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/backend.h"
#include "backend/bind.h"
#include "backend/host/host_clock.h"
#include "backend/host/host_peak.h"
#include "base/metrics.h"
#include "base/partition.h"
#include "base/stamp.h"
#include "backend/host/host_internal.h"

static int host_device_count(void)
{
    return 1; /* the CPU cores are always there */
}

static tpb_status_t host_check_config(const tpb_backend_cfg_t *cfg)
{
    tpb_dtype_t dt = cfg->dtype;
    if (cfg->bind == TPB_BIND_GPU)
        return tpb_err_set(TPB_ERR_INVALID, "--bind gpu: the host backend has no GPU: use "
                                            "--bind core or numa, or a GPU backend");
    if (dt == TPB_DTYPE_FP32 || dt == TPB_DTYPE_FP64)
        return TPB_OK;
    return tpb_err_set(TPB_ERR_INVALID,
                       "--dtype %s: the host backend supports fp32 and fp64 "
                       "(use a GPU backend for %s)",
                       tpb_dtype_name(dt), tpb_dtype_name(dt));
}

/* MPI's collectives, blocks of any size (its --comm is MPI whatever the flag says; its
 * dtypes are check_config's). */
static const tpb_backend_cap_t host_caps[] = {
    {TPB_COLL_ALLREDUCE, TPB_CAP_COMMS_ALL, TPB_CAP_DTYPES_ALL, 1, "MPI_Allreduce"},
    {TPB_COLL_ALLGATHER, TPB_CAP_COMMS_ALL, TPB_CAP_DTYPES_ALL, 1, "MPI_Allgatherv"},
    {TPB_COLL_REDUCE_SCATTER, TPB_CAP_COMMS_ALL, TPB_CAP_DTYPES_ALL, 1, "MPI_Reduce_scatter"},
};

static const tpb_device_ops_t host_device_ops;

/* BLAS threads: --threads, else the variable OpenBLAS reads, else the rank's share of
 * its cores (2 ranks allowed on the same 2 cores: 1 each, not OpenBLAS's 2 each). */
static void set_threads(tpb_host_t *h)
{
    const char *env[3] = {getenv("OPENBLAS_NUM_THREADS"), getenv("GOTO_NUM_THREADS"),
                          getenv("OMP_NUM_THREADS")};
    h->threads = tpb_threads_choose(h->args.cfg.threads, env, h->share.threads);
    openblas_set_num_threads(h->threads.threads);
    h->threads.threads = openblas_get_num_threads(); /* what OpenBLAS took (its MAX_THREADS) */
}

static tpb_status_t host_open(const tpb_backend_args_t *args, tpb_device_t **dev)
{
    /* the watchdog's start, the share of cores and the agreement are collective over the
     * world: every rank calls each, whatever failed before on some ranks only (binding);
     * a rank that failed ends its watchdog's thread before MPI ends (its slots go then) */
    tpb_status_t st = tpb_watchdog_start(args->world, args->cfg.timeout_s);
    tpb_status_t bound = tpb_bind_apply(args->cfg.bind, args->local_rank, args->local_size);
    tpb_core_share_t share;
    tpb_status_t shared = tpb_bind_share(args->world, &share);
    st = st != TPB_OK ? st : bound != TPB_OK ? bound : shared;
    tpb_host_t *h = st == TPB_OK ? calloc(1, sizeof(*h)) : NULL;
    if (st == TPB_OK && !h)
        st = tpb_err_set(TPB_ERR_NOMEM, "host backend: out of memory");
    st = tpb_backend_agree(args->world, st);
    if (st != TPB_OK) {
        tpb_watchdog_stop();
        free(h);
        return st;
    }
    h->base.ops = &host_device_ops;
    h->args = *args;
    h->share = share;
    set_threads(h);
    *dev = &h->base;
    return TPB_OK;
}

static void host_finalize(tpb_device_t *dev)
{
    tpb_host_t *h = (tpb_host_t *)dev;
    tpb_stamp(TPB_PHASE_CLOSE);
    tpb_watchdog_stop();
    free(h->marks);
    free(h);
}

/* The CPU's model name, SIMD flags and clock from /proc/cpuinfo (and cpufreq), or the
 * measured clock where it boosts past a nominal one. */
static void cpu_facts(char *model, size_t cap, tpb_cpu_t *cpu)
{
    snprintf(model, cap, "CPU");
    memset(cpu, 0, sizeof(*cpu));
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[4096];
    int have_model = 0, have_flags = 0;
    while (f && fgets(line, sizeof(line), f) && !(have_model && have_flags && cpu->ghz > 0)) {
        char *colon = strchr(line, ':');
        if (!colon)
            continue;
        char *val = colon + 1 + (colon[1] == ' ');
        val[strcspn(val, "\n")] = '\0';
        if (!have_model && strncmp(line, "model name", 10) == 0) {
            snprintf(model, cap, "%s", val);
            have_model = 1;
            const char *at = strstr(val, "@ ");
            if (at && cpu->ghz == 0)
                cpu->ghz = atof(at + 2);
        } else if (!have_flags && strncmp(line, "flags", 5) == 0) {
            tpb_cpu_parse_flags(val, cpu);
            have_flags = 1;
        } else if (cpu->ghz == 0 && strncmp(line, "cpu MHz", 7) == 0) {
            cpu->ghz = atof(val) / 1000.0;
        }
    }
    if (f)
        fclose(f);
    cpu->ghz_from = "nominal";
    FILE *mx = fopen("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", "r");
    double khz = 0;
    if (mx && fscanf(mx, "%lf", &khz) == 1 && khz > 0) {
        cpu->ghz = khz / 1e6;
        cpu->ghz_from = "max";
    }
    if (mx)
        fclose(mx);
    double run = tpb_cpu_measure_ghz();
    if (cpu->ghz_from[0] == 'n' && run > cpu->ghz) { /* boosts past the nominal clock */
        cpu->ghz = run;
        cpu->ghz_from = "measured";
    }
}

/* --dry-run's rate: half the peak of one core (a rank's share where the quickstart binds a
 * rank to a core; OpenBLAS reaches 50-90 % of the peak on large shapes). */
/* Measured: this rank's BLAS as it runs here (its kernel, its threads: OpenBLAS may run far
 * below the core's peak, see its advice), on a 768^3 GEMM of the dtype, the median of 3 after
 * a warm-up (0.1 to 0.3 s); the core's half peak where it cannot be measured. */
static double host_rate_guess(const tpb_backend_cfg_t *cfg, char *basis, size_t cap)
{
    char model[128], how[96];
    tpb_cpu_t cpu;
    cpu_facts(model, sizeof(model), &cpu);
    double rate = tpb_host_gemm_gflops(cfg->dtype, 768, 3);
    if (rate > 0.0) {
        snprintf(basis, cap, "measured: a 768x768x768 %s GEMM on every rank, OpenBLAS core %s",
                 tpb_dtype_name(cfg->dtype), openblas_get_corename());
        return rate;
    }
    double peak = tpb_cpu_peak_gflops(&cpu, 1.0, cfg->dtype, how, sizeof(how));
    snprintf(basis, cap, "half the peak of one core of this %s, %s", model, how);
    return peak > 0.0 ? 0.5 * peak : NAN;
}

static double meminfo_bytes(const char *key)
{
    FILE *f = fopen("/proc/meminfo", "r");
    double kb = 0;
    char line[256];
    size_t klen = strlen(key);
    while (f && fgets(line, sizeof(line), f))
        if (strncmp(line, key, klen) == 0 && line[klen] == ':')
            kb = atof(line + klen + 1);
    if (f)
        fclose(f);
    return kb * 1024.0;
}

static void host_info(tpb_device_t *dev, tpb_device_info_t *info)
{
    tpb_host_t *h = (tpb_host_t *)dev;
    tpb_cpu_t cpu;
    memset(info, 0, sizeof(*info));
    cpu_facts(info->name, sizeof(info->name), &cpu);
    info->index = -1;
    info->gpu_numa = -1;
    info->sm_count = openblas_get_num_threads();
    info->sm_total = (int)sysconf(_SC_NPROCESSORS_ONLN);
    info->threads = info->sm_count;
    snprintf(info->threads_from, sizeof(info->threads_from), "%s", h->threads.from);
    info->cores_share = h->share.share;
    info->sharing = h->share.sharing;
    info->ranks_on_device = 1;
    info->mem_bytes = meminfo_bytes("MemTotal");
    snprintf(info->emulation, sizeof(info->emulation), "%s",
             h->args.emulate_factor == 1.0                  ? "none"
             : h->args.cfg.emulate_mode == TPB_EMULATE_WORK ? "repeat-work"
                                                            : "spin-throttle");
    snprintf(info->versions, sizeof(info->versions), "%s", openblas_get_config());
    /* the peak of the cores it really uses: its threads, at most its share */
    info->peak_gflops =
        tpb_cpu_peak_gflops(&cpu, tpb_cores_used(&h->share, info->threads), h->args.cfg.dtype,
                            info->peak_basis, sizeof(info->peak_basis));
    tpb_openblas_advice(&cpu, openblas_get_corename(), info->advice, sizeof(info->advice));
    tpb_bind_report(info);
    tpb_threads_note(&h->share, &h->threads, info->cpuset, info->threads_note,
                     sizeof(info->threads_note));
}

/* A rank's share of the node's available memory. */
static double host_mem_guess(int local_size)
{
    return meminfo_bytes("MemAvailable") / (local_size > 0 ? local_size : 1);
}

static tpb_status_t host_mem_free(tpb_device_t *dev, double *bytes)
{
    *bytes = host_mem_guess(((tpb_host_t *)dev)->args.local_size);
    return TPB_OK;
}

/* Large allocations all start at one offset within a 4 KiB page (malloc maps them), and
 * an all-reduce that sums one buffer into another at the same page offset (or into
 * MPI's own temporary buffer, also at that offset) hits 4K aliasing: measured here, a
 * blocking 1 MiB MPI_Allreduce took 500 us between two such buffers and 151 us with
 * them offset (bench/comm). Each buffer starts at the next of 15 offsets 256 bytes
 * apart within its page, none of them malloc's own, with the malloc'd base in front. */
#define ALLOC_COLORS 15
#define ALLOC_STEP 256

static tpb_status_t host_alloc(tpb_device_t *dev, size_t bytes, void **ptr)
{
    tpb_host_t *h = (tpb_host_t *)dev;
    size_t pad = (size_t)(1 + h->color++ % ALLOC_COLORS) * ALLOC_STEP + 64;
    if (bytes > SIZE_MAX - pad)
        return tpb_err_set(TPB_ERR_NOMEM, "host allocation of %zu bytes failed", bytes);
    char *base = calloc(1, bytes + pad);
    if (!base)
        return tpb_err_set(TPB_ERR_NOMEM, "host allocation of %zu bytes failed", bytes);
    char *p = base + pad;
    memcpy(p - sizeof(base), &base, sizeof(base));
    *ptr = p;
    return TPB_OK;
}

static void host_free(tpb_device_t *dev, void *ptr)
{
    char *base;
    memcpy(&base, (char *)ptr - sizeof(base), sizeof(base));
    free(base);
}

static tpb_status_t host_copy(tpb_device_t *dev, void *dst, const void *src, size_t bytes,
                              tpb_copy_dir_t dir)
{
    memmove(dst, src, bytes);
    return TPB_OK;
}

/* One BLAS call: C = A B^T over the first n columns. */
static tpb_status_t blas_gemm(const tpb_gemm_t *g, long n)
{
    if (g->dtype == TPB_DTYPE_FP64)
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)g->m, (int)n, (int)g->k, 1.0,
                    g->a, (int)g->lda, g->b, (int)g->ldb, g->accumulate ? 1.0 : 0.0, g->c,
                    (int)g->ldc);
    else if (g->dtype == TPB_DTYPE_FP32)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)g->m, (int)n, (int)g->k, 1.0f,
                    g->a, (int)g->lda, g->b, (int)g->ldb, g->accumulate ? 1.0f : 0.0f, g->c,
                    (int)g->ldc);
    else
        return tpb_err_set(TPB_ERR_UNSUPPORTED, "host backend: dtype %s is not supported",
                           tpb_dtype_name(g->dtype));
    return TPB_OK;
}

/* The GEMM slowed down to factor f: spun out in time, or repeated as more work. */
static tpb_status_t emulated_gemm(tpb_host_t *h, const tpb_gemm_t *g, double f)
{
    if (f >= 1.0)
        return blas_gemm(g, g->n);
    if (h->args.cfg.emulate_mode == TPB_EMULATE_WORK) {
        if (g->accumulate) /* a repeat would add the product again */
            return tpb_err_set(TPB_ERR_UNSUPPORTED,
                               "--emulate-mode work repeats GEMMs, which a block-sparse row "
                               "shard accumulates: use --emulate-mode time with --cost-profile");
        int full;
        long extra;
        tpb_repeat_plan(f, g->n, &full, &extra);
        for (int i = 0; i < full; i++)
            TPB_CHECK_RET(blas_gemm(g, g->n)); /* the same result each time */
        return extra > 0 ? blas_gemm(g, extra) : TPB_OK;
    }
    double t0 = tpb_clock_now_us(NULL);
    TPB_CHECK_RET(blas_gemm(g, g->n));
    tpb_spin_us((tpb_clock_now_us(NULL) - t0) * (1.0 / f - 1.0));
    return TPB_OK;
}

static tpb_status_t host_gemm(tpb_device_t *dev, const tpb_gemm_t *g)
{
    tpb_host_t *h = (tpb_host_t *)dev;
    TPB_CHECK_RET(emulated_gemm(h, g, h->args.emulate_factor));
    tpb_stall_us(g->delay_us);
    return TPB_OK;
}

static tpb_status_t host_set_emulation(tpb_device_t *dev, double factor)
{
    tpb_host_t *h = (tpb_host_t *)dev;
    h->args.emulate_factor = factor;
    return TPB_OK;
}

/* Time of one GEMM at factor f (microseconds). */
static tpb_status_t time_gemm(tpb_host_t *h, const tpb_gemm_t *g, double f, double *us)
{
    double t0 = tpb_clock_now_us(NULL);
    TPB_CHECK_RET(emulated_gemm(h, g, f));
    *us = tpb_clock_now_us(NULL) - t0;
    return TPB_OK;
}

/* Pairs of (plain, emulated) GEMMs back to back, so that a slow moment of the machine hits
 * both halves of a pair alike; the median of the pairs' ratios. */
static tpb_status_t host_emulation_probe(tpb_device_t *dev, const tpb_gemm_t *g, double *achieved)
{
    tpb_host_t *h = (tpb_host_t *)dev;
    double f = h->args.emulate_factor, ratio[7];
    if (f >= 1.0) {
        *achieved = 1.0;
        return TPB_OK;
    }
    for (int i = 0; i < 7; i++) { /* the order alternates: no half always runs first */
        double ref, emu;
        TPB_CHECK_RET(time_gemm(h, g, i % 2 ? f : 1.0, i % 2 ? &emu : &ref));
        TPB_CHECK_RET(time_gemm(h, g, i % 2 ? 1.0 : f, i % 2 ? &ref : &emu));
        ratio[i] = emu > 0 ? ref / emu : 1.0;
    }
    *achieved = tpb_stats_median(ratio, 7);
    return TPB_OK;
}

static tpb_status_t host_marks_prepare(tpb_device_t *dev, size_t n)
{
    tpb_host_t *h = (tpb_host_t *)dev;
    if (n <= h->nmarks)
        return TPB_OK;
    double *m = realloc(h->marks, n * sizeof(*m));
    if (!m)
        return tpb_err_set(TPB_ERR_NOMEM, "host backend: no memory for %zu marks", n);
    h->marks = m;
    h->nmarks = n;
    return TPB_OK;
}

static tpb_status_t host_mark(tpb_device_t *dev, size_t slot, tpb_mark_phase_t phase)
{
    tpb_host_t *h = (tpb_host_t *)dev;
    h->marks[slot] = tpb_clock_now_us(h->args.clock);
    return TPB_OK;
}

static tpb_status_t host_marks_read(tpb_device_t *dev, size_t n, double *us)
{
    tpb_host_t *h = (tpb_host_t *)dev;
    memcpy(us, h->marks, n * sizeof(*us));
    return TPB_OK;
}

static tpb_status_t host_sync(tpb_device_t *dev)
{
    return TPB_OK;
}

static const tpb_device_ops_t host_device_ops = {
    .close = host_finalize,
    .info = host_info,
    .mem_free = host_mem_free,
    .alloc = host_alloc,
    .free = host_free,
    .copy = host_copy,
    .gemm = host_gemm,
    .set_emulation = host_set_emulation,
    .emulation_probe = host_emulation_probe,
    .marks_prepare = host_marks_prepare,
    .mark = host_mark,
    .marks_read = host_marks_read,
    .sync = host_sync,
    .comm_open = tpb_host_comm_open,
};

const tpb_backend_class_t tpb_backend_host = {
    .name = "host",
    .about = "CPU cores: BLAS GEMMs, MPI collectives",
    .dtypes = "fp32 | fp64",
    .built = 1,
    .defaults = {.granularity = 1,
                 .dtype = TPB_DTYPE_FP32,
                 .m = 1024,
                 .n = 1024,
                 .k = 1024,
                 .busbw_gbs = 2.0, /* MPI over shared memory on one node (doc/METRICS.md) */
                 .alpha_us = 30.0,
                 .overlap_polls = 1}, /* bench/overlap: more pieces cost more than they hide */
    .device_count = host_device_count,
    .check_config = host_check_config,
    .caps = host_caps,
    .ncaps = (int)(sizeof(host_caps) / sizeof(host_caps[0])),
    .rate_guess = host_rate_guess,
    .mem_guess = host_mem_guess,
    .open = host_open,
};
