# TPB_CHECK_BLAS: a CBLAS for the host backend.
# --with-blas=LIBS overrides pkg-config (for example --with-blas="-lmkl_rt").
AC_DEFUN([TPB_CHECK_BLAS], [
  AC_ARG_WITH([blas],
    [AS_HELP_STRING([--with-blas=LIBS], [CBLAS link flags (default: pkg-config openblas)])],
    [], [with_blas=check])
  AS_IF([test "x$with_blas" = xcheck || test "x$with_blas" = xyes], [
    PKG_CHECK_MODULES([BLAS], [openblas], [],
      [AC_MSG_ERROR([OpenBLAS not found by pkg-config: install libopenblas-dev or use --with-blas=LIBS])])
  ], [
    BLAS_LIBS="$with_blas"
  ])
  tpb_save_LIBS=$LIBS
  tpb_save_CPPFLAGS=$CPPFLAGS
  LIBS="$BLAS_LIBS $LIBS"
  CPPFLAGS="$BLAS_CFLAGS $CPPFLAGS"
  AC_CHECK_HEADER([cblas.h], [], [AC_MSG_ERROR([cblas.h not found (BLAS_CFLAGS=$BLAS_CFLAGS)])])
  AC_CHECK_FUNC([cblas_dgemm], [], [AC_MSG_ERROR([cblas_dgemm does not link with $BLAS_LIBS])])
  LIBS=$tpb_save_LIBS
  CPPFLAGS=$tpb_save_CPPFLAGS
  AC_SUBST([BLAS_CFLAGS])
  AC_SUBST([BLAS_LIBS])
])
