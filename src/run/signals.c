/* signals.c - stop signals taken by a thread of their own, agreed on by the sweep. */
#include "run/signals.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>

static atomic_int received;
static int acted; /* the action ran (or the first signal came with none): under act_lock */
static void (*stop_fn)(int sig, void *ctx);
static void *stop_ctx;
static pthread_mutex_t act_lock = PTHREAD_MUTEX_INITIALIZER;

/* The stop signals: blocked everywhere, taken by the thread. */
static void stop_set(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGHUP);
    sigaddset(set, SIGUSR1);
}

/* Record sig (the first one counts) and run the stop action once: under act_lock, so that
 * tpb_signals_on_stop(NULL) returns only once a running action has ended. */
static void stop(int sig)
{
    int none = 0;
    atomic_compare_exchange_strong(&received, &none, sig);
    pthread_mutex_lock(&act_lock);
    if (!acted) {
        acted = 1;
        if (stop_fn)
            stop_fn(sig, stop_ctx);
    }
    pthread_mutex_unlock(&act_lock);
}

static void *taker(void *arg)
{
    sigset_t set;
    stop_set(&set);
    for (;;) {
        int sig = 0;
        if (sigwait(&set, &sig) == 0)
            stop(sig);
    }
    return NULL;
}

void tpb_signals_block(void)
{
    sigset_t set;
    stop_set(&set);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    signal(SIGXFSZ, SIG_IGN);
}

tpb_status_t tpb_signals_start(void)
{
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int rc = pthread_create(&t, &attr, taker, NULL);
    pthread_attr_destroy(&attr);
    if (rc != 0)
        return tpb_err_set(TPB_ERR_NOMEM, "cannot start the signal thread: %s", strerror(rc));
    return TPB_OK;
}

void tpb_signals_on_stop(void (*fn)(int sig, void *ctx), void *ctx)
{
    pthread_mutex_lock(&act_lock);
    stop_ctx = ctx;
    stop_fn = fn;
    pthread_mutex_unlock(&act_lock);
}

void tpb_signal_broken_pipe(void)
{
    stop(SIGPIPE);
}

int tpb_signal_received(void)
{
    return atomic_load(&received);
}

tpb_status_t tpb_signal_stopped(int any)
{
    if (!any)
        return TPB_OK;
    int none = 0;
    atomic_compare_exchange_strong(&received, &none, any);
    return tpb_err_set(TPB_ERR_INTERRUPTED,
                       "interrupted by signal %d (%s): the configs measured so far are kept", any,
                       strsignal(any));
}

tpb_status_t tpb_signal_agree(MPI_Comm comm)
{
    int sig = atomic_load(&received), any = 0;
    if (MPI_Allreduce(&sig, &any, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS)
        return tpb_err_call(TPB_ERR_MPI, "MPI_Allreduce", "signal check", __FILE__, __LINE__);
    return tpb_signal_stopped(any);
}
