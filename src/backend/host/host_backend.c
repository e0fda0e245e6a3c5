/*
 * host_backend.c - the always-built backend: CPU BLAS for the GEMM, MPI for the
 * collectives, CLOCK_MONOTONIC for the marks. --emulate-speed f spins for
 * (1/f - 1) times the GEMM's own duration inside the compute phase.
 */
#include <cblas.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/backend.h"

struct tpb_backend {
    tpb_backend_args_t args;
    double *marks;
    size_t nmarks;
};

struct tpb_comm {
    MPI_Comm comm;
};

static int host_device_count(void)
{
    return 1; /* the CPU cores are always there */
}

static tpb_status_t host_check_dtype(tpb_dtype_t dt)
{
    if (dt == TPB_DTYPE_FP32 || dt == TPB_DTYPE_FP64)
        return TPB_OK;
    return tpb_err_set(TPB_ERR_INVALID,
                       "--dtype %s: the host backend supports fp32 and fp64 "
                       "(use --backend cuda for %s)",
                       tpb_dtype_name(dt), tpb_dtype_name(dt));
}

static tpb_status_t host_init(const tpb_backend_args_t *args, tpb_backend_t **be)
{
    tpb_backend_t *h = calloc(1, sizeof(*h));
    if (!h)
        return tpb_err_set(TPB_ERR_NOMEM, "host backend: out of memory");
    h->args = *args;
    *be = h;
    return TPB_OK;
}

static void host_finalize(tpb_backend_t *be)
{
    if (!be)
        return;
    free(be->marks);
    free(be);
}

static void cpu_model(char *out, size_t cap)
{
    snprintf(out, cap, "CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[256];
    while (fgets(line, sizeof(line), f)) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && colon) {
            colon += 2;
            colon[strcspn(colon, "\n")] = '\0';
            snprintf(out, cap, "%s", colon);
            break;
        }
    }
    fclose(f);
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

static void host_info(tpb_backend_t *be, tpb_device_info_t *info)
{
    memset(info, 0, sizeof(*info));
    cpu_model(info->name, sizeof(info->name));
    info->index = -1;
    info->sm_count = openblas_get_num_threads();
    info->sm_total = (int)sysconf(_SC_NPROCESSORS_ONLN);
    info->mem_bytes = meminfo_bytes("MemTotal");
    snprintf(info->emulation, sizeof(info->emulation), "%s",
             be->args.emulate_factor != 1.0 ? "spin-throttle" : "none");
    snprintf(info->versions, sizeof(info->versions), "%s", openblas_get_config());
}

static tpb_status_t host_mem_free(tpb_backend_t *be, double *bytes)
{
    double avail = meminfo_bytes("MemAvailable");
    *bytes = avail / (be->args.local_size > 0 ? be->args.local_size : 1);
    return TPB_OK;
}

static tpb_status_t host_alloc(tpb_backend_t *be, size_t bytes, void **ptr)
{
    void *p = calloc(1, bytes ? bytes : 1);
    if (!p)
        return tpb_err_set(TPB_ERR_NOMEM, "host allocation of %zu bytes failed", bytes);
    *ptr = p;
    return TPB_OK;
}

static void host_free(tpb_backend_t *be, void *ptr)
{
    free(ptr);
}

static tpb_status_t host_copy(tpb_backend_t *be, void *dst, const void *src, size_t bytes,
                              tpb_copy_dir_t dir)
{
    memmove(dst, src, bytes);
    return TPB_OK;
}

static tpb_status_t host_gemm(tpb_backend_t *be, const tpb_gemm_t *g)
{
    double f = be->args.emulate_factor;
    double t0 = f < 1.0 ? tpb_clock_now_us(NULL) : 0.0;
    if (g->dtype == TPB_DTYPE_FP64)
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)g->m, (int)g->n, (int)g->k, 1.0,
                    g->a, (int)g->lda, g->b, (int)g->ldb, 0.0, g->c, (int)g->ldc);
    else if (g->dtype == TPB_DTYPE_FP32)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)g->m, (int)g->n, (int)g->k, 1.0f,
                    g->a, (int)g->lda, g->b, (int)g->ldb, 0.0f, g->c, (int)g->ldc);
    else
        return tpb_err_set(TPB_ERR_UNSUPPORTED, "host backend: dtype %s is not supported",
                           tpb_dtype_name(g->dtype));
    if (f < 1.0)
        tpb_spin_us((tpb_clock_now_us(NULL) - t0) * (1.0 / f - 1.0));
    tpb_stall_us(g->delay_us);
    return TPB_OK;
}

