/* adaptive.c - re-partition from measured compute times, with hysteresis. */
#include "base/adaptive.h"

#include <math.h>
#include <stddef.h>

#include "base/partition.h"

double tpb_adaptive_round_lb(const tpb_round_rank_t *world, int g0, int t)
{
    double lo = INFINITY, hi = 0.0;
    for (int r = g0; r < g0 + t; r++) {
        lo = fmin(lo, world[r].compute_us);
        hi = fmax(hi, world[r].compute_us);
    }
    return hi > 0.0 ? lo / hi : NAN;
}

int tpb_adaptive_decide(const tpb_round_rank_t *world, int g0, int t, long total, long g,
                        long *new_shards, double *gain)
{
    *gain = 0.0;
    if (t < 1 || t > TPB_ADAPTIVE_MAX_TP)
        return 0;
    double speeds[TPB_ADAPTIVE_MAX_TP], now = 0.0, noise = 0.0;
    long cur[TPB_ADAPTIVE_MAX_TP], cand[TPB_ADAPTIVE_MAX_TP];
    for (int i = 0; i < t; i++) {
        const tpb_round_rank_t *r = &world[g0 + i];
        cur[i] = new_shards[i] = cand[i] = r->shard;
        speeds[i] = 0.0;
        if (!(r->compute_us > 0.0) || r->shard <= 0)
            return 0;
        speeds[i] = (double)r->shard / r->compute_us;
        now = fmax(now, r->compute_us);
        noise = fmax(noise, isfinite(r->spread) ? r->spread : 0.0);
    }
    if (tpb_partition_weighted(total, t, g, speeds, cand, NULL) != TPB_OK)
        return 0;
    double next = 0.0;
    int changed = 0;
    for (int i = 0; i < t; i++) {
        next = fmax(next, (double)cand[i] / speeds[i]);
        changed |= cand[i] != cur[i];
    }
    *gain = next > 0.0 ? now / next - 1.0 : 0.0;
    if (!changed || *gain <= fmax(TPB_ADAPTIVE_MIN_GAIN, 2.0 * noise))
        return 0;
    for (int i = 0; i < t; i++)
        new_shards[i] = cand[i];
    return 1;
}
