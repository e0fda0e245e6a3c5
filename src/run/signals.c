/* signals.c - a stop request recorded by the handler, agreed on by the sweep. */
#include "run/signals.h"

#include <signal.h>
#include <string.h>

static volatile sig_atomic_t received;

static void on_signal(int sig)
{
    if (!received)
        received = sig;
}

void tpb_signals_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGUSR1, &sa, NULL);
}

int tpb_signal_received(void)
{
    return received;
}

tpb_status_t tpb_signal_agree(MPI_Comm comm)
{
    int sig = received, any = 0;
    if (MPI_Allreduce(&sig, &any, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS)
        return tpb_err_call(TPB_ERR_MPI, "MPI_Allreduce", "signal check", __FILE__, __LINE__);
    if (!any)
        return TPB_OK;
    if (!received)
        received = any;
    return tpb_err_set(TPB_ERR_INTERRUPTED,
                       "interrupted by signal %d (%s): the configs measured so far are kept", any,
                       strsignal(any));
}
