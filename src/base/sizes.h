/*
 * sizes.h - products of user-given numbers, checked for overflow: every
 * buffer size that comes from a shape goes through here (pure).
 */
#ifndef TPB_SIZES_H
#define TPB_SIZES_H

#include <stddef.h>

/** *out = a * b * c if the product fits in size_t, and return 1; else return 0 and
 *  leave *out untouched. Negative factors do not fit. */
int tpb_size_mul3(long a, long b, size_t c, size_t *out);

#endif /* TPB_SIZES_H */
