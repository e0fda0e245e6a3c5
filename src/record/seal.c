/* seal.c - repeat.json's text for a run that ends early, written once by the thread that ends
 * it (seal.h). */
#include "record/seal.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "record/outfile.h"

const char *const tpb_seal_status[TPB_SEAL_WAYS] = {"interrupted", "timeout", "failed"};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char seal_dir[4096];
static tpb_buf_t armed[TPB_SEAL_WAYS];
static int is_armed, fired;

static void drop(void)
{
    for (int i = 0; i < TPB_SEAL_WAYS; i++)
        tpb_buf_free(&armed[i]);
    is_armed = 0;
}

void tpb_seal_arm(const char *dir, tpb_buf_t texts[TPB_SEAL_WAYS])
{
    pthread_mutex_lock(&lock);
    if (!fired) {
        drop();
        snprintf(seal_dir, sizeof(seal_dir), "%s", dir);
        for (int i = 0; i < TPB_SEAL_WAYS; i++) {
            armed[i] = texts[i];
            texts[i] = (tpb_buf_t)TPB_BUF_INIT;
        }
        is_armed = 1;
    }
    pthread_mutex_unlock(&lock);
    for (int i = 0; i < TPB_SEAL_WAYS; i++)
        tpb_buf_free(&texts[i]); /* fired already: not wanted */
}

void tpb_seal_fire(const char *status)
{
    pthread_mutex_lock(&lock);
    for (int i = 0; is_armed && !fired && i < TPB_SEAL_WAYS; i++)
        if (strcmp(status, tpb_seal_status[i]) == 0 && tpb_buf_ok(&armed[i])) {
            fired = 1; /* a failed write says its reason on the line that ends the run */
            (void)tpb_outfile_replace(seal_dir, "repeat.json", armed[i].data, armed[i].len);
        }
    drop();
    pthread_mutex_unlock(&lock);
}

int tpb_seal_disarm(void)
{
    pthread_mutex_lock(&lock);
    int was = fired;
    drop();
    pthread_mutex_unlock(&lock);
    return was;
}
