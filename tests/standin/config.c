/*
 * config.c - the stand-in's switches (read once from the environment; README.md lists
 * them), its one way of reporting a misuse of the API, and the device timer.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <driver_types.h>

#include "standin.h"

static tpbsi_config_t cfg;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static long complaints;

static void bad(const char *name, const char *value, const char *want)
{
    fprintf(stderr, "tpbal-standin: %s=%s: %s\n", name, value, want);
    exit(2);
}

static double number(const char *name, double def, double lo, double hi)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return def;
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (errno || *end || !(x >= lo && x <= hi)) {
        char want[96];
        snprintf(want, sizeof(want), "expected a number in [%g, %g]", lo, hi);
        bad(name, v, want);
    }
    return x;
}

/* A count of bytes: digits with an optional K, M or G (binary). */
static size_t bytes(const char *name, size_t def)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return def;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    int shift = *end == 'K' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : 0;
    if (shift)
        end++;
    if (errno || *end || x == 0 || x > (1ull << 40) >> shift)
        bad(name, v, "expected bytes, e.g. 4G, 512M or 65536");
    return (size_t)(x << shift);
}

/* The first of the launcher's variables that is set (a rank or a node's rank count). */
static int launcher_int(const char *const *names, int def)
{
    for (int i = 0; names[i]; i++) {
        const char *v = getenv(names[i]);
        if (v && *v >= '0' && *v <= '9')
            return atoi(v); /* "2(x3)" of SLURM_STEP_TASKS_PER_NODE reads as 2 */
    }
    return def;
}

static void speeds(void)
{
    for (int d = 0; d < TPBSI_MAX_DEVICES; d++)
        cfg.speed[d] = 1.0;
    const char *v = getenv("TPBAL_STANDIN_SPEEDS");
    if (!v || !*v)
        return;
    const char *p = v;
    for (int d = 0; d < TPBSI_MAX_DEVICES && *p; d++) {
        char *end;
        double s = strtod(p, &end);
        if (end == p || !(s > 0.0 && s <= 1000.0) || (*end && *end != ','))
            bad("TPBAL_STANDIN_SPEEDS", v, "expected factors > 0 by device, e.g. 1,0.5");
        cfg.speed[d] = s;
        p = *end ? end + 1 : end;
    }
}

static void compute_mode(void)
{
    const char *v = getenv("TPBAL_STANDIN_COMPUTE_MODE");
    cfg.compute_mode = cudaComputeModeDefault;
    if (!v || !*v || strcmp(v, "default") == 0)
        return;
    if (strcmp(v, "exclusive") == 0 || strcmp(v, "exclusive-process") == 0)
        cfg.compute_mode = cudaComputeModeExclusiveProcess;
    else if (strcmp(v, "prohibited") == 0)
        cfg.compute_mode = cudaComputeModeProhibited;
    else
        bad("TPBAL_STANDIN_COMPUTE_MODE", v, "expected default, exclusive or prohibited");
}

/* The Nth call of something, 0 for never; "all" (-1) where every call is meant. */
static long nth(const char *name, int all_ok)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return 0;
    if (all_ok && strcmp(v, "all") == 0)
        return -1;
    char *end;
    long n = strtol(v, &end, 10);
    if (*end || n < 1)
        bad(name, v, all_ok ? "expected N >= 1 (the Nth call) or all" : "expected N >= 1");
    return n;
}

