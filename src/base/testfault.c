/* testfault.c - the planted faults of tpbal's own tests (testfault.h). */
#include "base/testfault.h"

#include <stdlib.h>
#include <string.h>

int tpb_test_fault(const char *name)
{
    const char *f = getenv("TPBAL_TEST_FAULT");
    return f && strcmp(f, name) == 0;
}
