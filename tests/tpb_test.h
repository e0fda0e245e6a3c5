/*
 * tpb_test.h - the main() of a Check unit test program. Pure-module tests use
 * Check's default fork mode; MPI tests call tpb_test_main_mpi (no fork, the
 * failure count reduced over the ranks so that every rank exits alike).
 */
#ifndef TPB_TEST_H
#define TPB_TEST_H

#include <check.h>
#include <stdlib.h>

static inline int tpb_test_main(Suite *s)
{
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#define TPB_TEST_MAIN(suite_fn)                                                                    \
    int main(void)                                                                                 \
    {                                                                                              \
        return tpb_test_main(suite_fn());                                                          \
    }

#endif /* TPB_TEST_H */
