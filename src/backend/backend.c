/* backend.c - choosing a backend and its defaults. */
#include "backend/backend.h"

#include <string.h>

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
