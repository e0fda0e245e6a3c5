/*
 * cublas.c - the stand-in's libcublas.so.13: the two status functions tpbal calls (the rest
 * of cuBLAS is not used; cuBLASLt is libcublasLt.so.13, which this library links, as the
 * real one does).
 */
#include <cublasLt.h>
#include <cublas_api.h>

const char *cublasGetStatusName(cublasStatus_t status)
{
    return cublasLtGetStatusName(status);
}

const char *cublasGetStatusString(cublasStatus_t status)
{
    return cublasLtGetStatusString(status);
}
