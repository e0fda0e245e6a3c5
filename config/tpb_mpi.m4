# TPB_SETUP_MPI_CC: make mpicc the C compiler unless CC is set by the user.
AC_DEFUN([TPB_SETUP_MPI_CC], [
  AC_ARG_VAR([MPICC], [MPI C compiler wrapper (default: mpicc)])
  AS_IF([test -z "$CC"], [
    AC_CHECK_PROGS([MPICC], [mpicc], [])
    AS_IF([test -n "$MPICC"], [CC=$MPICC])
  ])
])

# TPB_CHECK_MPI: the compiler must link MPI programs.
AC_DEFUN([TPB_CHECK_MPI], [
  AC_CHECK_HEADER([mpi.h], [],
    [AC_MSG_ERROR([mpi.h not found: install libopenmpi-dev or configure with CC=mpicc])])
  AC_CHECK_FUNC([MPI_Init], [],
    [AC_MSG_ERROR([MPI_Init does not link: configure with CC=mpicc])])
])
