/*
 * seal.h - what a --repeat run's repeat.json says if the run ends before its last pass: the
 * texts for each way it can end early ("interrupted" by a stop, "timeout" by a watchdog,
 * "failed" by an error), rendered by the main thread whenever a pass ends, and written at most
 * once by whichever thread ends the run (the signal thread on a stop, before it gives --out
 * back; a watchdog's; the main thread on an error). Rank 0's; a process holds one.
 */
#ifndef TPB_SEAL_H
#define TPB_SEAL_H

#include "base/buf.h"

/** The ways a run ends early, the statuses repeat.json then says. */
#define TPB_SEAL_WAYS 3
extern const char *const tpb_seal_status[TPB_SEAL_WAYS]; /* interrupted, timeout, failed */

/** Arm with dir and the texts (one per tpb_seal_status, whole files), taken over (freed
 *  here); replaces what was armed. Ignored once fired. */
void tpb_seal_arm(const char *dir, tpb_buf_t texts[TPB_SEAL_WAYS]);

/** Write the armed text for status (one of tpb_seal_status) into dir/repeat.json, once;
 *  nothing where nothing is armed or it fired already. Any thread. */
void tpb_seal_fire(const char *status);

/** Disarm (the run ended as its repeat.json already says); 1 if it had fired. */
int tpb_seal_disarm(void);

#endif /* TPB_SEAL_H */
