/*
 * gpu.h - what every GPU backend needs, apart from its vendor: timer marks
 * anchored on device events (gpu_marks.c), the --timeout watchdog over the
 * streams and the collective library's communicators (gpu_watch.c), a TP
 * group's communicator with MPI staging of device buffers (gpu_comm.c,
 * gpu_staging.c) and the GEMM plan cache (gpu_plans.c).
 *
 * A vendor backend embeds tpb_gpu_t first in its device and fills in one
 * tpb_gpu_vendor_t: the calls of its runtime (events, streams, copies, pinned
 * host memory) and of its collective library. Two streams are named by index:
 * TPB_GPU_GEMM (where the compute phase runs, in an SM partition's context when
 * emulating) and TPB_GPU_COMM (the collectives and copies); a vendor whose two
 * are one stream leaves `apart` 0. The CUDA backend is one such vendor
 * (cuda_vendor.c); doc/ARCHITECTURE.md has the recipe for another.
 */
#ifndef TPB_GPU_H
#define TPB_GPU_H

#include <stddef.h>

#include "backend/backend.h"
#include "backend/gpu/gpu_plan.h"
#include "backend/mpi_watch.h"

enum { TPB_GPU_GEMM = 0, TPB_GPU_COMM = 1 };

/** Length of a GPU's identity string (UUID or PCI bus id, NUL included). */
#define TPB_GPU_ID_LEN 64

typedef enum { TPB_GPU_TO_HOST, TPB_GPU_TO_DEVICE, TPB_GPU_ON_DEVICE } tpb_gpu_copy_t;

typedef struct tpb_gpu tpb_gpu_t;
typedef struct tpb_gpu_comm tpb_gpu_comm_t;

/** One vendor's calls. Every one returns TPB_OK or the vendor's error translated (with
 *  the call's name); handles are opaque to the generic layer. */
typedef struct {
    const char *name; /* its collective library, for messages ("NCCL") */
    /** Make stream s's context current around calls on it, and restore the one before. */
    void (*enter)(tpb_gpu_t *g, int s);
    void (*leave)(tpb_gpu_t *g, int s);
    /** An event in stream s's context: timing 1 for marks, 0 for ordering only. */
    tpb_status_t (*event_create)(tpb_gpu_t *g, int s, int timing, void **ev);
    void (*event_destroy)(void *ev);
    /** Record ev on stream s (its context made current by the caller). */
    tpb_status_t (*event_record)(tpb_gpu_t *g, void *ev, int s);
    /** The host waits for ev. */
    tpb_status_t (*event_sync)(void *ev);
    /** Milliseconds from event a to event b (both recorded and complete). */
    tpb_status_t (*event_elapsed_ms)(void *a, void *b, float *ms);
    /** Stream s waits on the device for ev. */
    tpb_status_t (*stream_wait)(tpb_gpu_t *g, int s, void *ev);
    /** *done = 1 if stream s has finished all its work; an error it hit is returned. */
    tpb_status_t (*stream_query)(tpb_gpu_t *g, int s, int *done);
    /** The host waits for stream s. */
    tpb_status_t (*stream_sync)(tpb_gpu_t *g, int s);
    /** n bytes from src to dst on the comm stream (asynchronous to the host). */
    tpb_status_t (*copy_async)(tpb_gpu_t *g, void *dst, const void *src, size_t n,
                               tpb_gpu_copy_t dir);
    /** Page-locked host memory (what a device copies from and to at full speed). */
    tpb_status_t (*host_alloc)(size_t n, void **p);
    void (*host_free)(void *p);
    /** The start gate of the compute phase: the idle GEMM stream held at c0 until the GEMM
     *  and the event that closes it are queued (a no-op where the vendor has none), and let
     *  go (tpb_gpu_mark, after that event; every wait for the GPU first). */
    tpb_status_t (*gate_arm)(tpb_gpu_t *g, int s); /* s: the stream held */
    void (*gate_release)(tpb_gpu_t *g);
    /** The collective library: a group's communicator (c->size > 1, --comm ccl), a
     *  collective on the comm stream, its clean close, its asynchronous error and abort. */
    tpb_status_t (*ccl_open)(tpb_gpu_comm_t *c);
    tpb_status_t (*ccl_post)(tpb_gpu_comm_t *c, const tpb_coll_desc_t *d);
    void (*ccl_close)(tpb_gpu_comm_t *c);
    tpb_status_t (*ccl_error)(tpb_gpu_comm_t *c);
    void (*ccl_abort)(tpb_gpu_comm_t *c);
} tpb_gpu_vendor_t;

