/*
 * stream.c - streams, events, copies and host functions with the ordering the CUDA Runtime
 * API documents ("Stream Management", "Event Management", "API synchronization behavior"):
 * one worker thread a stream runs its work in order; an event completes when its stream
 * reaches it and is stamped then (the device timer is CLOCK_MONOTONIC); cudaStreamWaitEvent
 * waits for the event's most recent record at the time of the call (none: no wait); the
 * legacy default stream waits for the blocking streams of its device and they for it;
 * copies to or from pageable host memory return when done.
 */
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "rt.h"

#define STREAM_MAGIC 0x5354524du
#define EVENT_MAGIC 0x45564e54u

struct tpbsi_stream {
    unsigned magic;
    tpbsi_ctx_t *ctx;
    unsigned flags; /* cudaStreamNonBlocking or cudaStreamDefault (blocking) */
    int legacy;     /* the default stream of its device */
    int destroyed;
    pthread_cond_t work;
    tpbsi_op_t *head, *tail;
    tpbsi_op_t *running; /* the op the worker runs now (under mu), or NULL */
    int unseen_end;      /* device work ended here, and no host call has seen the stream idle */
    unsigned long long enq, done;
    struct tpbsi_stream *next; /* every stream ever made: handles are checked against it */
};

typedef struct tpbsi_event {
    unsigned magic;
    tpbsi_ctx_t *ctx;
    unsigned flags;
    unsigned long long rec, done; /* records asked, the last one completed */
    double t_us;
    int destroyed, refs;
    struct tpbsi_event *next;
} event_t;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t progress = PTHREAD_COND_INITIALIZER;
static tpbsi_stream_t *streams;
static event_t *events;
static __thread int tls_callback;
static pthread_mutex_t engine_mu[TPBSI_MAX_DEVICES];
static int engine_fd[TPBSI_MAX_DEVICES];
static pthread_once_t engine_once = PTHREAD_ONCE_INIT;

int tpbsi_in_callback(void)
{
    return tls_callback;
}

void tpbsi_progress_signal(void)
{
    pthread_mutex_lock(&mu);
    pthread_cond_broadcast(&progress);
    pthread_mutex_unlock(&mu);
}

static void *worker(void *arg)
{
    tpbsi_stream_t *s = arg;
    prctl(PR_SET_TIMERSLACK, 1000UL); /* wake from the model's sleeps within a microsecond */
    pthread_mutex_lock(&mu);
    for (;;) {
        while (!s->head && !s->destroyed)
            pthread_cond_wait(&s->work, &mu);
        if (!s->head)
            break; /* destroyed and drained */
        tpbsi_op_t *op = s->head;
        s->head = op->next;
        if (!s->head)
            s->tail = NULL;
        s->running = op;
        pthread_mutex_unlock(&mu);
        op->run(op, s);
        pthread_mutex_lock(&mu);
        s->running = NULL;
        if (op->work)
            s->unseen_end = 1;
        pthread_mutex_unlock(&mu);
        op->done(op);
        pthread_mutex_lock(&mu);
        __atomic_store_n(&s->done, s->done + 1, __ATOMIC_RELEASE);
        pthread_cond_broadcast(&progress);
    }
    pthread_mutex_unlock(&mu);
    return NULL;
}

cudaError_t tpbsi_stream_create(tpbsi_ctx_t *c, unsigned flags, int legacy, tpbsi_stream_t **out)
{
    tpbsi_stream_t *s = calloc(1, sizeof(*s));
    if (!s)
        return cudaErrorMemoryAllocation;
    s->magic = STREAM_MAGIC;
    s->ctx = c;
    s->flags = flags;
    s->legacy = legacy;
    pthread_cond_init(&s->work, NULL);
    pthread_t t;
    pthread_attr_t attr;
    sigset_t all, old;
    sigfillset(&all);
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* the application's signals are not for us */
    int rc = pthread_create(&t, &attr, worker, s);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        free(s);
        return cudaErrorMemoryAllocation;
    }
    pthread_mutex_lock(&mu);
    s->next = streams;
    streams = s;
    pthread_mutex_unlock(&mu);
    *out = s;
    return cudaSuccess;
}

