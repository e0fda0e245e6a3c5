/*
 * mpi_watchdog.c - the watchdog of blocking collectives (mpi_watch.h): node-shared
 * slots that say how far each rank has got, and a thread that makes no MPI call.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend/mpi_watch.h"
#include "base/clock.h"
#include "base/stamp.h"

/* A rank's slot: how far it has got, (group generation << 32) | collectives entered in
 * that group, and when its watchdog thread last ran (a stopped or dead rank's stops). */
#define TOKEN(gen, seq) (((uint64_t)(gen) << 32) | (uint64_t)(seq))

typedef struct {
    _Atomic uint64_t token;
    _Atomic uint64_t alive_us; /* this node's clock, as tpb_clock_now_us */
    /* its progress stamp (base/stamp.h), copied by its own watchdog thread each period */
    _Atomic uint64_t stamp_us;
    atomic_int phase, peers, config, world;
    _Atomic long iter;
    char call[48]; /* the library call it is inside ("" none): read as a copy, NUL forced */
} slot_t;

static struct {
    int on; /* a thread runs */
    pthread_t thread;
    atomic_int stop;
    pthread_mutex_t nap_lock; /* the thread naps on nap_cond: a stop wakes it at once */
    pthread_cond_t nap_cond;
    double timeout_us, period_us;
    MPI_Comm node; /* this node's ranks */
    MPI_Win win;   /* their slots */
    slot_t *slots; /* node_size slots, shared */
    int node_rank, node_size;
    int *node_world;          /* world rank of each slot */
    _Atomic uint64_t waiting; /* token of the collective this rank is in, 0 outside */
    tpb_watch_t *_Atomic current;
    const char *_Atomic what;
    void (*fire)(const char *msg, void *ctx);
    void *ctx;
    unsigned gen;
    int world_rank;
    char host[TPB_WATCH_HOST_LEN];
} wd = {.node = MPI_COMM_NULL, .win = MPI_WIN_NULL};

/* Progress: a rank whose stamp is this much older than --timeout is stuck; the grace lets a
 * wait's own --timeout (a GPU wait, a non-blocking collective) end it first, with its own
 * message. The watchdog checks every period (<= 1 s): a stuck rank ends within --timeout +
 * TPB_PROGRESS_GRACE_US + 1 s, and a rank waiting for it within 1 s more. */
#define TPB_PROGRESS_GRACE_US 2e6
/* a rank that is not world rank 0 lets rank 0 seal the record first (rank 0 notices a stuck
 * rank of its node within a period) */
#define TPB_FIRE_WAIT_US 2.5e6

void tpb_watchdog_on_fire(void (*fn)(const char *msg, void *ctx), void *ctx)
{
    wd.fire = fn;
    wd.ctx = ctx;
}

int tpb_watchdog_node_slot(int world_rank)
{
    for (int i = 0; wd.node_world && i < wd.node_size; i++)
        if (wd.node_world[i] == world_rank)
            return i;
    return -1;
}

unsigned tpb_watchdog_next_gen(void)
{
    return ++wd.gen;
}

void tpb_watch_enter(tpb_watch_t *w, const char *what)
{
    tpb_stamp_peers(1);
    uint64_t t = TOKEN(w->gen, ++w->seq);
    if (wd.slots)
        atomic_store_explicit(&wd.slots[wd.node_rank].token, t, memory_order_relaxed);
    atomic_store_explicit(&wd.current, w, memory_order_relaxed);
    atomic_store_explicit(&wd.what, what, memory_order_relaxed);
    atomic_store_explicit(&wd.waiting, t, memory_order_release);
}

void tpb_watch_leave(tpb_watch_t *w)
{
    atomic_store_explicit(&wd.waiting, 0, memory_order_release);
    tpb_stamp_peers(0);
}

/* "R (host), ..." of the group ranks of w on this node that have not entered the
 * collective whose token is t, or whose process has stopped running (a rank stopped
 * inside the collective has entered it, but will never finish it); *unseen counts those
 * on other nodes. */
