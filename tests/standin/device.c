/*
 * device.c - the stand-in's devices: how many a process sees (CUDA_VISIBLE_DEVICES
 * honoured), what each reports (an H200: compute capability 9.0, 132 SMs, its PCI id and
 * UUID, TPBAL_STANDIN_MEM of memory), the current device, primary contexts with the compute
 * modes (CUDA Runtime API, "Device Management"), versions and error strings.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "rt.h"

#define CTX_MAGIC 0x43545831u

static __thread int tls_device;
static __thread cudaError_t tls_last;
static __thread tpbsi_ctx_t *tls_stack[8];
static __thread int tls_depth;

static pthread_mutex_t ctx_mu = PTHREAD_MUTEX_INITIALIZER;
static tpbsi_ctx_t *primary[TPBSI_MAX_DEVICES];
static int visible[TPBSI_MAX_DEVICES], nvisible = -1;

cudaError_t tpbsi_ret(cudaError_t e)
{
    if (e != cudaSuccess)
        tls_last = e;
    return e;
}

static void uuid_of(int phys, unsigned char out[16])
{
    char host[256] = "";
    gethostname(host, sizeof(host) - 1);
    for (int i = 0; i < 16; i++) { /* FNV-1a over the host, the ordinal and the byte's index */
        unsigned long long h = 1469598103934665603ull;
        for (const char *p = host; *p; p++)
            h = (h ^ (unsigned char)*p) * 1099511628211ull;
        h = (h ^ (unsigned)phys) * 1099511628211ull;
        h = (h ^ (unsigned)i) * 1099511628211ull;
        h ^= h >> 31; /* splitmix64's finaliser: every input bit reaches every output bit */
        h *= 0xbf58476d1ce4e5b9ull;
        h ^= h >> 27;
        out[i] = (unsigned char)(h >> 56);
    }
}

static void uuid_text(int phys, char *out, size_t cap)
{
    unsigned char u[16];
    uuid_of(phys, u);
    snprintf(out, cap, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
             u[14], u[15]);
}

/* CUDA_VISIBLE_DEVICES: ordinals or UUIDs (a prefix suffices), up to the first that names no
 * device, as the CUDA C Programming Guide describes it. */
static void load_visible(void)
{
    int n = tpbsi_config()->ndev;
    const char *v = getenv("CUDA_VISIBLE_DEVICES");
    nvisible = 0;
    if (!v) {
        for (int d = 0; d < n; d++)
            visible[nvisible++] = d;
        return;
    }
    char buf[1024];
    snprintf(buf, sizeof(buf), "%s", v);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok && nvisible < TPBSI_MAX_DEVICES;
         tok = strtok_r(NULL, ",", &save)) {
        int d = -1;
        if (strncmp(tok, "GPU-", 4) == 0) {
            for (int p = 0; p < n && d < 0; p++) {
                char id[64];
                uuid_text(p, id, sizeof(id));
                if (strncmp(id, tok, strlen(tok)) == 0)
                    d = p;
            }
        } else {
            char *end;
            long x = strtol(tok, &end, 10);
            if (!*end && x >= 0 && x < n)
                d = (int)x;
        }
        if (d < 0)
            break;
        visible[nvisible++] = d;
    }
}

int tpbsi_visible_count(void)
{
    pthread_mutex_lock(&ctx_mu);
    if (nvisible < 0)
        load_visible();
    int n = nvisible;
    pthread_mutex_unlock(&ctx_mu);
    return n;
}

int tpbsi_physical(int d)
{
    return d >= 0 && d < tpbsi_visible_count() ? visible[d] : 0;
}

int tpbsi_current_device(void)
{
    return tls_device;
}

void tpbsi_device_bus_id(int device, char *out, size_t cap)
{
    snprintf(out, cap, "00000000:%02X:00.0", 0x18 + 0x10 * tpbsi_physical(device));
}

/* A lock file of the node's devices (TPBAL_STANDIN_DIR), opened once, or -1. */
int tpbsi_lock_fd(const char *what, int phys)
{
    const char *dir = tpbsi_config()->dir;
    if (!dir || !*dir)
        return -1;
    char path[4096];
    snprintf(path, sizeof(path), "%s/gpu%d.%s", dir, phys, what);
    int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        tpbsi_complain("cannot open %s: %s", path, strerror(errno));
    return fd;
}

/* Exclusive-process mode: the node's first process to create a context on the device holds
 * it; another gets cudaErrorDevicesUnavailable ("busy or unavailable"). */