/* A wait inside a stream for another stream to reach a count (the legacy stream's rules). */
typedef struct {
    tpbsi_op_t op;
    tpbsi_stream_t *other;
    unsigned long long target;
} wait_stream_t;

static void wait_stream_run(tpbsi_op_t *op, tpbsi_stream_t *s)
{
    wait_stream_t *w = (wait_stream_t *)op;
    pthread_mutex_lock(&mu);
    while (w->other->done < w->target)
        pthread_cond_wait(&progress, &mu);
    pthread_mutex_unlock(&mu);
}

static void free_op(tpbsi_op_t *op)
{
    free(op);
}

static void append(tpbsi_stream_t *s, tpbsi_op_t *op)
{
    op->next = NULL;
    if (s->tail)
        s->tail->next = op;
    else
        s->head = op;
    s->tail = op;
    s->enq++;
}

static void wait_for(tpbsi_stream_t *s, tpbsi_stream_t *other)
{
    if (other == s || other->destroyed || other->done >= other->enq)
        return;
    wait_stream_t *w = calloc(1, sizeof(*w));
    if (!w)
        abort();
    w->op.run = wait_stream_run;
    w->op.done = free_op;
    w->other = other;
    w->target = other->enq;
    append(s, &w->op);
}

void tpbsi_enqueue(tpbsi_stream_t *s, tpbsi_op_t *op)
{
    pthread_mutex_lock(&mu);
    int dev = s->ctx->device;
    for (tpbsi_stream_t *t = streams; t; t = t->next) {
        if (t->ctx->device != dev)
            continue;
        if (s->legacy && !t->legacy && t->flags == cudaStreamDefault)
            wait_for(s, t); /* the legacy stream waits for the blocking streams */
        else if (!s->legacy && s->flags == cudaStreamDefault && t->legacy)
            wait_for(s, t); /* and they wait for it */
    }
    append(s, op);
    pthread_cond_signal(&s->work);
    pthread_mutex_unlock(&mu);
}

/* A host thread's wait spins for up to 50 us before it sleeps, as the CUDA runtime's default
 * (cudaDeviceScheduleAuto) does: a sleeping waiter wakes tens of microseconds late here, which
 * would skew the host times tpbal takes around its anchor events. */
static void spin(const unsigned long long *count, unsigned long long target)
{
    double until = tpbsi_now_us() + 50.0;
    while (__atomic_load_n(count, __ATOMIC_ACQUIRE) < target && tpbsi_now_us() < until)
        __builtin_ia32_pause();
}

static void wait_done(tpbsi_stream_t *s, unsigned long long target)
{
    spin(&s->done, target);
    pthread_mutex_lock(&mu);
    while (s->done < target)
        pthread_cond_wait(&progress, &mu);
    pthread_mutex_unlock(&mu);
}

void tpbsi_enqueue_wait(tpbsi_stream_t *s, tpbsi_op_t *op)
{
    tpbsi_enqueue(s, op);
    pthread_mutex_lock(&mu);
    unsigned long long target = s->enq;
    pthread_mutex_unlock(&mu);
    wait_done(s, target);
}

void tpbsi_device_sync(int device)
{
    pthread_mutex_lock(&mu);
    for (tpbsi_stream_t *t = streams; t; t = t->next) {
        unsigned long long target = t->enq;
        while (t->ctx->device == device && t->done < target)
            pthread_cond_wait(&progress, &mu);
        if (t->ctx->device == device && t->done >= t->enq)
            t->unseen_end = 0;
    }
    pthread_mutex_unlock(&mu);
}

