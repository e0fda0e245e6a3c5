/* backend.c - the registry of backends and the input fill they share. */
#include "backend/backend.h"

#include <stdlib.h>
#include <string.h>

#include "base/rng.h"
#include "base/sizes.h"

const tpb_backend_ops_t *const tpb_backends[] = {&tpb_backend_cuda, &tpb_backend_host, NULL};

const tpb_backend_ops_t *tpb_backend_select(tpb_backend_kind_t kind)
{
    for (int i = 0; tpb_backends[i]; i++) {
        const tpb_backend_ops_t *b = tpb_backends[i];
        if (kind == b->kind || (kind == TPB_BACKEND_AUTO && b->built && b->device_count() > 0))
            return b;
    }
    return &tpb_backend_host;
}

tpb_status_t tpb_backend_fill(const tpb_backend_ops_t *ops, tpb_backend_t *be, void *dst, long rows,
                              long cols, long row0, long col0, uint64_t seed, uint32_t id,
                              double scale, tpb_dtype_t dt)
{
    size_t n = 0, bytes = 0, dbytes = 0;
    if (!tpb_size_mul3(rows, cols, 1, &n) ||
        !tpb_size_mul3(rows, cols, tpb_dtype_in_size(dt), &bytes) ||
        !tpb_size_mul3(rows, cols, sizeof(double), &dbytes))
        return tpb_err_set(TPB_ERR_NOMEM, "a %ldx%ld input: size overflows", rows, cols);
    double *tmp = malloc(dbytes + 1);
    void *enc = malloc(bytes + 1);
    tpb_status_t st = TPB_OK;
    if (!tmp || !enc)
        st = tpb_err_set(TPB_ERR_NOMEM, "no host memory to generate a %ldx%ld input", rows, cols);
    if (st == TPB_OK) {
        tpb_rng_fill(tmp, rows, cols, cols, row0, col0, seed, id, scale);
        tpb_dtype_encode(dt, tmp, enc, n);
        st = ops->copy(be, dst, enc, bytes, TPB_COPY_TO_BACKEND);
    }
    free(tmp);
    free(enc);
    return st;
}