static cudaError_t claim(int phys)
{
    const tpbsi_config_t *c = tpbsi_config();
    if (c->busy && c->faulty)
        return cudaErrorDevicesUnavailable;
    if (c->compute_mode == cudaComputeModeProhibited)
        return cudaErrorDevicesUnavailable;
    if (c->compute_mode != cudaComputeModeExclusiveProcess)
        return cudaSuccess;
    int fd = tpbsi_lock_fd("owner", phys);
    if (fd < 0)
        return cudaSuccess; /* no node directory: not enforced (README) */
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        close(fd);
        return cudaErrorDevicesUnavailable;
    }
    return cudaSuccess; /* held until the process ends */
}

cudaError_t tpbsi_ctx_primary(int device, tpbsi_ctx_t **out)
{
    if (device < 0 || device >= tpbsi_visible_count())
        return cudaErrorInvalidDevice;
    cudaError_t e = cudaSuccess;
    int phys = tpbsi_physical(device);
    pthread_mutex_lock(&ctx_mu);
    if (!primary[device]) {
        e = claim(phys);
        tpbsi_ctx_t *c = e == cudaSuccess ? calloc(1, sizeof(*c)) : NULL;
        if (e == cudaSuccess && !c)
            e = cudaErrorMemoryAllocation;
        if (c) {
            c->magic = CTX_MAGIC;
            c->device = device;
            c->sms = TPBSI_SMS;
            primary[device] = c;
        }
    }
    tpbsi_ctx_t *c = primary[device];
    pthread_mutex_unlock(&ctx_mu);
    if (e != cudaSuccess)
        return e;
    if (!c->legacy) {
        tpbsi_stream_t *s;
        e = tpbsi_stream_create(c, cudaStreamDefault, 1, &s);
        pthread_mutex_lock(&ctx_mu);
        if (e == cudaSuccess && !c->legacy)
            c->legacy = s;
        pthread_mutex_unlock(&ctx_mu);
    }
    *out = c;
    return e;
}

tpbsi_ctx_t *tpbsi_ctx_current(cudaError_t *err)
{
    if (tls_depth > 0) {
        *err = cudaSuccess;
        return tls_stack[tls_depth - 1];
    }
    tpbsi_ctx_t *c = NULL;
    *err = tpbsi_ctx_primary(tls_device, &c);
    return *err == cudaSuccess ? c : NULL;
}

int tpbsi_ctx_push(tpbsi_ctx_t *c)
{
    if (!c || c->magic != CTX_MAGIC || tls_depth >= 8)
        return -1;
    tls_stack[tls_depth++] = c;
    return 0;
}

tpbsi_ctx_t *tpbsi_ctx_pop(void)
{
    return tls_depth > 0 ? tls_stack[--tls_depth] : NULL;
}

cudaError_t cudaGetDeviceCount(int *count)
{
    if (!count)
        return tpbsi_ret(cudaErrorInvalidValue);
    int n = tpbsi_visible_count();
    *count = n;
    return n ? cudaSuccess : tpbsi_ret(cudaErrorNoDevice);
}

cudaError_t cudaSetDevice(int device)
{
    if (tpbsi_in_callback())
        return tpbsi_ret(cudaErrorNotPermitted);
    if (device < 0 || device >= tpbsi_visible_count())
        return tpbsi_ret(cudaErrorInvalidDevice);
    tls_device = device;
    tpbsi_ctx_t *c; /* CUDA 12 and later: cudaSetDevice initialises the primary context */
    return tpbsi_ret(tpbsi_ctx_primary(device, &c));
}