/** The GEMM plan cache: the vendor's plans (size bytes each, opaque here) found by their
 *  key; every plan built is kept (a layer plans each of its GEMMs once, untimed). */
typedef struct {
    size_t size;              /* bytes of one vendor plan */
    unsigned char *plans;     /* n of them */
    tpb_gpu_plan_key_t *keys; /* plans[i] was built for keys[i] */
    size_t n, cap;
    int *index;    /* open addressing by tpb_gpu_plan_hash: plan numbers, -1 empty */
    size_t nindex; /* a power of two, at least twice n */
} tpb_gpu_plans_t;

/** One rank's GPU, the part every vendor shares (first in the vendor's device). */
struct tpb_gpu {
    tpb_device_t base; /* first: passed as a tpb_device_t */
    const tpb_gpu_vendor_t *v;
    tpb_backend_args_t args;
    const struct tpb_gpu_class *cls; /* its vendor's lifecycle and names (gpu_device.h) */
    int device;                      /* the vendor's index of the device this rank drives */
    char id[TPB_GPU_ID_LEN];         /* its identity ("GPU-..." UUID): ranks on one GPU share it */
    int ranks_on_device;             /* node-local ranks sharing this GPU (told apart by id) */
    int isolated;                /* each local rank sees one GPU of its own (per-task binding) */
    int apart;                   /* the GEMM and comm streams are two streams */
    int gemm_queued;             /* a GEMM was queued since c0 armed the gate (the vendor's
                                    compute phase sets it) */
    int release_due;             /* ... and a compute-end mark closed it: the gate lets go at
                                    the iteration's end (x1), the next c0, or a wait */
    int comm_pending;            /* comm_done recorded and not yet waited on by the GEMM stream */
    void *gemm_done, *comm_done; /* ordering events of the two streams */
    /* marks: one event pool per stream (an event is recorded on a stream of its context) */
    void **ev[2];
    unsigned char *event_stream; /* the stream each mark was recorded on */
    size_t nevents;
    void *anchor[2][2];    /* [first, second][stream] */
    void *anchor_spare[2]; /* [stream]: a try at an anchor, kept where it is the better one */
    double anchor_us[2][2];
    double anchor_half_us[2][2]; /* half the host bracket of the try each anchor kept */
    /* --comm mpi staging */
    void *host_send, *host_recv; /* host_recv sits 1088 bytes into its allocation */
    void *host_recv_base;        /* (4K aliasing: gpu_staging.c) */
    size_t host_bytes;
    /* the groups whose communicators the watchdog polls */
    tpb_gpu_comm_t *watch[8];
    int nwatch;
    unsigned wait_seq;
    tpb_gpu_plans_t plans;
};

/** A TP group's communicator (its tpb_comm_t). */
struct tpb_gpu_comm {
    tpb_comm_t base; /* first */
    tpb_gpu_t *gpu;
    MPI_Comm mpi; /* the group (duplicated) */
    void *ccl;    /* the collective library's communicator; NULL with --comm mpi, a group of
                     one, or after an abort */
    int rank, size;
    tpb_watch_t watch; /* --comm mpi: the blocking calls' watchdog (mpi_watch.h) */
    int watched;
};

