/*
 * tpb_test_mpi.h - main() of a Check test that runs under mpirun: MPI_Init
 * before the runner, no fork (a forked child breaks MPI), and the failure
 * count summed over the ranks so that every rank exits alike.
 */
#ifndef TPB_TEST_MPI_H
#define TPB_TEST_MPI_H

#include <check.h>
#include <mpi.h>
#include <stdlib.h>

#define TPB_TEST_MPI_MAIN(suite_fn)                                                                \
    int main(int argc, char **argv)                                                                \
    {                                                                                              \
        MPI_Init(&argc, &argv);                                                                    \
        SRunner *sr = srunner_create(suite_fn());                                                  \
        srunner_set_fork_status(sr, CK_NOFORK);                                                    \
        srunner_run_all(sr, CK_NORMAL);                                                            \
        int failed = srunner_ntests_failed(sr), total = 0;                                         \
        srunner_free(sr);                                                                          \
        MPI_Allreduce(&failed, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);                       \
        MPI_Finalize();                                                                            \
        return total ? EXIT_FAILURE : EXIT_SUCCESS;                                                \
    }

#endif /* TPB_TEST_MPI_H */
