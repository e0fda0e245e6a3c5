/* status.c - status names, exit codes and the recorded error message. */
#include "base/tpb_status.h"
#include "base/utf8.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* The last error message of this process (like errno: error state, not an option). */
/* one message a thread: a watchdog's or the signal thread's never overwrites the main's */
static _Thread_local char tpb_err_buf[1024];
static _Thread_local int tpb_err_shared; /* the recorded error is every rank's (agreed) */
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
    case TPB_ERR_BACKEND:
    case TPB_ERR_MPI: return 1;
    }
    return 1;
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
    tpb_err_shared = 0;
    return st;
}

void tpb_err_mark_agreed(void)
{
    tpb_err_shared = 1;
}

int tpb_err_agreed(tpb_status_t st)
{
    return st == TPB_OK || st == TPB_ERR_INTERRUPTED || tpb_err_shared;
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

void tpb_err_printable(const char *s, char *out, size_t cap)
{
    size_t len = 0;
    if (cap == 0)
        return;
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        unsigned cp;
        size_t n = tpb_utf8_decode(p, &cp);
        char esc[16];
        const char *put = esc;
        size_t k;
        if (n == 1 && cp == 0x1b)
            snprintf(esc, sizeof(esc), "\\e");
        else if (n == 0 || (n == 1 && (cp < 0x20 || cp == 0x7f)))
            snprintf(esc, sizeof(esc), "\\x%02x", *p);
        else if (cp >= 0x80 && cp <= 0x9f) /* C1 controls (U+0085 ...) */
            snprintf(esc, sizeof(esc), "\\u%04x", cp);
        else
            put = (const char *)p;
        k = put == esc ? strlen(esc) : n;
        if (len + k >= cap)
            break;
        memcpy(out + len, put, k);
        len += k;
        p += n ? n : 1;
    }
    out[len] = '\0';
}

const char *tpb_err_value(const char *s)
{
    enum { RING = 4, CAP = 256, SHOW = 60, KEEP = 48 };
    static _Thread_local char ring[RING][CAP];
    static _Thread_local int next;
    char *out = ring[next++ % RING], head[KEEP + 1];
    size_t n = strlen(s);
    if (n <= SHOW) {
        tpb_err_printable(s, out, CAP);
        return out;
    }
    memcpy(head, s, KEEP);
    head[KEEP] = '\0';
    tpb_err_printable(head, out, CAP - 32);
    size_t len = strlen(out);
    snprintf(out + len, CAP - len, "... (%zu bytes)", n);
    return out;
}

void tpb_err_clear(void)
{
    tpb_err_buf[0] = '\0';
    tpb_err_shared = 0;
}
