/*
 * optparse.h - parsers of option values. Pure: each returns TPB_ERR_INVALID
 * with a one-line message naming the flag and what it accepts, and writes its
 * output only on success.
 */
#ifndef TPB_OPTPARSE_H
#define TPB_OPTPARSE_H

#include <stddef.h>

#include "cli/options.h"

/** Largest TP degree. */
#define TPB_MAX_TP_DEGREE 1048576L

/** Longest injected delay or clock offset: a day. */
#define TPB_MAX_INJECT_US 86400e6

/** An integer in [min, max] (range-checked before any cast). */
tpb_status_t tpb_opt_long(const char *flag, const char *s, long min, long max, long *out);
/** A finite number. */
tpb_status_t tpb_opt_double(const char *flag, const char *s, double *out);
/** Number of comma-separated items of s. */
int tpb_opt_count(const char *s);
/** Called for each item of a comma-separated list. */
typedef tpb_status_t (*tpb_opt_item_fn)(const char *flag, const char *item, void *ctx, int index);
/** Call fn for each item of s; empty items are an error. */
tpb_status_t tpb_opt_for_each(const char *flag, const char *s, tpb_opt_item_fn fn, void *ctx);
/** A list of numbers > 0 into a new array *out (freed and replaced). */
tpb_status_t tpb_opt_double_list(const char *flag, const char *s, double **out, int *n);
/** A list of at most max integers, each in [min, vmax]. */
tpb_status_t tpb_opt_long_list(const char *flag, const char *s, long min, long vmax, long *out,
                               int max, int *n);
/** A list of names, each one of table t, into the mask of their values (bits). */
tpb_status_t tpb_opt_name_set(const char *flag, const char *s, const tpb_name_table_t *t,
                              unsigned *mask);
/** One of names[count]; *out receives its index. */
tpb_status_t tpb_opt_choice(const char *flag, const char *s, const char *const *names, int count,
                            const char *accepted, int *out);
/** A list of MxNxK shapes (at most TPB_MAX_SHAPES). */
tpb_status_t tpb_opt_shapes(const char *flag, const char *s, tpb_shape_t *shapes, int *n);
/** RANK:MICROSECONDS, with [:EVERY] when every_allowed. */
tpb_status_t tpb_opt_inject(const char *flag, const char *s, int every_allowed, tpb_inject_t *inj);
/** Largest --comm-sizes message: 16 GiB. */
#define TPB_MAX_COMM_BYTES (16L << 30)

/** Bytes: an integer with an optional binary suffix K, M or G (KiB... also read), in
 *  [1, TPB_MAX_COMM_BYTES]. */
tpb_status_t tpb_opt_bytes(const char *flag, const char *s, long *out);
/** Message sizes as a list (64K,1M,16M) or a range MIN:MAX[:FACTOR] (factor >= 2, default
 *  2; MIN, MIN*F, ... up to MAX, as nccl-tests' -b -e -f); at most max sizes. */
tpb_status_t tpb_opt_byte_sizes(const char *flag, const char *s, long *out, int max, int *n);
/** A non-empty string shorter than cap. */
tpb_status_t tpb_opt_string(const char *flag, const char *s, char *dst, size_t cap);

#endif /* TPB_OPTPARSE_H */