static int missing(const tpb_watch_t *w, uint64_t t, char *out, size_t cap, int *unseen)
{
    int n = 0;
    size_t len = 0;
    double now = tpb_clock_now_us(NULL);
    *unseen = 0;
    out[0] = '\0';
    for (int r = 0; r < w->size; r++) {
        if (r == w->rank)
            continue;
        int slot = w->node_slot ? w->node_slot[r] : -1;
        if (slot < 0) {
            (*unseen)++;
            continue;
        }
        double quiet = now - (double)atomic_load(&wd.slots[slot].alive_us);
        int stopped = quiet > 3 * wd.period_us + 0.5e6;
        if (atomic_load(&wd.slots[slot].token) >= t && !stopped)
            continue; /* arrived (same group generation, as far or further) and running */
        if (len + 80 < cap)
            len += stopped ? (size_t)snprintf(out + len, cap - len,
                                              "%s%d (%s, not running for %.0f s)", n ? ", " : "",
                                              w->world_ranks[r], w->hosts[r], quiet * 1e-6)
                           : (size_t)snprintf(out + len, cap - len, "%s%d (%s)", n ? ", " : "",
                                              w->world_ranks[r], w->hosts[r]);
        n++;
    }
    return n;
}

/* End the process after the message (rank 0 seals the record first through wd.fire). */
static void end_process(const char *msg, int let_rank0_seal)
{
    if (wd.fire && !let_rank0_seal)
        wd.fire(msg, wd.ctx); /* rank 0 seals the record and gives --out back; no return */
    fprintf(stderr, "tpbal: error on rank %d: %s\n", wd.world_rank, msg);
    fflush(stderr);
    if (let_rank0_seal) {
        struct timespec ts = {(time_t)(TPB_FIRE_WAIT_US / 1e6),
                              (long)(TPB_FIRE_WAIT_US * 1e3) % 1000000000L};
        nanosleep(&ts, NULL);
    }
    _exit(4);
}

static void fire(uint64_t t)
{
    tpb_watch_t *w = atomic_load(&wd.current);
    const char *what = atomic_load(&wd.what);
    char list[1024], msg[1600];
    int unseen = 0, n = missing(w, t, list, sizeof(list), &unseen);
    int len = snprintf(msg, sizeof(msg), "rank %d (%s) waited %.0f s in the %s of its TP group; ",
                       w->world_ranks[w->rank], w->hosts[w->rank], wd.timeout_us * 1e-6, what);
    if (n)
        len += snprintf(msg + len, sizeof(msg) - (size_t)len, "rank%s %s did not arrive",
                        n == 1 ? "" : "s", list);
    else
        len += snprintf(msg + len, sizeof(msg) - (size_t)len, "the ranks of this node arrived");
    if (unseen)
        len += snprintf(msg + len, sizeof(msg) - (size_t)len,
                        "; %d rank%s on other nodes %s not seen from here (--collectives "
                        "nonblocking asks them)",
                        unseen, unseen == 1 ? "" : "s", unseen == 1 ? "is" : "are");
    snprintf(msg + len, sizeof(msg) - (size_t)len,
             " (--timeout %.0f s): look at that rank's process or node", wd.timeout_us * 1e-6);
    end_process(msg, 0);
}

/* This rank's stamp into its node slot (its own thread, each period). */
static void publish(const tpb_stamp_t *me)
{
    slot_t *sl = &wd.slots[wd.node_rank];
    atomic_store(&sl->phase, (int)me->phase);
    atomic_store(&sl->peers, me->peers);
    atomic_store(&sl->config, me->config);
    atomic_store(&sl->iter, me->iter);
    atomic_store(&sl->world, wd.world_rank);
    snprintf(sl->call, sizeof(sl->call), "%s", me->call ? me->call : "");
    atomic_store(&sl->stamp_us, (uint64_t)me->at_us);
}

/* Node slot i's stamp, copied. */
static tpb_stamp_t slot_stamp(int i, char *call, size_t cap)
{
    slot_t *sl = &wd.slots[i];
    memcpy(call, sl->call, cap < sizeof(sl->call) ? cap : sizeof(sl->call));
    call[cap - 1] = '\0';
    return (tpb_stamp_t){.at_us = (double)atomic_load(&sl->stamp_us),
                         .phase = (tpb_phase_t)atomic_load(&sl->phase),
                         .peers = atomic_load(&sl->peers),
                         .config = atomic_load(&sl->config),
                         .iter = atomic_load(&sl->iter),
                         .call = call[0] ? call : NULL};
}

