/*
 * coll.c - one NCCL operation through the communicator's shared memory (nc.h): post,
 * compare, move the data in chunks between barriers, then hold the stream until the time
 * model's end: alpha + bus bytes / bandwidth (nccl-tests' bus bytes, model.c) from the last
 * rank's arrival, the same instant on every rank. Reductions run in rank order in float (in
 * double for 64-bit types), so every rank gets the same bits (NCCL User Guide, "Collective
 * Operations"; the data types and their sizes of nccl.h).
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "nc.h"

static const char *type_name(int t)
{
    static const char *const names[] = {"ncclInt8",     "ncclUint8",      "ncclInt32",
                                        "ncclUint32",   "ncclInt64",      "ncclUint64",
                                        "ncclFloat16",  "ncclFloat32",    "ncclFloat64",
                                        "ncclBfloat16", "ncclFloat8e4m3", "ncclFloat8e5m2"};
    return t >= 0 && t < (int)(sizeof(names) / sizeof(names[0])) ? names[t] : "an unknown type";
}

static const char *const kind_names[] = {"ncclAllReduce", "ncclAllGather", "ncclReduceScatter",
                                         "ncclBroadcast"};

size_t tpbsi_nc_size(ncclDataType_t t)
{
    switch (t) {
    case ncclInt8:
    case ncclUint8:
    case ncclFloat8e4m3:
    case ncclFloat8e5m2: return 1;
    case ncclFloat16:
    case ncclBfloat16: return 2;
    case ncclInt32:
    case ncclUint32:
    case ncclFloat32: return 4;
    case ncclInt64:
    case ncclUint64:
    case ncclFloat64: return 8;
    default: return 0;
    }
}

static double get(ncclDataType_t t, const char *p, size_t i)
{
    switch (t) {
    case ncclInt8: return ((const int8_t *)p)[i];
    case ncclUint8: return ((const uint8_t *)p)[i];
    case ncclFloat8e4m3: return tpbsi_e4m3_to_float(((const uint8_t *)p)[i]);
    case ncclFloat8e5m2: return tpbsi_e5m2_to_float(((const uint8_t *)p)[i]);
    case ncclFloat16: return tpbsi_half_to_float(((const uint16_t *)p)[i]);
    case ncclBfloat16: return tpbsi_bf16_to_float(((const uint16_t *)p)[i]);
    case ncclInt32: return ((const int32_t *)p)[i];
    case ncclUint32: return ((const uint32_t *)p)[i];
    case ncclFloat32: return ((const float *)p)[i];
    case ncclInt64: return (double)((const int64_t *)p)[i];
    case ncclUint64: return (double)((const uint64_t *)p)[i];
    case ncclFloat64: return ((const double *)p)[i];
    default: return 0.0;
    }
}

static void set(ncclDataType_t t, char *p, size_t i, double v)
{
    switch (t) {
    case ncclInt8: ((int8_t *)p)[i] = (int8_t)v; break;
    case ncclUint8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case ncclFloat8e4m3: ((uint8_t *)p)[i] = tpbsi_float_to_e4m3((float)v); break;
    case ncclFloat8e5m2: ((uint8_t *)p)[i] = tpbsi_float_to_e5m2((float)v); break;
    case ncclFloat16: ((uint16_t *)p)[i] = tpbsi_float_to_half((float)v); break;
    case ncclBfloat16: ((uint16_t *)p)[i] = tpbsi_float_to_bf16((float)v); break;
    case ncclInt32: ((int32_t *)p)[i] = (int32_t)v; break;
    case ncclUint32: ((uint32_t *)p)[i] = (uint32_t)v; break;
    case ncclFloat32: ((float *)p)[i] = (float)v; break;
    case ncclInt64: ((int64_t *)p)[i] = (int64_t)v; break;
    case ncclUint64: ((uint64_t *)p)[i] = (uint64_t)v; break;
    case ncclFloat64: ((double *)p)[i] = v; break;
    default: break;
    }
}

static double combine(ncclRedOp_t op, double acc, double v, int f64)
{
    double r;
    switch (op) {
    case ncclProd: r = acc * v; break;
    case ncclMax: r = v > acc ? v : acc; break;
    case ncclMin: r = v < acc ? v : acc; break;
    default: r = acc + v; break; /* ncclSum, ncclAvg (divided at the end) */
    }
    return f64 ? r : (double)(float)r;
}

