# TPB_WARNING_FLAGS: -Wall -Wextra always; --enable-werror (CI) adds -Werror.
AC_DEFUN([TPB_WARNING_FLAGS], [
  AC_ARG_ENABLE([werror],
    [AS_HELP_STRING([--enable-werror], [treat compiler warnings as errors (CI)])],
    [], [enable_werror=no])
  TPB_WARN_CFLAGS="-Wall -Wextra -Wshadow -Wstrict-prototypes -Wno-unused-parameter"
  AS_IF([test "x$enable_werror" = xyes], [TPB_WARN_CFLAGS="$TPB_WARN_CFLAGS -Werror"])
  AC_SUBST([TPB_WARN_CFLAGS])
])
