# TPB_CHECK_CUDA: the optional CUDA backend (CUDA runtime, cuBLASLt, NCCL), a vendor of
# src/backend/vendors.inc (config/tpb_vendors.m4 calls it and defines TPB_HAVE_CUDA).
#   --with-cuda=DIR  use the toolkit in DIR; missing pieces are an error
#   --with-cuda=yes  look in $CUDA_HOME, then /usr/local/cuda; missing is an error
#   --with-cuda=no   host backend only
#   (default) check: like yes, but missing pieces only warn and build host only
# Libraries are linked with an rpath to DIR/lib64 so that the driver stub in
# lib64/stubs is never picked up at run time; the driver API is reached through
# cudaGetDriverEntryPoint, so libcuda is not linked at all.
AC_DEFUN([TPB_CHECK_CUDA], [
  AC_ARG_WITH([cuda],
    [AS_HELP_STRING([--with-cuda=DIR|yes|no], [build the CUDA backend (default: check)])],
    [], [with_cuda=check])
  tpb_have_cuda=no
  tpb_cuda_summary="not requested"
  AS_IF([test "x$with_cuda" != xno], [
    AS_CASE([$with_cuda],
      [yes|check], [tpb_cuda_dir=${CUDA_HOME:-/usr/local/cuda}],
      [tpb_cuda_dir=$with_cuda])
    tpb_save_CPPFLAGS=$CPPFLAGS
    tpb_save_LIBS=$LIBS
    tpb_save_LDFLAGS=$LDFLAGS
    CUDA_CPPFLAGS="-isystem $tpb_cuda_dir/include"
    CUDA_LDFLAGS="-L$tpb_cuda_dir/lib64 -Wl,-rpath,$tpb_cuda_dir/lib64"
    CPPFLAGS="$CUDA_CPPFLAGS $CPPFLAGS"
    LDFLAGS="$CUDA_LDFLAGS $LDFLAGS"
    tpb_cuda_missing=
    AC_CHECK_HEADERS([cuda_runtime.h cuda.h cublasLt.h nccl.h], [],
      [tpb_cuda_missing="$tpb_cuda_missing $ac_header"])
    AS_UNSET([ac_cv_lib_cudart_cudaMalloc])
    dnl CUDA 13 or later: cuda_green.c uses fields and entry points that 12.x lacks
    dnl (a third desk review compiled it against 12.x headers: it does not build there)
    AC_CHECK_LIB([cudart], [cudaGetDriverEntryPoint], [],
      [tpb_cuda_missing="$tpb_cuda_missing libcudart(cudaGetDriverEntryPoint)"])
    tpb_cudart=`sed -n '/^#define CUDART_VERSION/s/[^0-9]//gp' "$tpb_cuda_dir/include/cuda_runtime_api.h" 2>/dev/null`
    AS_IF([test -n "$tpb_cudart" && test "$tpb_cudart" -lt 13000],
      [tpb_cuda_missing="$tpb_cuda_missing CUDA>=13.0(found `expr $tpb_cudart / 1000`.`expr $tpb_cudart % 1000 / 10`)"])
    AC_CHECK_LIB([cublas], [cublasCreate_v2], [],
      [tpb_cuda_missing="$tpb_cuda_missing libcublas"])
    AC_CHECK_LIB([cublasLt], [cublasLtMatmul], [],
      [tpb_cuda_missing="$tpb_cuda_missing libcublasLt"])
    AC_CHECK_LIB([nccl], [ncclCommInitRank], [],
      [tpb_cuda_missing="$tpb_cuda_missing libnccl"])
    CPPFLAGS=$tpb_save_CPPFLAGS
    LIBS=$tpb_save_LIBS
    LDFLAGS=$tpb_save_LDFLAGS
    AS_IF([test -z "$tpb_cuda_missing"], [
      tpb_have_cuda=yes
      dnl cuBLASLt and cuBLAS are loaded when the backend needs them (cuda_blasdl.c: dlopen),
      dnl not linked: their initializers cost every process 85 ms of CPU. bench/gpu_bare, the
      dnl bare loop tpbal is measured against, links them (CUDA_BLAS_LIBS).
      CUDA_LIBS="-lnccl -lcudart"
      CUDA_BLAS_LIBS="-lcublasLt -lcublas"
      AC_SEARCH_LIBS([dlopen], [dl],
        [AS_CASE([$ac_cv_search_dlopen], [-l*], [CUDA_LIBS="$CUDA_LIBS $ac_cv_search_dlopen"])])
      tpb_cuda_summary="$tpb_cuda_dir (CUDA runtime `expr ${tpb_cudart:-0} / 1000`.`expr ${tpb_cudart:-0} % 1000 / 10`)"
    ], [test "x$with_cuda" = xcheck], [
      AC_MSG_WARN([CUDA backend not built, missing in $tpb_cuda_dir:$tpb_cuda_missing])
      tpb_cuda_summary="not found in $tpb_cuda_dir:$tpb_cuda_missing"
    ], [
      AC_MSG_ERROR([--with-cuda=$with_cuda: missing in $tpb_cuda_dir:$tpb_cuda_missing])
    ])
  ])
  AS_IF([test "x$tpb_have_cuda" != xyes], [
    CUDA_CPPFLAGS= CUDA_LDFLAGS= CUDA_LIBS= CUDA_BLAS_LIBS=
  ])
  AC_SUBST([CUDA_CPPFLAGS])
  AC_SUBST([CUDA_LDFLAGS])
  AC_SUBST([CUDA_LIBS])
  AC_SUBST([CUDA_BLAS_LIBS])
])
