/* fuzz_partition.c - libFuzzer target: the partitions with any sizes and any speeds
 * (NaN, infinities, 1e308, denormals, zeros, negatives, a million to one and beyond).
 * A split that is accepted must be exact: shards sum to the total, each at least the
 * granularity, in units of it but for the last; a refused one writes nothing. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/partition.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { MAX_T = 64 };

static void check_split(long total, int t, long g, const long *s)
{
    long sum = 0;
    for (int r = 0; r < t; r++) {
        if (s[r] < g || (r < t - 1 && s[r] % g != 0))
            abort();
        sum += s[r];
    }
    if (sum != total)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 12)
        return 0;
    uint32_t a, b;
    memcpy(&a, data, 4);
    memcpy(&b, data + 4, 4);
    long total = (long)(a % 2147483647u) + 1; /* 1 .. TPB_MAX_DIM */
    int t = (int)(data[8] % MAX_T) + 1;
    long g = (long)(b % 512u) + 1;
    double speeds[MAX_T];
    size_t nbytes = size - 12 < sizeof(speeds) ? size - 12 : sizeof(speeds);
    memset(speeds, 0, sizeof(speeds));
    memcpy(speeds, data + 12, nbytes);
    if ((data[9] & 1) && size > 12) /* half the time: plausible speeds scaled by a wild factor */
        for (int r = 0; r < t; r++)
            speeds[r] =
                (1.0 + (double)data[12 + r % (size - 12)]) * ldexp(1.0, (int)data[10] - 128);
    long shards[MAX_T], canary[MAX_T];
    double frac[MAX_T];
    for (int r = 0; r < MAX_T; r++)
        shards[r] = canary[r] = -7;
    if (tpb_partition_even(total, t, g, shards) == TPB_OK)
        check_split(total, t, g, shards);
    else if (memcmp(shards, canary, sizeof(shards)) != 0)
        abort(); /* a refused split wrote its output */
    for (int r = 0; r < MAX_T; r++)
        shards[r] = -7;
    if (tpb_partition_weighted(total, t, g, speeds, shards, frac) == TPB_OK) {
        check_split(total, t, g, shards);
        double fs = 0.0;
        for (int r = 0; r < t; r++) {
            if (!(frac[r] > 0.0) || !isfinite(frac[r]))
                abort();
            fs += frac[r];
        }
        if (fabs(fs - 1.0) > 1e-9)
            abort();
        if (tpb_speeds_check(speeds, t, "fuzz") != TPB_OK)
            abort(); /* accepted speeds the boundary check refuses */
    } else if (memcmp(shards, canary, sizeof(shards)) != 0) {
        abort();
    }
    return 0;
}
