/*
 * tpb_status.h - the one status type of tpbal and its error reporting.
 *
 * Every fallible function returns tpb_status_t. The function that first sees
 * an error records a one-line message with tpb_err_set() (or the checking
 * macros of the backends, which translate foreign codes once); callers only
 * propagate the status. main() decides what to print and how to exit: helpers
 * never exit() or MPI_Abort().
 */
#ifndef TPB_STATUS_H
#define TPB_STATUS_H

#include <stddef.h>

typedef enum {
    TPB_OK = 0,
    TPB_ERR_INVALID,     /**< bad user input (flag, value, file contents) */
    TPB_ERR_UNSUPPORTED, /**< valid request this build or device cannot do */
    TPB_ERR_NO_DEVICE,   /**< the requested backend has no usable device */
    TPB_ERR_NOMEM,       /**< host or device memory exhausted or too small */
    TPB_ERR_IO,          /**< a file could not be read or written */
    TPB_ERR_BACKEND,     /**< BLAS, CUDA, cuBLAS or NCCL call failed */
    TPB_ERR_MPI,         /**< an MPI call failed */
    TPB_ERR_TIMEOUT,     /**< a collective did not complete within --timeout */
    TPB_ERR_CHECK,       /**< --check found a wrong result */
    TPB_ERR_INTERRUPTED  /**< a signal asked the run to stop (SIGTERM, SIGINT, SIGUSR1) */
} tpb_status_t;

/** Short constant name of a status ("invalid argument", ...). */
const char *tpb_status_str(tpb_status_t st);

/**
 * Process exit code for a status: 0 for TPB_OK, 2 for errors the user can fix
 * by changing the command line or environment (invalid input, unsupported,
 * no device, memory too small, unwritable files), 3 for a failed --check, 4
 * for a collective that did not complete within --timeout, 130 (128 +
 * SIGINT) for TPB_ERR_INTERRUPTED - main exits with 128 + N for the signal N
 * it actually received (143 for SIGTERM, 138 for SIGUSR1) - and 1 for
 * everything else (MPI, backend errors).
 */
int tpb_status_exit_code(tpb_status_t st);

/** Rank and host put into every backend error message (set once after MPI_Init). */
void tpb_err_context(int rank, const char *host);

/**
 * Record a one-line error message (printf format) for status st and return st.
 * The message replaces any earlier one; it must say what is wrong and what to do.
 */
tpb_status_t tpb_err_set(tpb_status_t st, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/**
 * Record a failed foreign call: "<call> failed: <what> (<file>:<line>, rank R on HOST)".
 * Used by the checking macros of the backends; returns st.
 */
tpb_status_t tpb_err_call(tpb_status_t st, const char *call, const char *what, const char *file,
                          int line);

/** The last recorded message ("" if none). */
const char *tpb_err_msg(void);

/**
 * s made safe to print on a terminal into out[cap]: control characters, DEL, C1 controls and
 * bytes that are not valid UTF-8 shown escaped (\e, \xHH, \uHHHH); valid printable UTF-8 as it
 * is. Never longer than cap - 1.
 */
void tpb_err_printable(const char *s, char *out, size_t cap);

/**
 * A value the user gave, for an error line: printable (tpb_err_printable) and, when longer than
 * 60 characters, its first 48 and "... (N bytes)", so that the rest of the line (the hint) fits.
 * The result lives until the fourth call after it (a ring of buffers, this thread's).
 */
const char *tpb_err_value(const char *s);

/** The recorded error is one every rank of the communicator holds (tpb_backend_agree, once
 *  it has exchanged it): tpb_err_agreed says so until the next tpb_err_set. */
void tpb_err_mark_agreed(void);

/**
 * Whether every rank ended with status st: TPB_OK, a stop request (the ranks honour it at the
 * same iteration) or an error agreed on (tpb_err_mark_agreed); 0 where this rank may be alone
 * with it - a failure inside a timed loop, a failed call with no agreement after it - so that
 * the others may wait in a collective it never reaches: main then aborts the job, where an
 * agreed error ends every rank cleanly.
 */
int tpb_err_agreed(tpb_status_t st);

/** Forget the recorded message. */
void tpb_err_clear(void);

/** Return the status of an expression (evaluated once) from the enclosing function on error. */
#define TPB_CHECK_RET(expr)                                                                        \
    do {                                                                                           \
        tpb_status_t tpb_st_ = (expr);                                                             \
        if (tpb_st_ != TPB_OK)                                                                     \
            return tpb_st_;                                                                        \
    } while (0)

/** Store the status of an expression (evaluated once) in st and jump to label on error. */
#define TPB_CHECK_GOTO(expr, st, label)                                                            \
    do {                                                                                           \
        (st) = (expr);                                                                             \
        if ((st) != TPB_OK)                                                                        \
            goto label;                                                                            \
    } while (0)

#endif /* TPB_STATUS_H */
