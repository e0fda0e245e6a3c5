/*
 * testfault.h - the faults tpbal's own tests plant through TPBAL_TEST_FAULT (never a user's
 * switch): shard-offset and chunk-offset (run/layer*.c), cold-plans (run/calibrate.c),
 * no-padding (the CUDA backend's emulation probe).
 */
#ifndef TPB_TESTFAULT_H
#define TPB_TESTFAULT_H

/** 1 if TPBAL_TEST_FAULT names `name`, else 0. */
int tpb_test_fault(const char *name);

#endif /* TPB_TESTFAULT_H */
