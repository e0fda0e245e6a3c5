/*
 * rng.h - counter-based random inputs. Element (i, j) of a matrix depends only
 * on (seed, matrix id, i, j), so every rank generates exactly its own shard and
 * a single-rank reference sees the same numbers. Values are standard normal
 * (never zeros: zeros run faster on GPUs through power effects).
 */
#ifndef TPB_RNG_H
#define TPB_RNG_H

#include <stdint.h>

/** Standard normal value of element (i, j) of matrix `id` under `seed`. */
double tpb_rng_normal(uint64_t seed, uint32_t id, uint64_t i, uint64_t j);

/**
 * Fill a rows x cols block (row-major, leading dimension ld) with the elements
 * (row0 + r, col0 + c) of matrix `id`, scaled by `scale`.
 */
void tpb_rng_fill(double *dst, long rows, long cols, long ld, long row0, long col0, uint64_t seed,
                  uint32_t id, double scale);

#endif /* TPB_RNG_H */