cudaError_t cudaGetDevice(int *device)
{
    if (!device)
        return tpbsi_ret(cudaErrorInvalidValue);
    *device = tls_device;
    return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *prop, int device)
{
    if (!prop)
        return tpbsi_ret(cudaErrorInvalidValue);
    if (device < 0 || device >= tpbsi_visible_count())
        return tpbsi_ret(cudaErrorInvalidDevice);
    int phys = tpbsi_physical(device);
    memset(prop, 0, sizeof(*prop));
    snprintf(prop->name, sizeof(prop->name), "NVIDIA H200 (tpbal stand-in)");
    uuid_of(phys, (unsigned char *)prop->uuid.bytes);
    prop->totalGlobalMem = tpbsi_config()->mem_bytes;
    prop->sharedMemPerBlock = 48 << 10;
    prop->regsPerBlock = 65536;
    prop->warpSize = 32;
    prop->maxThreadsPerBlock = 1024;
    prop->major = 9;
    prop->minor = 0;
    prop->multiProcessorCount = TPBSI_SMS;
    prop->canMapHostMemory = 1;
    prop->concurrentKernels = 1;
    prop->ECCEnabled = 1;
    prop->pciBusID = 0x18 + 0x10 * phys;
    prop->asyncEngineCount = 3;
    prop->unifiedAddressing = 1;
    prop->memoryBusWidth = 6144;
    prop->l2CacheSize = 50 << 20;
    prop->maxThreadsPerMultiProcessor = 2048;
    prop->gpuPciDeviceID = 0x233510deu; /* H200 SXM's device id, NVIDIA's vendor id */
    prop->hostNumaId = -1;
    prop->deviceNumaId = -1;
    return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
    if (!value)
        return tpbsi_ret(cudaErrorInvalidValue);
    if (device < 0 || device >= tpbsi_visible_count())
        return tpbsi_ret(cudaErrorInvalidDevice);
    switch (attr) {
    case cudaDevAttrComputeMode: *value = tpbsi_config()->compute_mode; break;
    case cudaDevAttrClockRate: *value = 1980000; break; /* kHz: the H200's maximum SM clock */
    case cudaDevAttrMultiProcessorCount: *value = TPBSI_SMS; break;
    case cudaDevAttrComputeCapabilityMajor: *value = 9; break;
    case cudaDevAttrComputeCapabilityMinor: *value = 0; break;
    case cudaDevAttrPciBusId: *value = 0x18 + 0x10 * tpbsi_physical(device); break;
    case cudaDevAttrPciDeviceId:
    case cudaDevAttrPciDomainId: *value = 0; break;
    case cudaDevAttrCanMapHostMemory:
    case cudaDevAttrUnifiedAddressing: *value = 1; break;
    case cudaDevAttrMemoryClockRate: *value = 3201000; break;
    case cudaDevAttrGlobalMemoryBusWidth: *value = 6144; break;
    default:
        tpbsi_complain("cudaDeviceGetAttribute: attribute %d is not modelled", (int)attr);
        return tpbsi_ret(cudaErrorInvalidValue);
    }
    return cudaSuccess;
}

cudaError_t cudaDeviceGetPCIBusId(char *pciBusId, int len, int device)
{
    if (!pciBusId || len < 13)
        return tpbsi_ret(cudaErrorInvalidValue);
    if (device < 0 || device >= tpbsi_visible_count())
        return tpbsi_ret(cudaErrorInvalidDevice);
    tpbsi_device_bus_id(device, pciBusId, (size_t)len);
    return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int *v)
{
    if (!v)
        return tpbsi_ret(cudaErrorInvalidValue);
    *v = 13000; /* a 580 driver */
    return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int *v)
{
    if (!v)
        return tpbsi_ret(cudaErrorInvalidValue);
    *v = CUDART_VERSION;
    return cudaSuccess;
}

cudaError_t cudaGetLastError(void)
{
    cudaError_t e = tls_last;
    tls_last = cudaSuccess;
    return e;
}

cudaError_t cudaPeekAtLastError(void)
{
    return tls_last;
}

const char *cudaGetErrorName(cudaError_t e)
{
    switch (e) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    case cudaErrorNoDevice: return "cudaErrorNoDevice";
    case cudaErrorDevicesUnavailable: return "cudaErrorDevicesUnavailable";
    case cudaErrorInvalidResourceHandle: return "cudaErrorInvalidResourceHandle";
    case cudaErrorNotReady: return "cudaErrorNotReady";
    case cudaErrorNotPermitted: return "cudaErrorNotPermitted";
    case cudaErrorIllegalAddress: return "cudaErrorIllegalAddress";
    default: return "cudaErrorUnknown";
    }
}

const char *cudaGetErrorString(cudaError_t e)
{
    switch (e) { /* the runtime's own wording */
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInitializationError: return "initialization error";
    case cudaErrorInsufficientDriver:
        return "CUDA driver version is insufficient for CUDA runtime version";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorDevicesUnavailable: return "CUDA-capable device(s) is/are busy or unavailable";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorNotReady: return "device not ready";
    case cudaErrorNotPermitted: return "operation not permitted";
    case cudaErrorNotSupported: return "operation not supported";
    case cudaErrorIllegalAddress: return "an illegal memory access was encountered";
    case cudaErrorLaunchFailure: return "unspecified launch failure";
    default: return "unrecognized error code";
    }
}