static tpb_status_t host_comm_open(tpb_backend_t *be, MPI_Comm group, tpb_comm_t **comm)
{
    tpb_comm_t *c = calloc(1, sizeof(*c));
    if (!c)
        return tpb_err_set(TPB_ERR_NOMEM, "host backend: out of memory");
    if (MPI_Comm_dup(group, &c->comm) != MPI_SUCCESS) {
        free(c);
        return tpb_err_call(TPB_ERR_MPI, "MPI_Comm_dup", "TP group", __FILE__, __LINE__);
    }
    *comm = c;
    return TPB_OK;
}

static void host_comm_close(tpb_comm_t *comm)
{
    if (!comm)
        return;
    MPI_Comm_free(&comm->comm);
    free(comm);
}

static MPI_Datatype mpi_type(tpb_dtype_t dt)
{
    return dt == TPB_DTYPE_FP64 ? MPI_DOUBLE : MPI_FLOAT;
}

static tpb_status_t host_allreduce(tpb_comm_t *comm, const void *send, void *recv, size_t count,
                                   tpb_dtype_t dt)
{
    if (count > INT_MAX)
        return tpb_err_set(TPB_ERR_UNSUPPORTED, "all-reduce of %zu elements: at most %d", count,
                           INT_MAX);
    int rc = MPI_Allreduce(send, recv, (int)count, mpi_type(dt), MPI_SUM, comm->comm);
    if (rc != MPI_SUCCESS)
        return tpb_err_call(TPB_ERR_MPI, "MPI_Allreduce", "TP group", __FILE__, __LINE__);
    return TPB_OK;
}

static tpb_status_t host_allgatherv(tpb_comm_t *comm, const void *send, void *recv,
                                    const size_t *counts, const size_t *displs, tpb_dtype_t dt)
{
    int size, rank;
    MPI_Comm_size(comm->comm, &size);
    MPI_Comm_rank(comm->comm, &rank);
    int ic[size], id[size];
    for (int r = 0; r < size; r++) {
        if (counts[r] > INT_MAX || displs[r] > INT_MAX)
            return tpb_err_set(TPB_ERR_UNSUPPORTED, "all-gather block of %zu elements: at most %d",
                               counts[r], INT_MAX);
        ic[r] = (int)counts[r];
        id[r] = (int)displs[r];
    }
    int rc = MPI_Allgatherv(send, ic[rank], mpi_type(dt), recv, ic, id, mpi_type(dt), comm->comm);
    if (rc != MPI_SUCCESS)
        return tpb_err_call(TPB_ERR_MPI, "MPI_Allgatherv", "TP group", __FILE__, __LINE__);
    return TPB_OK;
}

static tpb_status_t host_marks_prepare(tpb_backend_t *be, size_t n)
{
    if (n <= be->nmarks)
        return TPB_OK;
    double *m = realloc(be->marks, n * sizeof(*m));
    if (!m)
        return tpb_err_set(TPB_ERR_NOMEM, "host backend: no memory for %zu marks", n);
    be->marks = m;
    be->nmarks = n;
    return TPB_OK;
}

static tpb_status_t host_mark(tpb_backend_t *be, size_t slot)
{
    be->marks[slot] = tpb_clock_now_us(be->args.clock);
    return TPB_OK;
}

static tpb_status_t host_marks_read(tpb_backend_t *be, size_t n, double *us)
{
    memcpy(us, be->marks, n * sizeof(*us));
    return TPB_OK;
}

static tpb_status_t host_sync(tpb_backend_t *be)
{
    return TPB_OK;
}

const tpb_backend_ops_t tpb_backend_host = {
    .name = "host",
    .kind = TPB_BACKEND_HOST,
    .built = 1,
    .defaults = {.granularity = 1, .dtype = TPB_DTYPE_FP32, .m = 1024, .n = 1024, .k = 1024},
    .device_count = host_device_count,
    .check_dtype = host_check_dtype,
    .init = host_init,
    .finalize = host_finalize,
    .info = host_info,
    .mem_free = host_mem_free,
    .alloc = host_alloc,
    .free = host_free,
    .copy = host_copy,
    .gemm = host_gemm,
    .comm_open = host_comm_open,
    .comm_close = host_comm_close,
    .allreduce = host_allreduce,
    .allgatherv = host_allgatherv,
    .marks_prepare = host_marks_prepare,
    .mark = host_mark,
    .marks_read = host_marks_read,
    .sync = host_sync,
};