/* A stream of device that is parked on an unmet wait for a host-written value, now or
 * behind what it runs (under mu), or NULL. */
static tpbsi_stream_t *parked_stream(int device)
{
    for (tpbsi_stream_t *t = streams; t; t = t->next) {
        if (t->ctx->device != device || t->done >= t->enq)
            continue;
        if (t->running && t->running->parked && t->running->parked(t->running))
            return t;
        for (tpbsi_op_t *op = t->head; op; op = op->next)
            if (op->parked && op->parked(op))
                return t;
    }
    return NULL;
}

/* The kernels loaded so far in this process: (device, key) pairs. */
static struct {
    int device;
    unsigned long long key;
} * loaded;
static size_t nloaded, caploaded;

static int is_loaded(int device, unsigned long long key)
{
    for (size_t i = 0; i < nloaded; i++)
        if (loaded[i].device == device && loaded[i].key == key)
            return 1;
    return 0;
}

int tpbsi_kernel_load(int device, unsigned long long key, const char *what)
{
    const char *mode = getenv("CUDA_MODULE_LOADING");
    if (mode && strcmp(mode, "EAGER") == 0)
        return 0; /* every kernel loaded at start */
    pthread_mutex_lock(&mu);
    if (is_loaded(device, key)) {
        pthread_mutex_unlock(&mu);
        return 0;
    }
    tpbsi_stream_t *p = parked_stream(device);
    pthread_mutex_unlock(&mu);
    if (p) {
        tpbsi_complain("deadlock: %s loads a kernel (lazy loading), which waits until the "
                       "streams of device %d are idle, but stream %p (%s context) is parked on "
                       "an unmet cuStreamWaitValue32 that only this thread could release: "
                       "release the wait before the first use of a kernel",
                       what, device, (void *)p, p->ctx->green ? "a green" : "the primary");
        return -1;
    }
    tpbsi_device_sync(device);
    pthread_mutex_lock(&mu);
    if (nloaded == caploaded) {
        size_t cap = caploaded ? 2 * caploaded : 64;
        void *n = realloc(loaded, cap * sizeof(*loaded));
        if (!n)
            abort();
        loaded = n;
        caploaded = cap;
    }
    loaded[nloaded].device = device;
    loaded[nloaded++].key = key;
    pthread_mutex_unlock(&mu);
    return 0;
}

tpbsi_stream_t *tpbsi_stream(void *h, const char *what)
{
    if (tls_callback) {
        tpbsi_complain("%s: called from a host function (cudaLaunchHostFunc), where CUDA calls "
                       "are not allowed",
                       what);
        return NULL;
    }
    if (h == NULL || h == (void *)cudaStreamLegacy || h == (void *)cudaStreamPerThread) {
        cudaError_t err;
        tpbsi_ctx_t *c = tpbsi_ctx_current(&err), *p = NULL;
        if (c && tpbsi_ctx_primary(c->device, &p) == cudaSuccess)
            return p->legacy;
        tpbsi_complain("%s: the default stream of device %d: %s", what, tpbsi_current_device(),
                       cudaGetErrorString(err));
        return NULL;
    }
    pthread_mutex_lock(&mu);
    tpbsi_stream_t *s = streams;
    while (s && s != h)
        s = s->next;
    int ok = s && !s->destroyed;
    pthread_mutex_unlock(&mu);
    if (!ok) {
        tpbsi_complain("%s: %p is not a live stream%s", what, h, s ? " (destroyed)" : "");
        return NULL;
    }
    return s;
}

int tpbsi_stream_device(const tpbsi_stream_t *s)
{
    return s->ctx->device;
}

unsigned tpbsi_stream_sms(const tpbsi_stream_t *s)
{
    return s->ctx->green ? s->ctx->sms : TPBSI_SMS;
}