static void load(void)
{
    static const char *const local[] = {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS",
                                        "SLURM_STEP_TASKS_PER_NODE", NULL};
    static const char *const rank[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK",
                                       "SLURM_PROCID", NULL};
    cfg.ndev = (int)number("TPBAL_STANDIN_DEVICES", launcher_int(local, 1), 0, TPBSI_MAX_DEVICES);
    if (cfg.ndev > TPBSI_MAX_DEVICES)
        cfg.ndev = TPBSI_MAX_DEVICES;
    cfg.gflops = number("TPBAL_STANDIN_GFLOPS", 4.0, 1e-3, 1e9);
    cfg.alpha_us = number("TPBAL_STANDIN_ALPHA_US", 200.0, 0.0, 1e7);
    cfg.gbs = number("TPBAL_STANDIN_GBS", 0.5, 1e-3, 1e6);
    speeds();
    cfg.mem_bytes = bytes("TPBAL_STANDIN_MEM", (size_t)4 << 30);
    compute_mode();
    cfg.green = (int)number("TPBAL_STANDIN_GREEN", 1, 0, 1);
    cfg.wait_value = (int)number("TPBAL_STANDIN_WAIT_VALUE", 1, 0, 1);
    int fr = (int)number("TPBAL_STANDIN_FAULT_RANK", -1, -1, 1 << 30);
    cfg.faulty = fr < 0 || launcher_int(rank, 0) == fr;
    cfg.fail_malloc = nth("TPBAL_STANDIN_FAIL_MALLOC", 0);
    cfg.busy = (int)number("TPBAL_STANDIN_BUSY", 0, 0, 1);
    cfg.nccl_error = nth("TPBAL_STANDIN_NCCL_ERROR", 0);
    cfg.nccl_hang = nth("TPBAL_STANDIN_NCCL_HANG", 0);
    cfg.nccl_stall = nth("TPBAL_STANDIN_NCCL_STALL", 0);
    cfg.nccl_corrupt = nth("TPBAL_STANDIN_NCCL_CORRUPT", 1);
    cfg.no_algo = nth("TPBAL_STANDIN_NO_ALGO", 1);
    cfg.heuristic_stall = nth("TPBAL_STANDIN_HEURISTIC_STALL", 0);
    cfg.no_math = (int)number("TPBAL_STANDIN_NO_MATH", 0, 0, 1);
    cfg.copy_gbs = number("TPBAL_STANDIN_COPY_GBS", 25.0, 1e-3, 1e6);
    cfg.record_lag_us = number("TPBAL_STANDIN_RECORD_LAG_US", 0.0, 0.0, 1e6);
    cfg.alternate = number("TPBAL_STANDIN_ALTERNATE", 1.0, 1.0, 100.0);
    cfg.preempt_us = number("TPBAL_STANDIN_PREEMPT_US", 0.0, 0.0, 1e7);
    cfg.preempt_every = (long)number("TPBAL_STANDIN_PREEMPT_EVERY", 3, 1, 1e9);
    cfg.sync_stall = nth("TPBAL_STANDIN_SYNC_STALL", 0);
    cfg.nccl_in_progress = (int)number("TPBAL_STANDIN_NCCL_INPROGRESS", 0, 0, 1);
    cfg.dir = getenv("TPBAL_STANDIN_DIR");
    cfg.run = getenv("TPBAL_STANDIN_RUN");
    if (!cfg.run || !*cfg.run)
        cfg.run = "x";
    if (strchr(cfg.run, '/') || strlen(cfg.run) > 40)
        bad("TPBAL_STANDIN_RUN", cfg.run, "expected a short name without '/'");
}

const tpbsi_config_t *tpbsi_config(void)
{
    pthread_once(&once, load);
    return &cfg;
}

void tpbsi_complain(const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    __atomic_add_fetch(&complaints, 1, __ATOMIC_SEQ_CST);
    fprintf(stderr, "tpbal-standin: %s\n", line);
}

long tpbsi_complaints(void)
{
    return __atomic_load_n(&complaints, __ATOMIC_SEQ_CST);
}

static long counters[TPBSI_N_COUNTERS];

void tpbsi_count(tpbsi_counter_t c, long n)
{
    __atomic_add_fetch(&counters[c], n, __ATOMIC_SEQ_CST);
}

/* TPBAL_STANDIN_STATS=DIR: this process's counts in DIR/stats.PID, a new file. */
__attribute__((destructor)) static void write_stats(void)
{
    static const char *const names[TPBSI_N_COUNTERS] = {
        "malloc",       "heuristic",    "matmul",      "collective", "comms",
        "gemm_overrun", "coll_overrun", "sm_targeted", "late_record"};
    const char *dir = getenv("TPBAL_STANDIN_STATS");
    if (!dir || !*dir)
        return;
    char path[4096];
    snprintf(path, sizeof(path), "%s/stats.%d", dir, (int)getpid());
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    for (int i = 0; i < TPBSI_N_COUNTERS; i++)
        dprintf(fd, "%s %ld\n", names[i], __atomic_load_n(&counters[i], __ATOMIC_SEQ_CST));
    dprintf(fd, "complaints %ld\n", tpbsi_complaints());
    close(fd);
}

double tpbsi_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

void tpbsi_sleep_until(double t_us)
{
    struct timespec ts;
    ts.tv_sec = (time_t)(t_us / 1e6);
    ts.tv_nsec = (long)((t_us - (double)ts.tv_sec * 1e6) * 1e3);
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}
