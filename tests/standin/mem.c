/*
 * mem.c - device and pinned host memory. A device allocation gets an address in a reserved,
 * inaccessible range (so host code that dereferences it faults, as on a GPU) and storage of
 * its own that only the stand-in touches; every call that takes a device pointer resolves it
 * here against the allocation it points into. Addresses are never reused: a freed one is
 * recognised as freed. Outside the sanitizers each storage has guard zones checked at free;
 * under ASan the storage is exactly the allocation's size, so ASan sees any overrun.
 * (CUDA Runtime API, "Memory Management"; unified addressing: pinned host memory is
 * mapped, cudaHostGetDevicePointer returns the host pointer.)
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <cuda_runtime_api.h>

#include "rt.h"

#if defined(__SANITIZE_ADDRESS__)
#define GUARD 0
#else
#define GUARD 256
#endif
#define GAP (64u << 10) /* unmapped bytes between two device allocations */
#define PATTERN 0xa5

enum { K_DEVICE, K_PINNED };

typedef struct {
    uintptr_t base;
    size_t bytes;
    unsigned char *store; /* device: the storage (data at store + GUARD); pinned: NULL */
    int device, kind, freed;
} entry_t;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static entry_t *tab;
static size_t ntab, cap;
static uintptr_t va_next, va_end;
static size_t used[TPBSI_MAX_DEVICES];
static long mallocs;

static int reserve(void)
{
    if (va_end)
        return 0;
    for (int shift = 40; shift >= 34; shift -= 2) {
        void *p = mmap(NULL, (size_t)1 << shift, PROT_NONE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p != MAP_FAILED) {
            va_next = (uintptr_t)p + GAP;
            va_end = (uintptr_t)p + ((size_t)1 << shift);
            return 0;
        }
    }
    return -1;
}

