/* status.c - status names, exit codes and the recorded error message. */
#include "base/tpb_status.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* The last error message of this process (like errno: error state, not an option). */
/* one message a thread: a watchdog's or the signal thread's never overwrites the main's */
static _Thread_local char tpb_err_buf[1024];
static int tpb_err_rank = -1;
static char tpb_err_host[128] = "?";

const char *tpb_status_str(tpb_status_t st)
{
    switch (st) {
    case TPB_OK: return "success";
    case TPB_ERR_INVALID: return "invalid argument";
    case TPB_ERR_UNSUPPORTED: return "unsupported";
    case TPB_ERR_NO_DEVICE: return "no device";
    case TPB_ERR_NOMEM: return "out of memory";
    case TPB_ERR_IO: return "I/O error";
    case TPB_ERR_BACKEND: return "backend error";
    case TPB_ERR_MPI: return "MPI error";
    case TPB_ERR_TIMEOUT: return "timeout";
    case TPB_ERR_CHECK: return "check failed";
    case TPB_ERR_INTERRUPTED: return "interrupted";
    }
    return "unknown status";
}

int tpb_status_exit_code(tpb_status_t st)
{
    switch (st) {
    case TPB_OK: return 0;
    case TPB_ERR_INVALID:
    case TPB_ERR_UNSUPPORTED:
    case TPB_ERR_NO_DEVICE:
    case TPB_ERR_NOMEM:
    case TPB_ERR_IO: return 2;
    case TPB_ERR_CHECK: return 3;
    case TPB_ERR_TIMEOUT: return 4;
    case TPB_ERR_INTERRUPTED: return 130; /* 128 + SIGINT; main uses the signal received */
    default: return 1;
    }
}

void tpb_err_context(int rank, const char *host)
{
    tpb_err_rank = rank;
    snprintf(tpb_err_host, sizeof(tpb_err_host), "%s", host ? host : "?");
}

tpb_status_t tpb_err_set(tpb_status_t st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tpb_err_buf, sizeof(tpb_err_buf), fmt, ap);
    va_end(ap);
    return st;
}

tpb_status_t tpb_err_call(tpb_status_t st, const char *call, const char *what, const char *file,
                          int line)
{
    return tpb_err_set(st, "%s failed: %s (%s:%d, rank %d on %s)", call, what, file, line,
                       tpb_err_rank, tpb_err_host);
}

const char *tpb_err_msg(void)
{
    return tpb_err_buf;
}

void tpb_err_clear(void)
{
    tpb_err_buf[0] = '\0';
}
