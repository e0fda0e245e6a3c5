/* rng.c - splitmix64 hashing and Box-Muller: a normal value per matrix element. */
#include "base/rng.h"

#include <math.h>

static uint64_t splitmix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

double tpb_rng_normal(uint64_t seed, uint32_t id, uint64_t i, uint64_t j)
{
    uint64_t h = splitmix64(seed ^ splitmix64(((uint64_t)id << 48) ^ splitmix64(i) ^ (j << 1)));
    uint64_t h2 = splitmix64(h);
    /* u1 in (0, 1], u2 in [0, 1): 53-bit uniforms */
    double u1 = ((double)(h >> 11) + 1.0) * 0x1.0p-53;
    double u2 = (double)(h2 >> 11) * 0x1.0p-53;
    return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

void tpb_rng_fill(double *dst, long rows, long cols, long ld, long row0, long col0, uint64_t seed,
                  uint32_t id, double scale)
{
    for (long r = 0; r < rows; r++)
        for (long c = 0; c < cols; c++)
            dst[r * ld + c] =
                scale * tpb_rng_normal(seed, id, (uint64_t)(row0 + r), (uint64_t)(col0 + c));
}
