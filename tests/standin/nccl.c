/*
 * nccl.c - the stand-in's NCCL API (NCCL User Guide: "Creating a Communicator", "Group
 * Calls", "Fault Tolerance", "Communicator Configuration"): unique ids, blocking and
 * non-blocking initialisation (a non-blocking call returns ncclInProgress and
 * ncclCommGetAsyncError says ncclInProgress until it is done; calling again before that is
 * invalid usage), collectives queued on a stream (coll.c runs them), group calls (one
 * stream operation per communicator), asynchronous errors, finalize, destroy and abort.
 * Buffers must be device memory of the communicator's device, large enough for what the
 * count and data type say.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "nc.h"

#define COMM_MAGIC 0x4e43434cu
#define SHM_MAGIC 0x74707368u

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static char last_error[512];
static long operations; /* this process's collective operations, for the planted faults */
static struct ncclComm *live[256];
static int nlive;

typedef struct {
    struct ncclComm *comm;
    tpbsi_stream_t *stream;
    nc_sub_t sub;
} pending_t;

static __thread int group_depth;
static __thread ncclResult_t group_error;
static __thread pending_t group_ops[4 * TPBSI_MAX_GROUP];
static __thread int group_n;

void tpbsi_nc_fail(struct ncclComm *comm, const char *fmt, ...)
{
    char line[480];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&mu);
    snprintf(last_error, sizeof(last_error), "%s", line);
    pthread_mutex_unlock(&mu);
    tpbsi_complain("%s", line);
}

static int valid(ncclComm_t c)
{
    pthread_mutex_lock(&mu);
    int ok = 0;
    for (int i = 0; i < nlive && !ok; i++)
        ok = live[i] == c;
    pthread_mutex_unlock(&mu);
    return ok;
}

const char *ncclGetErrorString(ncclResult_t r)
{
    switch (r) { /* NCCL's own wording */
    case ncclSuccess: return "no error";
    case ncclUnhandledCudaError:
        return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case ncclSystemError: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case ncclInternalError:
        return "internal error - please report this issue to the NCCL developers";
    case ncclInvalidArgument: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case ncclInvalidUsage: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    case ncclRemoteError: return "remote process exited or there was a network error";
    case ncclInProgress: return "NCCL operation in progress";
    default: return "unknown result code";
    }
}

const char *ncclGetLastError(ncclComm_t comm)
{
    return last_error;
}

ncclResult_t ncclGetVersion(int *version)
{
    if (!version)
        return ncclInvalidArgument;
    *version = NCCL_VERSION_CODE;
    return ncclSuccess;
}