/* The index of the last entry whose base is <= p, or -1. */
static long find(uintptr_t p)
{
    long lo = 0, hi = (long)ntab - 1, at = -1;
    while (lo <= hi) {
        long mid = (lo + hi) / 2;
        if (tab[mid].base <= p) {
            at = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return at;
}

static int insert(entry_t e)
{
    if (ntab == cap) {
        size_t ncap = cap ? 2 * cap : 256;
        entry_t *t = realloc(tab, ncap * sizeof(*t));
        if (!t)
            return -1;
        tab = t;
        cap = ncap;
    }
    long at = find(e.base) + 1;
    memmove(&tab[at + 1], &tab[at], (ntab - (size_t)at) * sizeof(*tab));
    tab[at] = e;
    ntab++;
    return 0;
}

static const char *kind_name(const entry_t *e)
{
    return e->kind == K_DEVICE ? "device memory" : "pinned host memory";
}

void *tpbsi_resolve(const void *ptr, size_t bytes, tpbsi_where_t where, const char *what,
                    int *device)
{
    uintptr_t p = (uintptr_t)ptr;
    void *out = NULL;
    pthread_mutex_lock(&mu);
    long i = find(p);
    entry_t *e = i >= 0 ? &tab[i] : NULL;
    int inside = e && p < e->base + (e->bytes ? e->bytes : 1);
    if (!ptr) {
        tpbsi_complain("%s: a NULL pointer for %zu bytes", what, bytes);
    } else if (inside && e->freed) {
        tpbsi_complain("%s: %#" PRIxPTR " lies in device memory that was freed (cudaFree of "
                       "%#" PRIxPTR ", %zu bytes)",
                       what, p, e->base, e->bytes);
    } else if (inside && e->kind == K_PINNED && where == TPBSI_DEVICE) {
        tpbsi_complain("%s: %#" PRIxPTR " is pinned host memory, not device memory (a GPU reads "
                       "it over PCIe: a defect in a benchmark)",
                       what, p);
    } else if (inside && p + bytes > e->base + e->bytes) {
        tpbsi_complain("%s: %zu bytes at %#" PRIxPTR " reach %zu bytes past the end of their "
                       "allocation (%s of %zu bytes at %#" PRIxPTR ")",
                       what, bytes, p, (size_t)(p + bytes - e->base - e->bytes), kind_name(e),
                       e->bytes, e->base);
    } else if (inside) {
        out = e->kind == K_DEVICE ? e->store + GUARD + (p - e->base) : (void *)ptr;
        if (device)
            *device = e->device;
    } else if (e && e->kind == K_DEVICE && p < e->base + e->bytes + GAP) {
        tpbsi_complain("%s: %#" PRIxPTR " lies %zu bytes past the end of the device allocation "
                       "of %zu bytes at %#" PRIxPTR,
                       what, p, (size_t)(p - e->base - e->bytes), e->bytes, e->base);
    } else {
        tpbsi_complain("%s: %#" PRIxPTR " (%zu bytes) is not device memory (a host pointer?)", what,
                       p, bytes);
    }
    pthread_mutex_unlock(&mu);
    return out;
}

int tpbsi_is_device(const void *ptr)
{
    uintptr_t p = (uintptr_t)ptr;
    pthread_mutex_lock(&mu);
    long i = find(p);
    int yes = i >= 0 && tab[i].kind == K_DEVICE && !tab[i].freed &&
              p < tab[i].base + (tab[i].bytes ? tab[i].bytes : 1);
    pthread_mutex_unlock(&mu);
    return yes;
}

cudaError_t cudaMalloc(void **devPtr, size_t size)
{
    if (!devPtr)
        return tpbsi_ret(cudaErrorInvalidValue);
    cudaError_t err;
    tpbsi_ctx_t *c = tpbsi_ctx_current(&err);
    if (!c)
        return tpbsi_ret(err);
    const tpbsi_config_t *cf = tpbsi_config();
    long n = __atomic_add_fetch(&mallocs, 1, __ATOMIC_SEQ_CST);
    tpbsi_count(TPBSI_N_MALLOC, 1);
    if (cf->faulty && cf->fail_malloc == n)
        return tpbsi_ret(cudaErrorMemoryAllocation); /* planted */
    if (size == 0) {
        *devPtr = NULL;
        return cudaSuccess;
    }
    size_t span = (size + 255) / 256 * 256 + GAP;
    pthread_mutex_lock(&mu);
    cudaError_t e = cudaSuccess;
    entry_t ent = {0};
    if (reserve() != 0 || va_next + span > va_end)
        e = cudaErrorMemoryAllocation;
    else if (size > cf->mem_bytes - used[c->device])
        e = cudaErrorMemoryAllocation;
    else if (!(ent.store = malloc(size + 2 * GUARD)))
        e = cudaErrorMemoryAllocation;
    if (e == cudaSuccess) {
#if GUARD > 0
        memset(ent.store, PATTERN, GUARD);
        memset(ent.store + GUARD + size, PATTERN, GUARD);
#endif
        if (!cf->no_math) /* uninitialised device memory reads as NaN (nothing is checked
                             without arithmetic: its pages stay untouched, as a GPU's are) */
            memset(ent.store + GUARD, 0xff, size);
        ent.base = va_next;
        ent.bytes = size;
        ent.device = c->device;
        ent.kind = K_DEVICE;
        if (insert(ent) != 0) {
            free(ent.store);
            e = cudaErrorMemoryAllocation;
        } else {
            va_next += span;
            used[c->device] += size;
            *devPtr = (void *)ent.base;
        }
    }
    pthread_mutex_unlock(&mu);
    return tpbsi_ret(e);
}

static void check_guards(const entry_t *e)
{
#if GUARD > 0
    for (size_t i = 0; i < GUARD; i++) {
        if (e->store[i] != PATTERN || e->store[GUARD + e->bytes + i] != PATTERN) {
            tpbsi_complain("the stand-in wrote outside the device allocation of %zu bytes at "
                           "%#" PRIxPTR " (a bug of the stand-in)",
                           e->bytes, e->base);
            return;
        }
    }
#else
    (void)e; /* ASan's redzones are the guards */
#endif
}

cudaError_t cudaFree(void *devPtr)
{
    cudaError_t err;
    tpbsi_ctx_t *c = tpbsi_ctx_current(&err); /* cudaFree(NULL) creates the context */
    if (!c)
        return tpbsi_ret(err);
    if (!devPtr)
        return cudaSuccess;
    tpbsi_device_sync(c->device); /* cudaFree synchronises: nothing queued still uses it */
    pthread_mutex_lock(&mu);
    long i = find((uintptr_t)devPtr);
    entry_t *e = i >= 0 ? &tab[i] : NULL;
    cudaError_t r = cudaSuccess;
    if (!e || e->base != (uintptr_t)devPtr || e->kind != K_DEVICE || e->freed) {
        tpbsi_complain("cudaFree: %p is not the start of a live device allocation%s", devPtr,
                       e && e->freed && e->base == (uintptr_t)devPtr ? " (freed twice)" : "");
        r = cudaErrorInvalidValue;
    } else {
        check_guards(e);
        free(e->store);
        e->store = NULL;
        e->freed = 1;
        used[e->device] -= e->bytes;
    }
    pthread_mutex_unlock(&mu);
    return tpbsi_ret(r);
}

cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
{
    if (!pHost)
        return tpbsi_ret(cudaErrorInvalidValue);
    cudaError_t err;
    if (!tpbsi_ctx_current(&err))
        return tpbsi_ret(err);
    void *p = NULL;
    if (posix_memalign(&p, 4096, size ? size : 1) != 0)
        return tpbsi_ret(cudaErrorMemoryAllocation);
    entry_t ent = {.base = (uintptr_t)p, .bytes = size, .kind = K_PINNED};
    pthread_mutex_lock(&mu);
    int rc = insert(ent);
    pthread_mutex_unlock(&mu);
    if (rc != 0) {
        free(p);
        return tpbsi_ret(cudaErrorMemoryAllocation);
    }
    *pHost = p;
    return cudaSuccess;
}

cudaError_t cudaMallocHost(void **ptr, size_t size)
{
    return cudaHostAlloc(ptr, size, cudaHostAllocDefault);
}

cudaError_t cudaFreeHost(void *ptr)
{
    if (!ptr)
        return cudaSuccess;
    tpbsi_device_sync(tpbsi_current_device());
    pthread_mutex_lock(&mu);
    long i = find((uintptr_t)ptr);
    cudaError_t r = cudaSuccess;
    if (i < 0 || tab[i].base != (uintptr_t)ptr || tab[i].kind != K_PINNED) {
        tpbsi_complain("cudaFreeHost: %p is not pinned host memory from cudaHostAlloc", ptr);
        r = cudaErrorInvalidValue;
    } else {
        memmove(&tab[i], &tab[i + 1], (ntab - (size_t)i - 1) * sizeof(*tab));
        ntab--;
        free(ptr);
    }
    pthread_mutex_unlock(&mu);
    return tpbsi_ret(r);
}

cudaError_t cudaHostGetDevicePointer(void **pDevice, void *pHost, unsigned int flags)
{
    if (!pDevice || flags != 0)
        return tpbsi_ret(cudaErrorInvalidValue);
    pthread_mutex_lock(&mu);
    long i = find((uintptr_t)pHost);
    int ok = i >= 0 && tab[i].kind == K_PINNED && (uintptr_t)pHost < tab[i].base + tab[i].bytes;
    pthread_mutex_unlock(&mu);
    if (!ok) {
        tpbsi_complain("cudaHostGetDevicePointer: %p is not pinned host memory", pHost);
        return tpbsi_ret(cudaErrorInvalidValue);
    }
    *pDevice = pHost; /* unified addressing: the same address */
    return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t *free_b, size_t *total)
{
    if (!free_b || !total)
        return tpbsi_ret(cudaErrorInvalidValue);
    cudaError_t err;
    tpbsi_ctx_t *c = tpbsi_ctx_current(&err);
    if (!c)
        return tpbsi_ret(err);
    pthread_mutex_lock(&mu);
    *total = tpbsi_config()->mem_bytes;
    *free_b = *total - used[c->device];
    pthread_mutex_unlock(&mu);
    return cudaSuccess;
}

/* 1 if [p, p + bytes) is pinned host memory (for the copies' synchronous rules). */
int tpbsi_is_pinned(const void *p, size_t bytes)
{
    pthread_mutex_lock(&mu);
    long i = find((uintptr_t)p);
    int yes =
        i >= 0 && tab[i].kind == K_PINNED && (uintptr_t)p + bytes <= tab[i].base + tab[i].bytes;
    pthread_mutex_unlock(&mu);
    return yes;
}
