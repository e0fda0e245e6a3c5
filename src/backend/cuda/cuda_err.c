/* cuda_err.c - CUDA, cuBLAS and NCCL errors translated into tpb_status_t, once,
 * at the edge (in the spirit of UCC's cuda_error_to_ucc_status). */
#include "backend/cuda/cuda_internal.h"

tpb_status_t tpb_cuda_err(cudaError_t e, const char *call, const char *file, int line)
{
    tpb_status_t st = e == cudaErrorMemoryAllocation ? TPB_ERR_NOMEM
                      : (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver)
                          ? TPB_ERR_NO_DEVICE
                          : TPB_ERR_BACKEND;
    return tpb_err_call(st, call, cudaGetErrorString(e), file, line);
}

tpb_status_t tpb_cublas_err(cublasStatus_t e, const char *call, const char *file, int line)
{
    tpb_status_t st = e == CUBLAS_STATUS_NOT_SUPPORTED  ? TPB_ERR_UNSUPPORTED
                      : e == CUBLAS_STATUS_ALLOC_FAILED ? TPB_ERR_NOMEM
                                                        : TPB_ERR_BACKEND;
    return tpb_err_call(st, call, cublasGetStatusString(e), file, line);
}

tpb_status_t tpb_nccl_err(ncclResult_t e, const char *call, const char *file, int line)
{
    return tpb_err_call(TPB_ERR_BACKEND, call, ncclGetErrorString(e), file, line);
}