/* ---- gpu_marks.c: the device ops marks_prepare, mark and marks_read ---- */
/** The streams' ordering events and the marks' anchors (after the streams exist). */
tpb_status_t tpb_gpu_init(tpb_gpu_t *g);
/** Everything tpb_gpu_init and the marks, staging and plans made (plan: the vendor's
 *  destructor of one plan). */
void tpb_gpu_free(tpb_gpu_t *g, void (*plan)(void *));
tpb_status_t tpb_gpu_marks_prepare(tpb_device_t *dev, size_t n);
tpb_status_t tpb_gpu_mark(tpb_device_t *dev, size_t slot, tpb_mark_phase_t phase);
tpb_status_t tpb_gpu_marks_read(tpb_device_t *dev, size_t n, double *us);
double tpb_gpu_marks_within(tpb_device_t *dev);
/** Record mark slot on the comm stream (a chunk's collective). */
tpb_status_t tpb_gpu_mark_comm(tpb_gpu_t *g, size_t slot);

/* ---- gpu_order.c: the two streams' order ---- */
/** The comm stream waits for the GEMMs queued so far (nothing when they are one stream). */
tpb_status_t tpb_gpu_comm_after_gemm(tpb_gpu_t *g);
/** The end of a collective: the next GEMM is to wait for it (comm_pending). */
tpb_status_t tpb_gpu_comm_end(tpb_gpu_t *g);
/** The GEMM stream waits for the last collective ended, if one is pending. */
tpb_status_t tpb_gpu_gemm_after_comm(tpb_gpu_t *g);
/** The device op copy: after all queued work, waited for. */
tpb_status_t tpb_gpu_copy(tpb_device_t *dev, void *dst, const void *src, size_t bytes,
                          tpb_copy_dir_t dir);
/** The device op sync: every rank of the TP group waits here (tpb_gpu_wait). */
tpb_status_t tpb_gpu_sync(tpb_device_t *dev);

/* ---- gpu_watch.c ---- */
/**
 * Wait for all work submitted by this rank under the --timeout watchdog. With
 * collective = 1 every rank of the TP group waits at this point (sync and
 * marks_read), so the ranks also tell each other they arrived, and a timeout
 * aborts the communicators and names those that did not; copies and set-up wait with
 * collective = 0.
 */
tpb_status_t tpb_gpu_wait(tpb_gpu_t *g, int collective);
/** Poll c's communicator while waiting (up to 8 groups), and stop. */
void tpb_gpu_watch_add(tpb_gpu_comm_t *c);
void tpb_gpu_watch_remove(tpb_gpu_comm_t *c);

/* ---- gpu_comm.c: the device op comm_open ---- */
tpb_status_t tpb_gpu_comm_open(tpb_device_t *dev, MPI_Comm group, tpb_comm_t **out);

/* ---- gpu_staging.c: --comm mpi ---- */
/** The collective through page-locked host buffers and MPI's blocking call, under the
 *  group's watchdog; what it received copied back to the device (on the comm stream). */
tpb_status_t tpb_gpu_staged_post(tpb_gpu_comm_t *c, const tpb_coll_desc_t *d);

/* ---- gpu_plans.c ---- */
/** Start an empty cache of plans of size bytes. */
void tpb_gpu_plans_init(tpb_gpu_plans_t *p, size_t size);
/** The plan built for key, or NULL. */
void *tpb_gpu_plans_find(const tpb_gpu_plans_t *p, const tpb_gpu_plan_key_t *key);
/** Room for one more plan: *slot is where the vendor builds it (zeroed), kept by
 *  tpb_gpu_plans_add; a later reserve or add may move the plans. */
tpb_status_t tpb_gpu_plans_reserve(tpb_gpu_plans_t *p, void **slot);
/** Keep the plan built in the reserved slot for key (not found before). */
void tpb_gpu_plans_add(tpb_gpu_plans_t *p, const tpb_gpu_plan_key_t *key);
/** Every plan destroyed with destroy, the cache emptied. */
void tpb_gpu_plans_free(tpb_gpu_plans_t *p, void (*destroy)(void *plan));

#endif /* TPB_GPU_H */
