/*
 * cuda_stub.c - the CUDA backend's table in a build without CUDA: every slot
 * is filled and answers that the backend is not built (never a NULL slot).
 */
#include "backend/backend.h"
#include "backend/cuda/cuda_defaults.h"

static tpb_status_t not_built(void)
{
    return tpb_err_set(TPB_ERR_UNSUPPORTED,
                       "--backend cuda: this tpbal was built without the CUDA backend "
                       "(reconfigure with --with-cuda=DIR, or use --backend host)");
}

static int stub_device_count(void)
{
    return 0;
}

static tpb_status_t stub_check_config(const tpb_backend_cfg_t *cfg)
{
    return not_built();
}

static tpb_status_t stub_init(const tpb_backend_args_t *a, tpb_backend_t **be)
{
    return not_built();
}

static void stub_finalize(tpb_backend_t *be)
{
}

static void stub_info(tpb_backend_t *be, tpb_device_info_t *i)
{
}

static tpb_status_t stub_mem_free(tpb_backend_t *be, double *b)
{
    return not_built();
}

static tpb_status_t stub_alloc(tpb_backend_t *be, size_t n, void **p)
{
    return not_built();
}

static void stub_free(tpb_backend_t *be, void *p)
{
}

static tpb_status_t stub_copy(tpb_backend_t *be, void *d, const void *s, size_t n,
                              tpb_copy_dir_t dir)
{
    return not_built();
}

static tpb_status_t stub_gemm(tpb_backend_t *be, const tpb_gemm_t *g)
{
    return not_built();
}

static tpb_status_t stub_comm_open(tpb_backend_t *be, MPI_Comm g, tpb_comm_t **c)
{
    return not_built();
}

static void stub_comm_close(tpb_comm_t *c)
{
}

static tpb_status_t stub_allreduce(tpb_comm_t *c, const void *s, void *r, size_t n, tpb_dtype_t dt)
{
    return not_built();
}

static tpb_status_t stub_allgatherv(tpb_comm_t *c, const void *s, void *r, const size_t *n,
                                    const size_t *d, tpb_dtype_t dt)
{
    return not_built();
}

static tpb_status_t stub_marks_prepare(tpb_backend_t *be, size_t n)
{
    return not_built();
}

static tpb_status_t stub_mark(tpb_backend_t *be, size_t slot, tpb_mark_phase_t phase)
{
    return not_built();
}

static tpb_status_t stub_marks_read(tpb_backend_t *be, size_t n, double *us)
{
    return not_built();
}

static tpb_status_t stub_coll_start(tpb_comm_t *comm, const void *send, void *recv, size_t count,
                                    const size_t *counts, const size_t *displs, tpb_dtype_t dt,
                                    size_t mark)
{
    return not_built();
}

static tpb_status_t stub_coll_one(tpb_comm_t *comm)
{
    return not_built();
}

static tpb_status_t stub_sync(tpb_backend_t *be)
{
    return not_built();
}

static tpb_status_t stub_set_emulation(tpb_backend_t *be, double factor)
{
    return not_built();
}

static tpb_status_t stub_emulation_probe(tpb_backend_t *be, const tpb_gemm_t *g, double *achieved)
{
    return not_built();
}

const tpb_backend_ops_t tpb_backend_cuda = {
    .name = "cuda",
    .kind = TPB_BACKEND_CUDA,
    .built = 0,
    .defaults = TPB_CUDA_DEFAULTS,
    .device_count = stub_device_count,
    .check_config = stub_check_config,
    .init = stub_init,
    .finalize = stub_finalize,
    .info = stub_info,
    .mem_free = stub_mem_free,
    .alloc = stub_alloc,
    .free = stub_free,
    .copy = stub_copy,
    .gemm = stub_gemm,
    .comm_open = stub_comm_open,
    .comm_close = stub_comm_close,
    .allreduce = stub_allreduce,
    .allgatherv = stub_allgatherv,
    .coll_start = stub_coll_start,
    .coll_progress = stub_coll_one,
    .coll_wait = stub_coll_one,
    .marks_prepare = stub_marks_prepare,
    .mark = stub_mark,
    .marks_read = stub_marks_read,
    .sync = stub_sync,
    .set_emulation = stub_set_emulation,
    .emulation_probe = stub_emulation_probe,
};