static char *slot(struct ncclComm *c, int r)
{
    return (char *)c->shm + TPBSI_SHM_DATA + (size_t)r * TPBSI_SLOT;
}

/* Sleep until *word differs from seen (another process's futex wake), or 2 ms pass. */
static void futex_wait(_Atomic uint32_t *word, uint32_t seen)
{
    struct timespec t = {0, 2000000};
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT, seen, &t, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *word)
{
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/* Wait until every rank's counter (seq or phase) reaches target. ncclSuccess; ncclRemoteError
 * when a peer failed or its process is gone; ncclInternalError when this comm was aborted. */
static ncclResult_t wait_all(struct ncclComm *c, int phase, uint32_t target)
{
    double next_check = tpbsi_now_us() + 1e5;
    int spin = c->nranks <= sysconf(_SC_NPROCESSORS_ONLN);
    for (;;) {
        int missing = -1;
        for (int r = 0; r < c->nranks && missing < 0; r++) {
            nc_rank_t *p = &c->shm->rank[r];
            uint32_t v = atomic_load(phase ? &p->phase : &p->seq);
            if ((int32_t)(v - target) < 0)
                missing = r; /* the first that has not arrived */
        }
        if (missing < 0)
            return ncclSuccess;
        nc_rank_t *p = &c->shm->rank[missing];
        if (atomic_load(&p->failed)) {
            tpbsi_nc_fail(c, "rank %d of the communicator failed: remote error on rank %d", missing,
                          c->rank);
            return ncclRemoteError;
        }
        if (atomic_load(&c->abort))
            return ncclInternalError;
        double now = tpbsi_now_us();
        if (now > next_check) {
            next_check = now + 1e5;
            if (p->pid > 0 && kill(p->pid, 0) != 0 && errno == ESRCH) {
                tpbsi_nc_fail(c,
                              "rank %d of the communicator (pid %d) exited: remote error on "
                              "rank %d",
                              missing, (int)p->pid, c->rank);
                return ncclRemoteError;
            }
        }
        _Atomic uint32_t *word = phase ? &p->phase : &p->seq;
        uint32_t seen = atomic_load(word);
        /* a short spin first where every rank has a core of its own: a futex's wake-up
         * costs tens of microseconds on a virtual machine */
        for (double until = spin ? tpbsi_now_us() + 30.0 : 0.0;
             (int32_t)(seen - target) < 0 && tpbsi_now_us() < until; seen = atomic_load(word))
            __builtin_ia32_pause();
        if ((int32_t)(seen - target) < 0)
            futex_wait(word, seen);
    }
}

static ncclResult_t post(struct ncclComm *c);

/* A barrier over the communicator's ranks. The first one of an operation also posts it (its
 * descriptors and first chunk written) and compares what the ranks called. */
static ncclResult_t barrier(struct ncclComm *c)
{
    if (c->unposted) {
        c->unposted = 0;
        return post(c);
    }
    c->barriers++;
    _Atomic uint32_t *mine = &c->shm->rank[c->rank].phase;
    uint32_t v = atomic_fetch_add(mine, 1) + 1;
    futex_wake(mine);
    return wait_all(c, 1, v);
}

/* Every rank called the same collectives? NULL, or the first difference in words. */
static int same_calls(struct ncclComm *c, const nc_sub_t *subs, int n, char *why, size_t cap)
{
    for (int r = 0; r < c->nranks; r++) {
        const nc_rank_t *p = &c->shm->rank[r];
        if (p->nops != n) {
            snprintf(why, cap, "rank %d called %d collectives in the group, rank %d called %d",
                     c->rank, n, r, (int)p->nops);
            return 0;
        }
        for (int i = 0; i < n; i++) {
            const nc_desc_t *a = &subs[i].d, *b = &p->ops[i];
            if (!memcmp(a, b, sizeof(*a)))
                continue;
            snprintf(why, cap,
                     "%s (collective %d of the group): rank %d passed count %llu of %s, op %d, "
                     "root %d; rank %d called %s with count %llu of %s, op %d, root %d",
                     kind_names[a->kind], i + 1, c->rank, (unsigned long long)a->count,
                     type_name(a->dtype), (int)a->redop, (int)a->root, r, kind_names[b->kind],
                     (unsigned long long)b->count, type_name(b->dtype), (int)b->redop,
                     (int)b->root);
            return 0;
        }
    }
    return 1;
}

/* n elements of type t at p, as doubles (whole arrays: one switch, tight loops). */
static void load_all(ncclDataType_t t, const char *p, size_t n, double *out)
{
    switch (t) {
    case ncclFloat32:
        for (size_t i = 0; i < n; i++)
            out[i] = ((const float *)p)[i];
        break;
    case ncclFloat64: memcpy(out, p, n * sizeof(double)); break;
    case ncclBfloat16:
        for (size_t i = 0; i < n; i++)
            out[i] = tpbsi_bf16_to_float(((const uint16_t *)p)[i]);
        break;
    default:
        for (size_t i = 0; i < n; i++)
            out[i] = get(t, p, i);
        break;
    }
}

/* Reduce n elements of every rank's slot at offset off (bytes) into out, in rank order, each
 * step rounded as the type's arithmetic would (float for all but the 64-bit types); in blocks
 * that stay in the cache. */
static void reduce(struct ncclComm *c, const nc_desc_t *d, size_t off, char *out, size_t n)
{
    enum { B = 2048 };
    double acc[B], v[B];
    ncclDataType_t t = (ncclDataType_t)d->dtype;
    size_t esz = tpbsi_nc_size(t);
    int f64 = t == ncclFloat64 || t == ncclInt64 || t == ncclUint64;
    for (size_t at = 0; at < n; at += B) {
        size_t m = n - at < B ? n - at : B, o = off + at * esz;
        load_all(t, slot(c, 0) + o, m, acc);
        for (int r = 1; r < c->nranks; r++) {
            load_all(t, slot(c, r) + o, m, v);
            if (d->redop == ncclSum || d->redop == ncclAvg) {
                for (size_t i = 0; i < m; i++)
                    acc[i] = f64 ? acc[i] + v[i] : (double)(float)(acc[i] + v[i]);
            } else {
                for (size_t i = 0; i < m; i++)
                    acc[i] = combine((ncclRedOp_t)d->redop, acc[i], v[i], f64);
            }
        }
        char *dst = out + at * esz;
        for (size_t i = 0; i < m; i++) {
            double x = d->redop == ncclAvg ? acc[i] / c->nranks : acc[i];
            if (t == ncclFloat32)
                ((float *)dst)[i] = (float)x;
            else
                set(t, dst, i, x);
        }
    }
}

static ncclResult_t allreduce(struct ncclComm *c, const nc_sub_t *s, size_t esz)
{
    size_t per = TPBSI_SLOT / esz;
    for (size_t off = 0; off < s->d.count; off += per) {
        size_t n = s->d.count - off < per ? s->d.count - off : per;
        memcpy(slot(c, c->rank), s->send + off * esz, n * esz);
        ncclResult_t r = barrier(c);
        if (r == ncclSuccess)
            reduce(c, &s->d, 0, s->recv + off * esz, n);
        if (r != ncclSuccess || (r = barrier(c)) != ncclSuccess)
            return r;
    }
    return ncclSuccess;
}

static ncclResult_t allgather(struct ncclComm *c, const nc_sub_t *s, size_t esz)
{
    size_t per = TPBSI_SLOT / esz, cnt = s->d.count;
    for (size_t off = 0; off < cnt; off += per) {
        size_t n = cnt - off < per ? cnt - off : per;
        memcpy(slot(c, c->rank), s->send + off * esz, n * esz);
        ncclResult_t r = barrier(c);
        for (int q = 0; r == ncclSuccess && q < c->nranks; q++)
            memcpy(s->recv + ((size_t)q * cnt + off) * esz, slot(c, q), n * esz);
        if (r != ncclSuccess || (r = barrier(c)) != ncclSuccess)
            return r;
    }
    return ncclSuccess;
}

static ncclResult_t reducescatter(struct ncclComm *c, const nc_sub_t *s, size_t esz)
{
    size_t per = TPBSI_SLOT / esz / (size_t)c->nranks, cnt = s->d.count;
    for (size_t off = 0; off < cnt; off += per) {
        size_t n = cnt - off < per ? cnt - off : per;
        for (int b = 0; b < c->nranks; b++) /* this rank's part of every block */
            memcpy(slot(c, c->rank) + (size_t)b * per * esz,
                   s->send + ((size_t)b * cnt + off) * esz, n * esz);
        ncclResult_t r = barrier(c);
        if (r == ncclSuccess)
            reduce(c, &s->d, (size_t)c->rank * per * esz, s->recv + off * esz, n);
        if (r != ncclSuccess || (r = barrier(c)) != ncclSuccess)
            return r;
    }
    return ncclSuccess;
}

static ncclResult_t broadcast(struct ncclComm *c, const nc_sub_t *s, size_t esz)
{
    size_t per = TPBSI_SLOT / esz;
    int root = s->d.root;
    for (size_t off = 0; off < s->d.count; off += per) {
        size_t n = s->d.count - off < per ? s->d.count - off : per;
        if (c->rank == root)
            memcpy(slot(c, root), s->send + off * esz, n * esz);
        ncclResult_t r = barrier(c);
        if (r == ncclSuccess && (c->rank != root || s->recv != s->send))
            memmove(s->recv + off * esz, slot(c, root), n * esz);
        if (r != ncclSuccess || (r = barrier(c)) != ncclSuccess)
            return r;
    }
    return ncclSuccess;
}

static double bus_bytes(const struct ncclComm *c, const nc_sub_t *subs, int n)
{
    static const tpbsi_coll_t kinds[] = {TPBSI_ALLREDUCE, TPBSI_ALLGATHER, TPBSI_REDUCESCATTER,
                                         TPBSI_BROADCAST};
    double sum = 0.0;
    for (int i = 0; i < n; i++) {
        double bytes = (double)subs[i].d.count * (double)tpbsi_nc_size(subs[i].d.dtype);
        if (subs[i].d.kind == NC_ALLGATHER || subs[i].d.kind == NC_REDUCESCATTER)
            bytes *= c->nranks; /* the whole array */
        sum += tpbsi_bus_bytes(kinds[subs[i].d.kind], bytes, c->nranks);
    }
    return sum;
}

static ncclResult_t post(struct ncclComm *c)
{
    nc_rank_t *me = &c->shm->rank[c->rank];
    me->posted_us = tpbsi_now_us();
    atomic_store(&me->seq, c->seq);
    futex_wake(&me->seq);
    ncclResult_t r = wait_all(c, 0, c->seq);
    if (r != ncclSuccess)
        return r;
    c->start = 0.0;
    for (int q = 0; q < c->nranks; q++)
        c->start = c->shm->rank[q].posted_us > c->start ? c->shm->rank[q].posted_us : c->start;
    char why[400];
    if (!same_calls(c, c->cur, c->ncur, why, sizeof(why))) {
        tpbsi_nc_fail(c,
                      "the ranks of a communicator of %d called different collectives: %s "
                      "(on a GPU this hangs or corrupts memory)",
                      c->nranks, why);
        return ncclInvalidUsage;
    }
    return ncclSuccess;
}

/* One operation: its descriptors written, the collectives run (the first barrier posts and
 * compares), then the stream held until the model's end. */
static ncclResult_t exchange(struct ncclComm *c, const nc_sub_t *subs, int n)
{
    nc_rank_t *me = &c->shm->rank[c->rank];
    me->nops = n;
    for (int i = 0; i < n; i++)
        me->ops[i] = subs[i].d;
    c->seq++;
    c->cur = subs;
    c->ncur = n;
    c->unposted = 1;
    c->barriers = 0;
    ncclResult_t r = ncclSuccess;
    for (int i = 0; i < n && r == ncclSuccess && !tpbsi_config()->no_math; i++) {
        size_t esz = tpbsi_nc_size(subs[i].d.dtype);
        switch ((nc_kind_t)subs[i].d.kind) {
        case NC_ALLREDUCE: r = allreduce(c, &subs[i], esz); break;
        case NC_ALLGATHER: r = allgather(c, &subs[i], esz); break;
        case NC_REDUCESCATTER: r = reducescatter(c, &subs[i], esz); break;
        case NC_BROADCAST: r = broadcast(c, &subs[i], esz); break;
        }
    }
    if (r == ncclSuccess && c->unposted)
        r = barrier(c); /* nothing to move: posted and compared all the same */
    if (r == ncclSuccess && c->barriers == 0)
        r = barrier(c); /* every rank has compared before anyone posts the next */
    const tpbsi_config_t *cf = tpbsi_config();
    double end = c->start + tpbsi_coll_us(bus_bytes(c, subs, n), cf->alpha_us, cf->gbs);
    tpbsi_count(TPBSI_N_COLL, 1);
    tpbsi_count(TPBSI_N_COLL_OVER, r == ncclSuccess && tpbsi_now_us() > end);
    if (r == ncclSuccess)
        tpbsi_sleep_until(end);
    return r;
}

/* This rank failed: its peers stop waiting for it (woken now, not at their next timeout). */
static void mark_failed(struct ncclComm *c)
{
    nc_rank_t *me = &c->shm->rank[c->rank];
    atomic_store(&me->failed, 1);
    futex_wake(&me->seq);
    futex_wake(&me->phase);
}

void tpbsi_nc_run(struct ncclComm *c, const nc_sub_t *subs, int n, int plant)
{
    ncclResult_t r;
    if (atomic_load(&c->abort) || atomic_load(&c->async) != ncclSuccess)
        return; /* aborted, or broken by an earlier error: the work is dropped */
    if (plant == 1) {
        mark_failed(c);
        tpbsi_nc_fail(c, "planted asynchronous error (TPBAL_STANDIN_NCCL_ERROR) in %s on rank %d",
                      kind_names[subs[0].d.kind], c->rank);
        r = ncclSystemError;
    } else if (plant == 2) {
        struct timespec nap = {0, 1000000};
        while (!atomic_load(&c->abort)) /* planted: never completes */
            nanosleep(&nap, NULL);
        return;
    } else {
        r = exchange(c, subs, n);
        size_t esz = tpbsi_nc_size((ncclDataType_t)subs[0].d.dtype);
        if (plant == 3 && r == ncclSuccess && subs[0].d.count > 0) /* planted: silently wrong */
            memset(subs[0].recv, 0xff, esz);
    }
    if (r == ncclInternalError && atomic_load(&c->abort))
        return;
    if (r != ncclSuccess) {
        mark_failed(c);
        ncclResult_t none = ncclSuccess;
        atomic_compare_exchange_strong(&c->async, &none, r);
    }
}