double tpbsi_stream_speed(const tpbsi_stream_t *s)
{
    /* a GEMM on a share of the SMs runs at more than that share of the speed (memory traffic
     * and the waves' tails do not shrink with it: the H200 ran 0.85 on 73 % of its SMs, 0.29-0.43
     * on 24 %): share^0.7 gives 0.80 and 0.37 */
    double share = s->ctx->green ? pow((double)s->ctx->sms / TPBSI_SMS, 0.7) : 1.0;
    return tpbsi_config()->speed[tpbsi_physical(s->ctx->device)] * share;
}

static void engine_init(void)
{
    for (int d = 0; d < TPBSI_MAX_DEVICES; d++) {
        pthread_mutex_init(&engine_mu[d], NULL);
        engine_fd[d] = -2; /* not opened yet */
    }
}

void tpbsi_engine_lock(int device)
{
    pthread_once(&engine_once, engine_init);
    pthread_mutex_lock(&engine_mu[device]);
    if (engine_fd[device] == -2)
        engine_fd[device] = tpbsi_lock_fd("engine", tpbsi_physical(device));
    if (engine_fd[device] >= 0)
        flock(engine_fd[device], LOCK_EX);
}

void tpbsi_engine_unlock(int device)
{
    if (engine_fd[device] >= 0)
        flock(engine_fd[device], LOCK_UN);
    pthread_mutex_unlock(&engine_mu[device]);
}

/* ---- the stream API ---- */

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags)
{
    if (!pStream || (flags & ~(unsigned)cudaStreamNonBlocking))
        return tpbsi_ret(cudaErrorInvalidValue);
    cudaError_t err;
    tpbsi_ctx_t *c = tpbsi_ctx_current(&err);
    if (!c)
        return tpbsi_ret(err);
    tpbsi_stream_t *s;
    err = tpbsi_stream_create(c, flags, 0, &s);
    if (err == cudaSuccess)
        *pStream = (cudaStream_t)s;
    return tpbsi_ret(err);
}

cudaError_t cudaStreamCreate(cudaStream_t *pStream)
{
    return cudaStreamCreateWithFlags(pStream, cudaStreamDefault);
}

cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
    tpbsi_stream_t *s = tpbsi_stream(stream, "cudaStreamDestroy");
    if (!s || s->legacy)
        return tpbsi_ret(cudaErrorInvalidResourceHandle);
    pthread_mutex_lock(&mu);
    s->destroyed = 1; /* its worker drains what is queued, then ends */
    pthread_cond_signal(&s->work);
    pthread_mutex_unlock(&mu);
    return cudaSuccess;
}

/* TPBAL_STANDIN_SYNC_STALL: the Nth host synchronization of the process never returns, as a
 * wedged device or driver leaves it. */
static void sync_planted(void)
{
    static long syncs;
    const tpbsi_config_t *cf = tpbsi_config();
    long nth = __atomic_add_fetch(&syncs, 1, __ATOMIC_SEQ_CST);
    while (cf->faulty && cf->sync_stall == nth)
        pause();
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
    sync_planted();
    tpbsi_stream_t *s = tpbsi_stream(stream, "cudaStreamSynchronize");
    if (!s)
        return tpbsi_ret(cudaErrorInvalidResourceHandle);
    pthread_mutex_lock(&mu);
    unsigned long long target = s->enq;
    pthread_mutex_unlock(&mu);
    wait_done(s, target);
    pthread_mutex_lock(&mu);
    if (s->done >= s->enq)
        s->unseen_end = 0;
    pthread_mutex_unlock(&mu);
    return cudaSuccess;
}

cudaError_t cudaStreamQuery(cudaStream_t stream)
{
    tpbsi_stream_t *s = tpbsi_stream(stream, "cudaStreamQuery");
    if (!s)
        return tpbsi_ret(cudaErrorInvalidResourceHandle);
    pthread_mutex_lock(&mu);
    int idle = s->done >= s->enq;
    if (idle)
        s->unseen_end = 0; /* the host has seen it end */
    pthread_mutex_unlock(&mu);
    return idle ? cudaSuccess : cudaErrorNotReady;
}

