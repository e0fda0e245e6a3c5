# TPB_SANITIZERS: --enable-sanitizers builds everything with AddressSanitizer
# and UndefinedBehaviorSanitizer (./scripts/test runs the unit tests and some
# MPI sweeps under them; LeakSanitizer suppressions in tests/lsan.supp).
AC_DEFUN([TPB_SANITIZERS], [
  AC_ARG_ENABLE([sanitizers],
    [AS_HELP_STRING([--enable-sanitizers], [build with ASan and UBSan (for tests)])],
    [], [enable_sanitizers=no])
  TPB_SAN_FLAGS=""
  AS_IF([test "x$enable_sanitizers" = xyes], [
    TPB_SAN_FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
    tpb_save_CFLAGS=$CFLAGS
    tpb_save_LDFLAGS=$LDFLAGS
    CFLAGS="$CFLAGS $TPB_SAN_FLAGS"
    LDFLAGS="$LDFLAGS $TPB_SAN_FLAGS"
    AC_MSG_CHECKING([whether $CC builds with $TPB_SAN_FLAGS])
    AC_LINK_IFELSE([AC_LANG_PROGRAM([], [])], [AC_MSG_RESULT([yes])],
      [AC_MSG_RESULT([no])
       AC_MSG_ERROR([--enable-sanitizers: $CC cannot build with ASan/UBSan (install libasan and libubsan)])])
    CFLAGS=$tpb_save_CFLAGS
    LDFLAGS=$tpb_save_LDFLAGS
  ])
  AC_SUBST([TPB_SAN_FLAGS])
])
