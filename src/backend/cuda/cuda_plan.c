/* cuda_plan.c - device choice and emulation plans (no CUDA calls). */
#include "backend/cuda/cuda_plan.h"

#include <math.h>

tpb_status_t tpb_cuda_pick_device(int local_rank, int ndev, const int *map, int nmap, int *dev)
{
    if (ndev <= 0)
        return tpb_err_set(
            TPB_ERR_NO_DEVICE,
            "--backend cuda: no GPU is visible to this rank (check "
            "CUDA_VISIBLE_DEVICES and the job's GPU request, or use --backend host)");
    if (!map || nmap == 0) {
        *dev = local_rank % ndev;
        return TPB_OK;
    }
    if (local_rank >= nmap)
        return tpb_err_set(TPB_ERR_INVALID,
                           "--gpu-map has %d entries but this node runs at least %d ranks: give "
                           "one device per node-local rank",
                           nmap, local_rank + 1);
    if (map[local_rank] < 0 || map[local_rank] >= ndev)
        return tpb_err_set(TPB_ERR_INVALID,
                           "--gpu-map entry %d is device %d but only %d devices are visible "
                           "(0..%d)",
                           local_rank, map[local_rank], ndev, ndev - 1);
    *dev = map[local_rank];
    return TPB_OK;
}

int tpb_cuda_ranks_on_device(int local_size, int ndev, const int *map, int nmap, int dev)
{
    int count = 0;
    for (int l = 0; l < local_size; l++) {
        int d = map && nmap ? (l < nmap ? map[l] : -1) : (ndev > 0 ? l % ndev : -1);
        count += d == dev;
    }
    return count > 0 ? count : 1;
}

tpb_status_t tpb_cuda_check_sharing(const int *host_index, const int *device, int t,
                                    tpb_comm_kind_t comm)
{
    if (comm != TPB_COMM_NCCL)
        return TPB_OK;
    for (int a = 0; a < t; a++)
        for (int b = a + 1; b < t; b++)
            if (host_index[a] == host_index[b] && device[a] == device[b])
                return tpb_err_set(TPB_ERR_INVALID,
                                   "ranks %d and %d of a TP group share GPU %d: NCCL needs one "
                                   "GPU per rank, use --comm mpi to share GPUs",
                                   a, b, device[a]);
    return TPB_OK;
}

int tpb_cuda_sm_request(int sm_total, double f, int min_sm, int step)
{
    if (step < 1)
        step = 1;
    int want = (int)lround(f * sm_total / step) * step;
    if (want < min_sm)
        want = min_sm;
    if (want > sm_total)
        want = sm_total;
    return want;
}

void tpb_cuda_repeat_plan(double f, long n, int *full, long *extra_cols)
{
    double work = (double)n / f; /* columns to compute in all */
    *full = (int)floor(work / (double)n);
    if (*full < 1)
        *full = 1;
    *extra_cols = lround(work - (double)*full * (double)n);
    if (*extra_cols < 0)
        *extra_cols = 0;
    if (*extra_cols > n)
        *extra_cols = n;
}

int tpb_cuda_blocks_equal(const size_t *counts, int t)
{
    for (int r = 1; r < t; r++)
        if (counts[r] != counts[0])
            return 0;
    return 1;
}