cudaError_t cudaDeviceSynchronize(void)
{
    if (tls_callback)
        return tpbsi_ret(cudaErrorNotPermitted);
    sync_planted();
    tpbsi_device_sync(tpbsi_current_device());
    return cudaSuccess;
}

typedef struct {
    tpbsi_op_t op;
    cudaHostFn_t fn;
    void *data;
} host_fn_t;

static void host_fn_run(tpbsi_op_t *op, tpbsi_stream_t *s)
{
    host_fn_t *h = (host_fn_t *)op;
    tls_callback = 1;
    h->fn(h->data);
    tls_callback = 0;
}

cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *userData)
{
    tpbsi_stream_t *s = tpbsi_stream(stream, "cudaLaunchHostFunc");
    if (!s)
        return tpbsi_ret(cudaErrorInvalidResourceHandle);
    host_fn_t *h = calloc(1, sizeof(*h));
    if (!fn || !h) {
        free(h);
        return tpbsi_ret(cudaErrorInvalidValue);
    }
    h->op.run = host_fn_run;
    h->op.done = free_op;
    h->fn = fn;
    h->data = userData;
    tpbsi_enqueue(s, &h->op);
    return cudaSuccess;
}

/* ---- events ---- */

static event_t *event_of(cudaEvent_t h, const char *what)
{
    pthread_mutex_lock(&mu);
    event_t *e = events;
    while (e && (void *)e != (void *)h)
        e = e->next;
    int ok = e && !e->destroyed;
    pthread_mutex_unlock(&mu);
    if (!ok)
        tpbsi_complain("%s: %p is not a live event%s", what, (void *)h, e ? " (destroyed)" : "");
    return ok ? e : NULL;
}

/* Drop a reference under mu; the last one frees a destroyed event. */
static void event_unref_locked(event_t *e)
{
    if (--e->refs > 0)
        return;
    for (event_t **p = &events; *p; p = &(*p)->next) {
        if (*p == e) {
            *p = e->next;
            break;
        }
    }
    free(e);
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
    if (!event || (flags & ~(unsigned)(cudaEventBlockingSync | cudaEventDisableTiming |
                                       cudaEventInterprocess)))
        return tpbsi_ret(cudaErrorInvalidValue);
    cudaError_t err;
    tpbsi_ctx_t *c = tpbsi_ctx_current(&err);
    if (!c)
        return tpbsi_ret(err);
    event_t *e = calloc(1, sizeof(*e));
    if (!e)
        return tpbsi_ret(cudaErrorMemoryAllocation);
    e->magic = EVENT_MAGIC;
    e->ctx = c;
    e->flags = flags;
    e->refs = 1;
    pthread_mutex_lock(&mu);
    e->next = events;
    events = e;
    pthread_mutex_unlock(&mu);
    *event = (cudaEvent_t)e;
    return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t *event)
{
    return cudaEventCreateWithFlags(event, cudaEventDefault);
}

cudaError_t cudaEventDestroy(cudaEvent_t event)
{
    event_t *e = event_of(event, "cudaEventDestroy");
    if (!e)
        return tpbsi_ret(cudaErrorInvalidResourceHandle);
    pthread_mutex_lock(&mu);
    e->destroyed = 1; /* freed once the records queued have completed */
    event_unref_locked(e);
    pthread_mutex_unlock(&mu);
    return cudaSuccess;
}

typedef struct {
    tpbsi_op_t op;
    event_t *ev;
    unsigned long long seq;
} event_op_t;

static void record_run(tpbsi_op_t *op, tpbsi_stream_t *s)
{
    event_op_t *r = (event_op_t *)op;
    double now = tpbsi_now_us();
    pthread_mutex_lock(&mu);
    if (r->seq > r->ev->done) {
        r->ev->t_us = now;
        __atomic_store_n(&r->ev->done, r->seq, __ATOMIC_RELEASE);
    }
    pthread_cond_broadcast(&progress);
    pthread_mutex_unlock(&mu);
}