/* Stale: no progress for --timeout + the grace. Stuck: stale and not waiting for others. */
static int stale(const tpb_stamp_t *s, double now)
{
    return s->at_us > 0.0 && now - s->at_us >= wd.timeout_us + TPB_PROGRESS_GRACE_US;
}

/* "rank 1 (host) made no progress for 33 s in ..." for each stuck rank of this node into
 * out[cap] (all stale ones where none is stuck: the node waits for a rank elsewhere). The
 * number listed. */
static int stuck_ranks(double now, int all_stale, char *out, size_t cap)
{
    size_t len = 0;
    int n = 0;
    out[0] = '\0';
    for (int i = 0; i < wd.node_size; i++) {
        char call[48], where[256];
        tpb_stamp_t s = slot_stamp(i, call, sizeof(call));
        if (!stale(&s, now) || (s.peers && !all_stale))
            continue;
        tpb_stamp_describe(&s, where, sizeof(where));
        if (len + 64 < cap)
            len += (size_t)snprintf(
                out + len, cap - len, "%srank %d (%s) made no progress for %.0f s in %s",
                n ? "; " : "", wd.node_world[i], wd.host, (now - s.at_us) * 1e-6, where);
        n++;
    }
    return n;
}

/* The progress check, each period: a rank stuck on this node (its own thread sees it first;
 * world rank 0's sees every rank of its node, and seals the record), or every rank of this
 * node stale (they wait for a rank elsewhere, which no thread here can see). */
static void check_progress(double now)
{
    tpb_stamp_t me;
    tpb_stamp_read(&me);
    publish(&me);
    int stuck = 0, nstale = 0;
    for (int i = 0; i < wd.node_size; i++) {
        char call[48];
        tpb_stamp_t s = slot_stamp(i, call, sizeof(call));
        nstale += stale(&s, now);
        stuck += stale(&s, now) && !s.peers;
    }
    int me_stuck = stale(&me, now) && !me.peers, all = nstale == wd.node_size;
    if (!me_stuck && !(wd.world_rank == 0 && stuck) && !all)
        return;
    char list[1200], msg[2048];
    stuck_ranks(now, !stuck, list, sizeof(list));
    const char *first = tpb_stamp_error();
    snprintf(msg, sizeof(msg), "%s%s (--timeout %.0f s): look at that rank's process or device%s%s",
             list,
             stuck ? ""
                   : ": every rank of this node waits for a rank on another node (their own "
                     "watchdogs name it)",
             wd.timeout_us * 1e-6, first[0] ? "; it was cleaning up after: " : "", first);
    end_process(msg, wd.world_rank != 0);
}

/* The thread: a blocking collective waited in with the same token for timeout_us fires, and
 * so does a rank without progress (check_progress). No MPI call. */
static void *watch_loop(void *arg)
{
    uint64_t last = 0;
    double since = 0.0;
    while (!atomic_load(&wd.stop)) {
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        long ns = until.tv_nsec + (long)(wd.period_us * 1e3);
        until.tv_sec += ns / 1000000000L;
        until.tv_nsec = ns % 1000000000L;
        pthread_mutex_lock(&wd.nap_lock);
        while (!atomic_load(&wd.stop) &&
               pthread_cond_timedwait(&wd.nap_cond, &wd.nap_lock, &until) == 0)
            ; /* woken early by no stop: nap on */
        pthread_mutex_unlock(&wd.nap_lock);
        if (atomic_load(&wd.stop))
            break;
        uint64_t t = atomic_load_explicit(&wd.waiting, memory_order_acquire);
        double now = tpb_clock_now_us(NULL);
        atomic_store(&wd.slots[wd.node_rank].alive_us, (uint64_t)now); /* a sign of life */
        if (t != last) {
            last = t;
            since = now;
        } else if (t && now - since >= wd.timeout_us) {
            fire(t);
        }
        check_progress(now);
    }
    return arg;
}