ncclResult_t ncclGetUniqueId(ncclUniqueId *id)
{
    static long made;
    if (!id)
        return ncclInvalidArgument;
    unsigned rnd = 0;
    if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
        rnd = (unsigned)time(NULL) ^ (unsigned)getpid();
    char name[64];
    snprintf(name, sizeof(name), "/tpbsi-%s-%d-%ld-%08x", tpbsi_config()->run, (int)getpid(),
             __atomic_add_fetch(&made, 1, __ATOMIC_SEQ_CST), rnd);
    int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR | O_NOFOLLOW, 0600);
    if (fd < 0) {
        tpbsi_nc_fail(NULL, "ncclGetUniqueId: shm_open %s: %s", name, strerror(errno));
        return ncclSystemError;
    }
    nc_shm_t *s = MAP_FAILED;
    if (ftruncate(fd, (off_t)TPBSI_SHM_SIZE) == 0)
        s = mmap(NULL, sizeof(nc_shm_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (s == MAP_FAILED) {
        shm_unlink(name);
        tpbsi_nc_fail(NULL, "ncclGetUniqueId: cannot size or map %s", name);
        return ncclSystemError;
    }
    s->magic = SHM_MAGIC;
    munmap(s, sizeof(nc_shm_t));
    memset(id, 0, sizeof(*id));
    snprintf(id->internal, sizeof(id->internal), "%s", name);
    return ncclSuccess;
}

/* Every rank joined: check that no two share a GPU (NCCL's "Duplicate GPU detected"), forget
 * the name. 1 when ready (or failed: then async is set), 0 while ranks are missing. */
static int complete(struct ncclComm *c)
{
    if (c->ready)
        return 1;
    if (atomic_load(&c->shm->joined) < c->nranks)
        return 0;
    for (int a = 0; a < c->nranks; a++) {
        for (int b = a + 1; b < c->nranks; b++) {
            if (strcmp(c->shm->rank[a].bus, c->shm->rank[b].bus) != 0)
                continue;
            tpbsi_nc_fail(c, "Duplicate GPU detected: rank %d and rank %d both on CUDA device %s",
                          a, b, c->shm->rank[a].bus);
            atomic_store(&c->async, ncclInvalidUsage);
        }
    }
    shm_unlink(c->name); /* everyone has it mapped; ENOENT once another rank did it */
    c->ready = 1;
    return 1;
}

static ncclResult_t join(struct ncclComm *c, const ncclUniqueId *id, int nranks, int rank)
{
    snprintf(c->name, sizeof(c->name), "%s", id->internal);
    int fd = c->name[0] == '/' ? shm_open(c->name, O_RDWR | O_NOFOLLOW, 0) : -1;
    if (fd < 0) {
        tpbsi_nc_fail(c,
                      "ncclCommInitRank: the unique id names no communicator of this node "
                      "(from ncclGetUniqueId of this run?): %.60s",
                      c->name);
        return ncclInvalidArgument;
    }
    void *m = mmap(NULL, TPBSI_SHM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return ncclSystemError;
    c->shm = m;
    int32_t zero = 0, none = 0;
    if (c->shm->magic != SHM_MAGIC)
        return ncclInvalidArgument;
    if (!atomic_compare_exchange_strong(&c->shm->nranks, &zero, nranks) && zero != nranks) {
        tpbsi_nc_fail(c, "ncclCommInitRank: rank %d says %d ranks, another rank said %d", rank,
                      nranks, (int)zero);
        return ncclInvalidArgument;
    }
    if (!atomic_compare_exchange_strong(&c->shm->claimed[rank], &none, 1)) {
        tpbsi_nc_fail(c, "ncclCommInitRank: rank %d of %d joined twice", rank, nranks);
        return ncclInvalidUsage;
    }
    nc_rank_t *me = &c->shm->rank[rank];
    me->pid = (int32_t)getpid();
    tpbsi_device_bus_id(c->device, me->bus, sizeof(me->bus));
    atomic_fetch_add(&c->shm->joined, 1);
    return ncclSuccess;
}

static void release(struct ncclComm *c)
{
    pthread_mutex_lock(&mu);
    for (int i = 0; i < nlive; i++) {
        if (live[i] == c) {
            live[i] = live[--nlive];
            break;
        }
    }
    pthread_mutex_unlock(&mu);
    if (c->shm)
        munmap(c->shm, TPBSI_SHM_SIZE);
    free(c);
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t *out, int nranks, ncclUniqueId id, int rank,
                                    ncclConfig_t *config)
{
    if (!out || nranks < 1 || nranks > TPBSI_MAX_RANKS || rank < 0 || rank >= nranks)
        return ncclInvalidArgument;
    if (config && (config->magic != 0xcafebeef || config->size != sizeof(ncclConfig_t))) {
        tpbsi_nc_fail(NULL, "ncclCommInitRankConfig: the config was not initialised with "
                            "NCCL_CONFIG_INITIALIZER");
        return ncclInvalidArgument;
    }
    if (cudaFree(NULL) != cudaSuccess)
        return ncclUnhandledCudaError;
    struct ncclComm *c = calloc(1, sizeof(*c));
    if (!c)
        return ncclSystemError;
    c->magic = COMM_MAGIC;
    c->rank = rank;
    c->nranks = nranks;
    c->device = tpbsi_current_device();
    c->blocking = !config || config->blocking == NCCL_CONFIG_UNDEF_INT || config->blocking != 0;
    ncclResult_t r = join(c, &id, nranks, rank);
    pthread_mutex_lock(&mu);
    int room = nlive < (int)(sizeof(live) / sizeof(live[0]));
    if (room && r == ncclSuccess)
        live[nlive++] = c;
    pthread_mutex_unlock(&mu);
    if (r != ncclSuccess || !room) {
        release(c);
        return r != ncclSuccess ? r : ncclSystemError;
    }
    *out = c;
    tpbsi_count(TPBSI_N_COMMS, 1);
    if (!c->blocking)
        return complete(c) ? ncclSuccess : ncclInProgress;
    double until = tpbsi_now_us() + 600e6; /* a blocking init that never completes: 10 min */
    while (!complete(c)) {
        struct timespec nap = {0, 100000};
        if (tpbsi_now_us() > until) {
            tpbsi_nc_fail(c, "ncclCommInitRank: %d of %d ranks joined in 10 minutes",
                          (int)atomic_load(&c->shm->joined), nranks);
            return ncclSystemError;
        }
        nanosleep(&nap, NULL);
    }
    return atomic_load(&c->async);
}

ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank)
{
    return ncclCommInitRankConfig(comm, nranks, id, rank, NULL);
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t c, ncclResult_t *err)
{
    if (!err || !valid(c))
        return ncclInvalidArgument;
    ncclResult_t a = atomic_load(&c->async);
    if (a != ncclSuccess)
        *err = a;
    else if (!complete(c))
        *err = ncclInProgress;
    else if ((a = atomic_load(&c->async)) != ncclSuccess)
        *err = a;
    else if (atomic_load(&c->finalizing))
        *err = atomic_load(&c->pending) ? ncclInProgress : ncclSuccess;
    else if (atomic_exchange(&c->in_progress, 0))
        *err = ncclInProgress; /* the call is done at the next query */
    else
        *err = ncclSuccess;
    return ncclSuccess;
}

static void wait_pending(struct ncclComm *c)
{
    struct timespec nap = {0, 100000};
    while (atomic_load(&c->pending) > 0)
        nanosleep(&nap, NULL);
}

ncclResult_t ncclCommFinalize(ncclComm_t c)
{
    if (!valid(c))
        return ncclInvalidArgument;
    atomic_store(&c->finalizing, 1);
    if (!c->blocking)
        return ncclInProgress;
    wait_pending(c);
    return atomic_load(&c->async);
}

ncclResult_t ncclCommDestroy(ncclComm_t c)
{
    if (!valid(c))
        return ncclInvalidArgument;
    wait_pending(c); /* a collective that never completes: it waits (abort instead) */
    release(c);
    return ncclSuccess;
}

ncclResult_t ncclCommAbort(ncclComm_t c)
{
    if (!valid(c))
        return ncclInvalidArgument;
    atomic_store(&c->abort, 1);
    tpbsi_progress_signal();
    wait_pending(c); /* the operations in flight end at once, the queued ones do nothing */
    release(c);
    return ncclSuccess;
}

ncclResult_t ncclCommCount(const ncclComm_t c, int *count)
{
    if (!count || !valid(c))
        return ncclInvalidArgument;
    *count = c->nranks;
    return ncclSuccess;
}

ncclResult_t ncclCommCuDevice(const ncclComm_t c, int *device)
{
    if (!device || !valid(c))
        return ncclInvalidArgument;
    *device = c->device;
    return ncclSuccess;
}

ncclResult_t ncclCommUserRank(const ncclComm_t c, int *rank)
{
    if (!rank || !valid(c))
        return ncclInvalidArgument;
    *rank = c->rank;
    return ncclSuccess;
}

/* ---- collectives ---- */

typedef struct {
    tpbsi_op_t op;
    struct ncclComm *comm;
    int n, plant;
    nc_sub_t subs[];
} coll_op_t;

static void coll_run(tpbsi_op_t *op, tpbsi_stream_t *s)
{
    coll_op_t *o = (coll_op_t *)op;
    tpbsi_nc_run(o->comm, o->subs, o->n, o->plant);
}

static void coll_done(tpbsi_op_t *op)
{
    atomic_fetch_sub(&((coll_op_t *)op)->comm->pending, 1);
    free(op);
}

/* Queue n collectives of one communicator on a stream as one operation. */
static ncclResult_t submit(struct ncclComm *c, tpbsi_stream_t *s, const pending_t *p, int n)
{
    coll_op_t *o = calloc(1, sizeof(*o) + (size_t)n * sizeof(nc_sub_t));
    if (!o)
        return ncclSystemError;
    const tpbsi_config_t *cf = tpbsi_config();
    long nth = __atomic_add_fetch(&operations, 1, __ATOMIC_SEQ_CST);
    while (cf->faulty && cf->nccl_stall == nth) /* planted: this host thread never returns */
        pause();
    o->plant = !cf->faulty                                         ? 0
               : cf->nccl_error == nth                             ? 1
               : cf->nccl_hang == nth                              ? 2
               : cf->nccl_corrupt == nth || cf->nccl_corrupt == -1 ? 3
                                                                   : 0;
    o->op.run = coll_run;
    o->op.work = 1;
    o->op.done = coll_done;
    o->comm = c;
    o->n = n;
    for (int i = 0; i < n; i++)
        o->subs[i] = p[i].sub;
    atomic_fetch_add(&c->pending, 1);
    tpbsi_enqueue(s, &o->op);
    return ncclSuccess;
}

static ncclResult_t post(nc_kind_t kind, const void *send, void *recv, size_t count,
                         ncclDataType_t t, ncclRedOp_t op, int root, ncclComm_t c,
                         cudaStream_t stream, const char *name)
{
    if (!valid(c))
        return group_error = ncclInvalidArgument;
    if (!c->ready || atomic_load(&c->in_progress) || atomic_load(&c->finalizing)) {
        tpbsi_nc_fail(c, "%s: the communicator is %s", name,
                      !c->ready ? "not initialised yet (ncclInProgress)"
                      : atomic_load(&c->finalizing)
                          ? "being finalized"
                          : "still in progress with the previous call (poll "
                            "ncclCommGetAsyncError until ncclSuccess first)");
        return group_error = ncclInvalidUsage;
    }
    size_t esz = tpbsi_nc_size(t);
    if (!esz || (unsigned)op >= (unsigned)ncclNumOps || root < 0 || root >= c->nranks) {
        tpbsi_nc_fail(c, "%s: invalid data type %d, operation %d or root %d", name, (int)t, (int)op,
                      root);
        return group_error = ncclInvalidArgument;
    }
    tpbsi_stream_t *s = tpbsi_stream(stream, name);
    if (!s || tpbsi_stream_device(s) != c->device) {
        if (s)
            tpbsi_nc_fail(c, "%s: a stream of device %d for a communicator of device %d", name,
                          tpbsi_stream_device(s), c->device);
        return group_error = ncclInvalidArgument;
    }
    size_t in = count * esz * (kind == NC_REDUCESCATTER ? (size_t)c->nranks : 1);
    size_t out = count * esz * (kind == NC_ALLGATHER ? (size_t)c->nranks : 1);
    int sends = kind != NC_BROADCAST || root == c->rank;
    char ws[64], wr[64];
    snprintf(ws, sizeof(ws), "%s sendbuff", name);
    snprintf(wr, sizeof(wr), "%s recvbuff", name);
    pending_t p = {c, s, {{kind, t, op, root, count}, NULL, NULL}};
    if (count && sends && !(p.sub.send = tpbsi_resolve(send, in, TPBSI_DEVICE, ws, NULL)))
        return group_error = ncclInvalidArgument;
    if (count && !(p.sub.recv = tpbsi_resolve(recv, out, TPBSI_DEVICE, wr, NULL)))
        return group_error = ncclInvalidArgument;
    if (group_depth > 0) {
        if (group_n == (int)(sizeof(group_ops) / sizeof(group_ops[0]))) {
            tpbsi_nc_fail(c, "%s: more than %d collectives in one group", name, group_n);
            return group_error = ncclInvalidUsage;
        }
        group_ops[group_n++] = p;
        return ncclSuccess;
    }
    ncclResult_t r = submit(c, s, &p, 1);
    if (r == ncclSuccess && !c->blocking && tpbsi_config()->nccl_in_progress) {
        atomic_store(&c->in_progress, 1);
        return ncclInProgress;
    }
    return r;
}

ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count,
                           ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                           cudaStream_t stream)
{
    return post(NC_ALLREDUCE, sendbuff, recvbuff, count, datatype, op, 0, comm, stream,
                "ncclAllReduce");
}

ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount,
                           ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream)
{
    return post(NC_ALLGATHER, sendbuff, recvbuff, sendcount, datatype, ncclSum, 0, comm, stream,
                "ncclAllGather");
}