static void wait_event_run(tpbsi_op_t *op, tpbsi_stream_t *s)
{
    event_op_t *w = (event_op_t *)op;
    pthread_mutex_lock(&mu);
    while (w->ev->done < w->seq)
        pthread_cond_wait(&progress, &mu);
    pthread_mutex_unlock(&mu);
}

static void event_op_done(tpbsi_op_t *op)
{
    pthread_mutex_lock(&mu);
    event_unref_locked(((event_op_t *)op)->ev);
    pthread_mutex_unlock(&mu);
    free(op);
}

/* Whether this record on an idle stream is the planted preempted one (TPBAL_STANDIN_PREEMPT_US:
 * every preempt_every-th of them with timing). Called with mu held. */
static int preempted(const event_t *e)
{
    static long idle_records;
    const tpbsi_config_t *cf = tpbsi_config();
    if (cf->preempt_us <= 0.0 || (e->flags & cudaEventDisableTiming))
        return 0;
    return ++idle_records % cf->preempt_every == 0;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
    double lag = tpbsi_config()->record_lag_us;
    if (lag > 0.0) /* planted: the host reaches this call late */
        tpbsi_sleep_until(tpbsi_now_us() + lag);
    event_t *e = event_of(event, "cudaEventRecord");
    tpbsi_stream_t *s = tpbsi_stream(stream, "cudaEventRecord");
    if (!e || !s)
        return tpbsi_ret(cudaErrorInvalidResourceHandle);
    tpbsi_ctx_t *sc = s->ctx;
    if (e->ctx != sc) { /* "event and stream must be on the same CUDA context" */
        tpbsi_complain("cudaEventRecord: event %p is of the %s context of device %d, stream %p of "
                       "the %s context of device %d",
                       (void *)event, e->ctx->green ? "green" : "primary", e->ctx->device,
                       (void *)stream, sc->green ? "green" : "primary", sc->device);
        return tpbsi_ret(cudaErrorInvalidResourceHandle);
    }
    pthread_mutex_lock(&mu);
    if (s->flags == cudaStreamNonBlocking && !s->head && s->done >= s->enq) {
        /* an idle stream reaches the record at once: stamped now, as a GPU does within
         * microseconds (a worker's wake-up would stamp it tens of them late). Recorded after
         * work whose end no host call saw, it closes that work late (by the host's latency) */
        if (preempted(e)) { /* planted: this thread loses its CPU before the record */
            pthread_mutex_unlock(&mu);
            tpbsi_sleep_until(tpbsi_now_us() + tpbsi_config()->preempt_us);
            pthread_mutex_lock(&mu); /* still idle: only this thread queues on it */
        }
        tpbsi_count(TPBSI_N_LATE_RECORD, s->unseen_end && !(e->flags & cudaEventDisableTiming));
        s->unseen_end = 0;
        e->rec++;
        e->t_us = tpbsi_now_us();
        __atomic_store_n(&e->done, e->rec, __ATOMIC_RELEASE);
        pthread_cond_broadcast(&progress);
        pthread_mutex_unlock(&mu);
        return cudaSuccess;
    }
    pthread_mutex_unlock(&mu);
    event_op_t *r = calloc(1, sizeof(*r));
    if (!r)
        return tpbsi_ret(cudaErrorMemoryAllocation);
    r->op.run = record_run;
    r->op.done = event_op_done;
    r->ev = e;
    pthread_mutex_lock(&mu);
    r->seq = ++e->rec;
    e->refs++;
    pthread_mutex_unlock(&mu);
    tpbsi_enqueue(s, &r->op);
    return cudaSuccess;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
    event_t *e = event_of(event, "cudaStreamWaitEvent");
    tpbsi_stream_t *s = tpbsi_stream(stream, "cudaStreamWaitEvent");
    if (!e || !s)
        return tpbsi_ret(cudaErrorInvalidResourceHandle);
    pthread_mutex_lock(&mu);
    unsigned long long seq = e->rec; /* the most recent record at the time of the call */
    if (seq)
        e->refs++;
    pthread_mutex_unlock(&mu);
    if (!seq)
        return cudaSuccess; /* never recorded: an empty set of work */
    event_op_t *w = calloc(1, sizeof(*w));
    if (!w)
        abort();
    w->op.run = wait_event_run;
    w->op.done = event_op_done;
    w->ev = e;
    w->seq = seq;
    tpbsi_enqueue(s, &w->op);
    return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
    if (tls_callback)
        return tpbsi_ret(cudaErrorNotPermitted);
    sync_planted();
    event_t *e = event_of(event, "cudaEventSynchronize");
    if (!e)
        return tpbsi_ret(cudaErrorInvalidResourceHandle);
    pthread_mutex_lock(&mu);
    unsigned long long seq = e->rec;
    pthread_mutex_unlock(&mu);
    spin(&e->done, seq);
    pthread_mutex_lock(&mu);
    while (e->done < seq)
        pthread_cond_wait(&progress, &mu);
    pthread_mutex_unlock(&mu);
    return cudaSuccess;
}