/* The node's shared slots and the world rank of each (collective over world). */
static tpb_status_t node_slots(MPI_Comm world)
{
    int me;
    MPI_Comm_rank(world, &me);
    wd.world_rank = me;
    if (gethostname(wd.host, sizeof(wd.host)) != 0)
        snprintf(wd.host, sizeof(wd.host), "?");
    wd.host[sizeof(wd.host) - 1] = '\0';
    if (MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, me, MPI_INFO_NULL, &wd.node) !=
        MPI_SUCCESS)
        return tpb_err_call(TPB_ERR_MPI, "MPI_Comm_split_type", "watchdog", __FILE__, __LINE__);
    MPI_Comm_rank(wd.node, &wd.node_rank);
    MPI_Comm_size(wd.node, &wd.node_size);
    wd.node_world = malloc((size_t)wd.node_size * sizeof(int));
    if (!wd.node_world)
        return tpb_err_set(TPB_ERR_NOMEM, "watchdog: out of memory");
    void *base = NULL;
    MPI_Aint bytes = wd.node_rank == 0 ? (MPI_Aint)(wd.node_size * sizeof(slot_t)) : 0;
    int rc = MPI_Win_allocate_shared(bytes, sizeof(slot_t), MPI_INFO_NULL, wd.node, &base, &wd.win);
    MPI_Aint size;
    int disp;
    if (rc == MPI_SUCCESS)
        rc = MPI_Win_shared_query(wd.win, 0, &size, &disp, &base);
    if (rc == MPI_SUCCESS && wd.node_rank == 0)
        memset(base, 0, (size_t)size);
    if (rc == MPI_SUCCESS)
        rc = MPI_Allgather(&me, 1, MPI_INT, wd.node_world, 1, MPI_INT, wd.node);
    if (rc == MPI_SUCCESS)
        rc = MPI_Barrier(wd.node); /* the slots are zero before anyone writes */
    if (rc != MPI_SUCCESS)
        return tpb_err_call(TPB_ERR_MPI, "MPI_Win_allocate_shared", "watchdog slots", __FILE__,
                            __LINE__);
    wd.slots = base;
    return TPB_OK;
}

tpb_status_t tpb_watchdog_start(MPI_Comm world, double timeout_s)
{
    if (wd.slots || wd.on || world == MPI_COMM_NULL)
        return TPB_OK; /* once per process; nothing to watch without MPI (unit tests) */
    tpb_status_t st = node_slots(world);
    if (st != TPB_OK || timeout_s <= 0.0)
        return st;
    wd.timeout_us = timeout_s * 1e6;
    wd.period_us = wd.timeout_us / 4 < 1e6 ? wd.timeout_us / 4 : 1e6;
    atomic_store(&wd.slots[wd.node_rank].alive_us, (uint64_t)tpb_clock_now_us(NULL));
    atomic_store(&wd.stop, 0);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&wd.nap_lock, NULL);
    pthread_cond_init(&wd.nap_cond, &ca);
    pthread_condattr_destroy(&ca);
    if (pthread_create(&wd.thread, NULL, watch_loop, NULL) != 0) {
        pthread_cond_destroy(&wd.nap_cond);
        pthread_mutex_destroy(&wd.nap_lock);
        return tpb_err_set(TPB_ERR_BACKEND, "watchdog: cannot start its thread");
    }
    wd.on = 1;
    return TPB_OK;
}

void tpb_watchdog_stop(void)
{
    if (wd.on) {
        pthread_mutex_lock(&wd.nap_lock);
        atomic_store(&wd.stop, 1);
        pthread_cond_signal(&wd.nap_cond);
        pthread_mutex_unlock(&wd.nap_lock);
        pthread_join(wd.thread, NULL); /* at once, not after its nap (up to a second) */
        pthread_cond_destroy(&wd.nap_cond);
        pthread_mutex_destroy(&wd.nap_lock);
        wd.on = 0;
    }
    if (wd.win != MPI_WIN_NULL)
        MPI_Win_free(&wd.win);
    if (wd.node != MPI_COMM_NULL)
        MPI_Comm_free(&wd.node);
    free(wd.node_world);
    wd.node_world = NULL;
    wd.slots = NULL;
    wd.fire = NULL;
}
