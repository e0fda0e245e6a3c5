/*
 * cuda_device.c - which GPU a rank drives and whether it can: the devices visible, the
 * driver too old, opening the device (its compute mode), the node's ranks per GPU (told
 * apart by UUID), the dtype on this GPU, binding near it, its NUMA node.
 */
#include <hwloc.h>
#include <hwloc/cudart.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/cuda_internal.h"
#include "backend/cuda/cuda_plan.h"

int tpb_cuda_device_count(void)
{
    int n = 0; /* left untouched on error: no driver, stub libcuda */
    if (cudaGetDeviceCount(&n) != cudaSuccess)
        return 0;
    return n;
}

/* Why no GPU can be used although a driver is installed ("" if there is no such reason):
 * cudaErrorInsufficientDriver means "no driver" on a machine without one, and "driver too
 * old for this runtime" on a machine with one. */
void tpb_cuda_driver_problem(char *why, size_t cap)
{
    int n = 0;
    why[0] = '\0';
    if (cudaGetDeviceCount(&n) != cudaErrorInsufficientDriver)
        return;
    FILE *f = fopen("/proc/driver/nvidia/version", "r");
    if (!f)
        return; /* no NVIDIA driver at all: plainly no GPU */
    char line[256] = "";
    if (!fgets(line, sizeof(line), f))
        line[0] = '\0';
    fclose(f);
    line[strcspn(line, "\n")] = '\0';
    snprintf(why, cap,
             "the NVIDIA driver is too old for the CUDA %d runtime of this build "
             "(CUDA 13 needs a driver >= 580): update the driver (%.120s)",
             CUDART_VERSION / 1000, line);
}

static tpb_status_t check_dtype(const tpb_cuda_t *be, tpb_dtype_t dt, tpb_comm_kind_t comm)
{
    int cc = be->prop.major * 10 + be->prop.minor;
    int need = dt == TPB_DTYPE_FP8 ? 89 : (dt == TPB_DTYPE_BF16 || dt == TPB_DTYPE_TF32) ? 80 : 0;
    if (cc < need)
        return tpb_err_set(TPB_ERR_UNSUPPORTED,
                           "--dtype %s: unsupported on this GPU (%s, compute capability %d.%d; "
                           "needs %d.%d or newer)",
                           tpb_dtype_name(dt), be->prop.name, be->prop.major, be->prop.minor,
                           need / 10, need % 10);
    return tpb_cuda_check_comm_dtype(dt, comm);
}

/* --bind gpu: this process onto the cores near its GPU (hwloc's cudart helper). */
tpb_status_t tpb_cuda_bind_near_gpu(int dev)
{
    hwloc_topology_t topo;
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    tpb_status_t st = TPB_OK;
    if (!set || hwloc_topology_init(&topo) != 0)
        return tpb_err_set(TPB_ERR_BACKEND, "--bind gpu: hwloc initialisation failed");
    if (hwloc_topology_load(topo) != 0 || hwloc_cudart_get_device_cpuset(topo, dev, set) != 0 ||
        hwloc_set_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) != 0)
        st = tpb_err_set(TPB_ERR_BACKEND, "--bind gpu: cannot bind to the cores near GPU %d", dev);
    hwloc_bitmap_free(set);
    hwloc_topology_destroy(topo);
    return st;
}

/* The device's UUID as nvidia-smi prints it ("GPU-xxxxxxxx-..."). */
static void format_uuid(const struct cudaDeviceProp *p, char *out, size_t cap)
{
    const unsigned char *u = (const unsigned char *)p->uuid.bytes;
    snprintf(out, cap, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
             u[14], u[15]);
}

/* More ranks on a node than GPUs: a GPU in exclusive-process compute mode takes one process
 * only (NCCL's refusal of two ranks on one GPU is the generic layer's: tpb_gpu_open). */
static tpb_status_t check_sharing(const tpb_cuda_t *be)
{
    int mode = cudaComputeModeDefault;
    if (be->gpu.ranks_on_device > 1 &&
        cudaDeviceGetAttribute(&mode, cudaDevAttrComputeMode, be->gpu.device) == cudaSuccess &&
        (mode == cudaComputeModeExclusiveProcess || mode == cudaComputeModeProhibited))
        return tpb_err_set(TPB_ERR_INVALID,
                           "%d ranks of this node drive GPU %s, which is in %s compute mode: "
                           "start one rank per GPU, or ask the admin for the default mode "
                           "(nvidia-smi -c DEFAULT)",
                           be->gpu.ranks_on_device, be->gpu.id,
                           mode == cudaComputeModeProhibited ? "prohibited" : "exclusive-process");
    return TPB_OK;
}

/* The NUMA node of the GPU at PCI bus id bus (-1 if the system does not say). */
int tpb_cuda_gpu_numa_node(const char *bus)
{
    char path[128], lower[32];
    int node = -1;
    snprintf(lower, sizeof(lower), "%s", bus);
    for (char *p = lower; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    /* sysfs names the device with a 4-digit domain; CUDA prints 8 digits */
    const char *short_id = strlen(lower) > 12 ? lower + strlen(lower) - 12 : lower;
    snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/numa_node", short_id);
    FILE *f = fopen(path, "r");
    if (f && fscanf(f, "%d", &node) != 1)
        node = -1;
    if (f)
        fclose(f);
    return node;
}

/* Select and open the device (before the node-wide count of ranks per GPU). */
tpb_status_t tpb_cuda_open_device(tpb_cuda_t *be, int dev)
{
    cudaError_t e = cudaSetDevice(dev);
    if (e == cudaSuccess)
        e = cudaFree(NULL);            /* create the primary context now, not in a timed loop */
    int mode = cudaComputeModeDefault; /* readable without a context */
    if (e == cudaErrorDevicesUnavailable &&
        cudaDeviceGetAttribute(&mode, cudaDevAttrComputeMode, dev) == cudaSuccess &&
        mode != cudaComputeModeDefault) /* before check_sharing can say it */
        return tpb_err_set(TPB_ERR_INVALID,
                           "GPU %d is in %s compute mode and another process holds it (two "
                           "ranks of this node on one GPU?): start one rank per GPU, or ask "
                           "the admin for the default mode (nvidia-smi -c DEFAULT)",
                           dev,
                           mode == cudaComputeModeProhibited ? "prohibited" : "exclusive-process");
    if (e == cudaErrorDevicesUnavailable) /* default mode, and still not to be had */
        return tpb_err_set(TPB_ERR_NO_DEVICE,
                           "GPU %d is busy or unavailable (another process holds it, or the "
                           "admin or a fault took it out of service): see nvidia-smi on this "
                           "node, or exclude the node",
                           dev);
    if (e == cudaSuccess)
        e = cudaGetDeviceProperties(&be->prop, dev);
    if (e != cudaSuccess)
        return tpb_cuda_err(e, "cudaSetDevice", __FILE__, __LINE__);
    format_uuid(&be->prop, be->gpu.id, sizeof(be->gpu.id));
    return TPB_OK;
}

tpb_status_t tpb_cuda_check_device(const tpb_cuda_t *be)
{
    TPB_CHECK_RET(check_sharing(be));
    return check_dtype(be, be->gpu.args.cfg.dtype, be->gpu.args.cfg.comm);
}