cudaError_t cudaEventQuery(cudaEvent_t event)
{
    event_t *e = event_of(event, "cudaEventQuery");
    if (!e)
        return tpbsi_ret(cudaErrorInvalidResourceHandle);
    pthread_mutex_lock(&mu);
    int done = e->done >= e->rec;
    pthread_mutex_unlock(&mu);
    return done ? cudaSuccess : cudaErrorNotReady;
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    event_t *a = event_of(start, "cudaEventElapsedTime"),
            *b = event_of(end, "cudaEventElapsedTime");
    if (!ms || !a || !b)
        return tpbsi_ret(!ms ? cudaErrorInvalidValue : cudaErrorInvalidResourceHandle);
    pthread_mutex_lock(&mu);
    cudaError_t r = cudaSuccess;
    if ((a->flags | b->flags) & cudaEventDisableTiming)
        r = cudaErrorInvalidResourceHandle; /* created with cudaEventDisableTiming */
    else if (!a->rec || !b->rec)
        r = cudaErrorInvalidResourceHandle; /* never recorded */
    else if (a->done < a->rec || b->done < b->rec)
        r = cudaErrorNotReady;
    else if (a->ctx->device != b->ctx->device)
        r = cudaErrorInvalidResourceHandle;
    else
        *ms = (float)((b->t_us - a->t_us) / 1e3);
    pthread_mutex_unlock(&mu);
    return tpbsi_ret(r);
}

/* ---- copies and sets ---- */

typedef struct {
    tpbsi_op_t op;
    void *dst;
    const void *src;
    size_t bytes;
    int value, set;
    int to_device; /* the destination is device memory */
} copy_t;

static void copy_run(tpbsi_op_t *op, tpbsi_stream_t *s)
{
    copy_t *c = (copy_t *)op;
    const tpbsi_config_t *cf = tpbsi_config();
    if (c->set && cf->no_math)
        return; /* a GPU sets 128 MiB in a tenth of a millisecond; nothing reads it here */
    if (c->to_device && cf->no_math) { /* nothing reads device memory without arithmetic: the
                                          copy takes its time over the host link, and the
                                          device's pages stay untouched, as a GPU's are */
        tpbsi_sleep_until(tpbsi_now_us() + (double)c->bytes / (cf->copy_gbs * 1e3));
        return;
    }
    if (c->set)
        memset(c->dst, c->value, c->bytes);
    else
        memmove(c->dst, c->src, c->bytes);
}

