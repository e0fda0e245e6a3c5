/*
 * sizes.h - products of user-given numbers, checked for overflow: every
 * buffer size that comes from a shape goes through here (pure).
 */
#ifndef TPB_SIZES_H
#define TPB_SIZES_H

#include <stddef.h>

#include "base/tpb_status.h"

/** *out = a * b * c if the product fits in size_t, and return 1; else return 0 and
 *  leave *out untouched. Negative factors do not fit. */
int tpb_size_mul3(long a, long b, size_t c, size_t *out);

/**
 * The one memory check of tpbal: TPB_OK if need <= avail bytes, else
 * TPB_ERR_NOMEM with "<what> needs N bytes on rank R but M are free: use a
 * smaller shape or a larger --tp<tail>" (tail may be ""). Pure.
 */
tpb_status_t tpb_mem_check(double need, double avail, int rank, const char *what, const char *tail);

#endif /* TPB_SIZES_H */
