/* backend.c - choosing a backend and its defaults. */
#include "backend/backend.h"

#include <stdlib.h>
#include <string.h>

#include "rng.h"

const tpb_backend_ops_t *tpb_backend_select(tpb_backend_kind_t kind, tpb_backend_kind_t *resolved)
{
    if (kind == TPB_BACKEND_AUTO)
        kind =
            tpb_cuda_built() && tpb_cuda_device_count() > 0 ? TPB_BACKEND_CUDA : TPB_BACKEND_HOST;
    *resolved = kind;
    return kind == TPB_BACKEND_CUDA ? &tpb_backend_cuda : &tpb_backend_host;
}

void tpb_backend_defaults(tpb_backend_kind_t kind, long *granularity, tpb_dtype_t *dtype,
                          tpb_shape_t *shape)
{
    memset(shape, 0, sizeof(*shape));
    if (kind == TPB_BACKEND_CUDA) {
        *granularity = 64;
        *dtype = TPB_DTYPE_BF16;
        shape->m = shape->n = shape->k = 8192;
    } else {
        *granularity = 1;
        *dtype = TPB_DTYPE_FP32;
        shape->m = shape->n = shape->k = 1024;
    }
}

tpb_status_t tpb_backend_fill(const tpb_backend_ops_t *ops, tpb_backend_t *be, void *dst, long rows,
                              long cols, long row0, long col0, uint64_t seed, uint32_t id,
                              double scale, tpb_dtype_t dt)
{
    size_t n = (size_t)rows * (size_t)cols, bytes = n * tpb_dtype_in_size(dt);
    double *tmp = malloc(n * sizeof(double) + 1);
    void *enc = malloc(bytes + 1);
    tpb_status_t st = TPB_OK;
    if (!tmp || !enc)
        st = tpb_err_set(TPB_ERR_NOMEM, "no host memory to generate a %ldx%ld input", rows, cols);
    if (st == TPB_OK) {
        tpb_rng_fill(tmp, rows, cols, cols, row0, col0, seed, id, scale);
        tpb_dtype_encode(dt, tmp, enc, n);
        st = ops->copy(be, dst, enc, bytes, 0);
    }
    free(tmp);
    free(enc);
    return st;
}
