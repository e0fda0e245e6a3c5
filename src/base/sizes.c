/* sizes.c - overflow-checked size products. */
#include "base/sizes.h"

#include <stdint.h>

tpb_status_t tpb_mem_check(double need, double avail, int rank, const char *what, const char *tail)
{
    if (need <= avail)
        return TPB_OK;
    return tpb_err_set(TPB_ERR_NOMEM,
                       "%s needs %.0f bytes on rank %d but %.0f are free: use a smaller shape or "
                       "a larger --tp%s",
                       what, need, rank, avail, tail);
}

int tpb_size_mul3(long a, long b, size_t c, size_t *out)
{
    if (a < 0 || b < 0)
        return 0;
    size_t x = (size_t)a, y = (size_t)b, r;
    if (x && y > SIZE_MAX / x)
        return 0;
    r = x * y;
    if (r && c > SIZE_MAX / r)
        return 0;
    *out = r * c;
    return 1;
}