ncclResult_t ncclReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount,
                               ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                               cudaStream_t stream)
{
    return post(NC_REDUCESCATTER, sendbuff, recvbuff, recvcount, datatype, op, 0, comm, stream,
                "ncclReduceScatter");
}

ncclResult_t ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count,
                           ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream)
{
    return post(NC_BROADCAST, sendbuff, recvbuff, count, datatype, ncclSum, root, comm, stream,
                "ncclBroadcast");
}

ncclResult_t ncclBcast(void *buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                       cudaStream_t stream)
{
    return ncclBroadcast(buff, buff, count, datatype, root, comm, stream);
}

ncclResult_t ncclGroupStart(void)
{
    if (group_depth++ == 0) {
        group_n = 0;
        group_error = ncclSuccess;
    }
    return ncclSuccess;
}

ncclResult_t ncclGroupEnd(void)
{
    if (group_depth <= 0)
        return ncclInvalidUsage;
    if (--group_depth > 0)
        return ncclSuccess;
    ncclResult_t r = group_error;
    int nonblocking = 0;
    /* one operation per communicator, its collectives in call order */
    for (int i = 0; i < group_n && r == ncclSuccess; i++) {
        if (!group_ops[i].comm)
            continue;
        pending_t batch[4 * TPBSI_MAX_GROUP];
        int n = 0;
        struct ncclComm *c = group_ops[i].comm;
        for (int j = i; j < group_n; j++) {
            if (group_ops[j].comm != c)
                continue;
            batch[n++] = group_ops[j];
            group_ops[j].comm = NULL;
        }
        if (n > TPBSI_MAX_GROUP) {
            tpbsi_nc_fail(c, "ncclGroupEnd: more than %d collectives of one communicator",
                          TPBSI_MAX_GROUP);
            r = ncclInvalidUsage;
            break;
        }
        r = submit(c, batch[0].stream, batch, n);
        if (r == ncclSuccess && !c->blocking && tpbsi_config()->nccl_in_progress) {
            atomic_store(&c->in_progress, 1);
            nonblocking = 1;
        }
    }
    group_n = 0;
    group_error = ncclSuccess;
    return r == ncclSuccess && nonblocking ? ncclInProgress : r;
}