/* The storage of a copy's side: device memory (or mapped pinned) where the kind says device,
 * host memory where it says host (a device address there is a wrong kind). */
static void *side(const void *p, size_t n, int dev_side, const char *what)
{
    if (dev_side)
        return tpbsi_resolve(p, n, TPBSI_DEVICE_OR_MAPPED, what, NULL);
    if (tpbsi_is_device(p)) {
        tpbsi_complain("%s: %p is device memory where the copy's kind says host memory", what, p);
        return NULL;
    }
    return (void *)p;
}

static cudaError_t copy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind,
                        cudaStream_t stream, int sync, const char *call)
{
    tpbsi_stream_t *s = tpbsi_stream(stream, call);
    if (!s)
        return tpbsi_ret(cudaErrorInvalidResourceHandle);
    if (n == 0)
        return cudaSuccess;
    int dd, sd;
    switch (kind) {
    case cudaMemcpyHostToHost: dd = sd = 0; break;
    case cudaMemcpyHostToDevice: dd = 1, sd = 0; break;
    case cudaMemcpyDeviceToHost: dd = 0, sd = 1; break;
    case cudaMemcpyDeviceToDevice: dd = sd = 1; break;
    case cudaMemcpyDefault:
        dd = tpbsi_is_device(dst) || tpbsi_is_pinned(dst, n);
        sd = tpbsi_is_device(src) || tpbsi_is_pinned(src, n);
        break;
    default: return tpbsi_ret(cudaErrorInvalidMemcpyDirection);
    }
    char wd[96], ws[96];
    snprintf(wd, sizeof(wd), "%s dst", call);
    snprintf(ws, sizeof(ws), "%s src", call);
    void *d = side(dst, n, dd, wd), *sp = side(src, n, sd, ws);
    copy_t *c = d && sp ? calloc(1, sizeof(*c)) : NULL;
    if (!c)
        return tpbsi_ret(d && sp ? cudaErrorMemoryAllocation : cudaErrorInvalidValue);
    c->op.run = copy_run;
    c->op.done = free_op;
    c->dst = d;
    c->src = sp;
    c->bytes = n;
    c->to_device = tpbsi_is_device(dst);
    /* pageable host memory: the call returns once the copy is done (or staged) */
    if (sync || (!dd && !tpbsi_is_pinned(dst, n)) || (!sd && !tpbsi_is_pinned(src, n)))
        tpbsi_enqueue_wait(s, &c->op);
    else
        tpbsi_enqueue(s, &c->op);
    return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                            cudaStream_t stream)
{
    return copy(dst, src, count, kind, stream, 0, "cudaMemcpyAsync");
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
    return copy(dst, src, count, kind, NULL, 1, "cudaMemcpy");
}

static cudaError_t set(void *p, int value, size_t n, cudaStream_t stream, int sync,
                       const char *call)
{
    tpbsi_stream_t *s = tpbsi_stream(stream, call);
    if (!s)
        return tpbsi_ret(cudaErrorInvalidResourceHandle);
    if (n == 0)
        return cudaSuccess;
    void *d = tpbsi_resolve(p, n, TPBSI_DEVICE_OR_MAPPED, call, NULL);
    copy_t *c = d ? calloc(1, sizeof(*c)) : NULL;
    if (!c)
        return tpbsi_ret(d ? cudaErrorMemoryAllocation : cudaErrorInvalidValue);
    c->op.run = copy_run;
    c->op.done = free_op;
    c->dst = d;
    c->bytes = n;
    c->value = value;
    c->set = 1;
    if (sync)
        tpbsi_enqueue_wait(s, &c->op);
    else
        tpbsi_enqueue(s, &c->op);
    return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream)
{
    return set(devPtr, value, count, stream, 0, "cudaMemsetAsync");
}

cudaError_t cudaMemset(void *devPtr, int value, size_t count)
{
    return set(devPtr, value, count, NULL, 1, "cudaMemset");
}
