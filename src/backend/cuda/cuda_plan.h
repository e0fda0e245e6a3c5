/*
 * cuda_plan.h - the device-free decisions of the CUDA backend (which GPU a rank drives
 * and whether a TP group may share one are the GPU class's: backend/gpu/gpu_device.h):
 * which dtypes go through --comm mpi, how many SMs to ask for when emulating a slower
 * GPU, the peak rate. Pure functions,
 * always built and unit-tested on machines without a GPU.
 */
#ifndef TPB_CUDA_PLAN_H
#define TPB_CUDA_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "backend/backend.h"
#include "base/dtype.h"
#include "base/tpb_status.h"
#include "base/tpb_types.h"

/**
 * What the collectives' path can carry: --comm mpi reduces fp32 and fp64 outputs
 * only (fp16, bf16 and fp8 GEMMs write 16-bit outputs), TPB_ERR_UNSUPPORTED with
 * what to use otherwise. Device-free: also in --dry-run.
 */
tpb_status_t tpb_cuda_check_comm_dtype(tpb_dtype_t dt, tpb_comm_kind_t comm);

/**
 * SMs to request for speed factor f of a device with sm_total SMs when
 * partitions come in multiples of step (at least min_sm): the smallest multiple of step
 * at or above f * sm_total (a partition no slower than asked: the padding of cuda_emulate.c
 * slows it the rest of the way), clamped to [min_sm, sm_total].
 */
int tpb_cuda_sm_request(int sm_total, double f, int min_sm, int step);

/**
 * Dense FLOP per cycle of one SM for a dtype on compute capability major.minor
 * (tensor cores where the dtype uses them; the datacenter parts' rates: GeForce
 * parts run fp16/bf16 with fp32 accumulation at half these). 0 if unsupported or
 * unknown. The one table of GPU peaks; the peak is SMs x clock x this.
 */
int tpb_cuda_flop_per_cycle_sm(int major, int minor, tpb_dtype_t dt);

/**
 * The dense peak in GFLOP/s of a GPU (compute capability major.minor, sms SMs,
 * its name, its maximum SM clock in kHz) for dt: SMs x clock x FLOP per cycle.
 * For the tensor-core dtypes (tf32, fp16, bf16, fp8) of the parts whose vendor
 * datasheet is known, the clock is the datasheet's (H100/H200 SXM 1.83 GHz: 989
 * TFLOP/s bf16, the figure everyone compares with, where the 1.98 GHz maximum
 * would give 1070); otherwise the maximum clock. basis says which. 0 if unknown.
 */
double tpb_cuda_peak_gflops(int major, int minor, int sms, const char *name, int max_khz,
                            tpb_dtype_t dt, char *basis, size_t cap);

#endif /* TPB_CUDA_PLAN_H */
