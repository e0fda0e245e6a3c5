/*
 * rt.h - private to the stand-in's libcudart.so.13: contexts (a device's primary one and
 * green ones) and the calls its files make of each other.
 */
#ifndef TPBSI_RT_H
#define TPBSI_RT_H

#include <cuda_runtime_api.h>

#include "standin.h"

#define TPBSI_SMS 132 /* an H200's SMs */

/** A context: a device's primary one, or a green one holding sms of its SMs. */
typedef struct tpbsi_ctx {
    unsigned magic;
    int device;
    int green;
    unsigned sms;
    tpbsi_stream_t *legacy; /**< the default stream (primary contexts) */
} tpbsi_ctx_t;

/** The primary context of device, created on first use: cudaErrorDevicesUnavailable when the
 *  device is busy, prohibited or held by another process in exclusive-process mode. */
cudaError_t tpbsi_ctx_primary(int device, tpbsi_ctx_t **out);

/** The context current on this thread: the top of its push stack, else the primary one of the
 *  current device (created). NULL with *err set when it cannot be created. */
tpbsi_ctx_t *tpbsi_ctx_current(cudaError_t *err);

/** Push and pop this thread's current context (the driver's cuCtxPushCurrent/Pop). */
int tpbsi_ctx_push(tpbsi_ctx_t *c);
tpbsi_ctx_t *tpbsi_ctx_pop(void);

/** A stream of context c (flags: cudaStreamNonBlocking or default; legacy: the default
 *  stream of a primary context), its worker started. */
cudaError_t tpbsi_stream_create(tpbsi_ctx_t *c, unsigned flags, int legacy, tpbsi_stream_t **out);

/** Wait until every stream of device has finished what was queued so far. */
void tpbsi_device_sync(int device);

/** The number of devices this process sees (TPBAL_STANDIN_DEVICES, CUDA_VISIBLE_DEVICES),
 *  and the ordinal of visible device d on the node (speeds, UUIDs and locks use it). */
int tpbsi_visible_count(void);
int tpbsi_physical(int d);

/** A lock file of the node's device phys (TPBAL_STANDIN_DIR/gpuN.what), opened, or -1 when
 *  there is no node directory. */
int tpbsi_lock_fd(const char *what, int phys);

/** 1 if [p, p + bytes) is pinned host memory (cudaHostAlloc), else 0 (pageable). */
int tpbsi_is_pinned(const void *p, size_t bytes);

/** Record e as this thread's last error (cudaGetLastError) and return it. */
cudaError_t tpbsi_ret(cudaError_t e);

/** Run fn(op) on s right away when s is idle and the call is synchronous (a blocking copy):
 *  queue it and wait for it. */
void tpbsi_enqueue_wait(tpbsi_stream_t *s, tpbsi_op_t *op);

/** The thread is a stream worker running a host function: CUDA calls are not allowed. */
int tpbsi_in_callback(void);

#endif /* TPBSI_RT_H */
