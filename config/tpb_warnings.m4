# TPB_WARNING_FLAGS: -Wall -Wextra always; --enable-werror (CI) adds -Werror. A switch over
# one of tpbal's enums that lacks a case is an error in every build (-Wswitch-enum as an
# error): a new collective kind, verdict or dtype fails the plain ./configure && make at
# each place that dispatches or names it (tests/dispatch.sh plants one of each).
AC_DEFUN([TPB_WARNING_FLAGS], [
  AC_ARG_ENABLE([werror],
    [AS_HELP_STRING([--enable-werror], [treat compiler warnings as errors (CI)])],
    [], [enable_werror=no])
  TPB_WARN_CFLAGS="-Wall -Wextra -Wshadow -Wstrict-prototypes -Wno-unused-parameter -Werror=switch -Werror=switch-enum"
  AS_IF([test "x$enable_werror" = xyes], [TPB_WARN_CFLAGS="$TPB_WARN_CFLAGS -Werror"])
  AC_SUBST([TPB_WARN_CFLAGS])
])
