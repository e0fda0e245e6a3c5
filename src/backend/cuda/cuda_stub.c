/*
 * cuda_stub.c - the CUDA backend's class in a build without CUDA: the same name,
 * defaults and help as the real one; no device, and its check and open say how to
 * build it (it never opens a device, so it needs no device or communicator table).
 */
#include "backend/backend.h"
#include "backend/cuda/cuda_defaults.h"

static int no_device(void)
{
    return 0;
}

static tpb_status_t not_built(const tpb_backend_cfg_t *cfg)
{
    return tpb_err_set(TPB_ERR_UNSUPPORTED,
                       "--backend cuda: this tpbal was built without the CUDA backend "
                       "(reconfigure with --with-cuda=DIR, or use --backend host)");
}

static tpb_status_t open_not_built(const tpb_backend_args_t *args, tpb_device_t **dev)
{
    return not_built(&args->cfg);
}

const tpb_backend_class_t tpb_backend_cuda = {
    .name = "cuda",
    .about = TPB_CUDA_ABOUT " (not built)",
    .dtypes = TPB_CUDA_DTYPES,
    .built = 0,
    .defaults = TPB_CUDA_DEFAULTS,
    .device_count = no_device,
    .check_config = not_built,
    TPB_CUDA_CAPS,
    .rate_guess = tpb_cuda_rate_guess,
    .mem_guess = tpb_cuda_mem_guess,
    .open = open_not_built,
};
