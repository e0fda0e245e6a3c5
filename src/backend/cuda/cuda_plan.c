/* cuda_plan.c - device choice and emulation plans (no CUDA calls). */
#include "backend/cuda/cuda_plan.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

tpb_status_t tpb_cuda_check_comm_dtype(tpb_dtype_t dt, tpb_comm_kind_t comm)
{
    tpb_dtype_t out = tpb_dtype_out(dt);
    if (comm == TPB_COMM_MPI && out != TPB_DTYPE_FP32 && out != TPB_DTYPE_FP64)
        return tpb_err_set(TPB_ERR_UNSUPPORTED,
                           "--comm mpi reduces fp32 and fp64 only, not the %s outputs of --dtype "
                           "%s: use --comm ccl, or --dtype fp32/tf32",
                           tpb_dtype_name(out), tpb_dtype_name(dt));
    return TPB_OK;
}

int tpb_cuda_sm_request(int sm_total, double f, int min_sm, int step)
{
    if (step < 1)
        step = 1;
    int want = (int)ceil(f * sm_total / step - 1e-9) * step; /* a share no smaller than f */
    if (want < min_sm)
        want = min_sm;
    if (want > sm_total)
        want = sm_total;
    return want;
}

int tpb_cuda_flop_per_cycle_sm(int major, int minor, tpb_dtype_t dt)
{
    /* fp64, fp32 (CUDA cores), tf32, fp16/bf16, fp8: dense FLOP per cycle per SM */
    static const struct {
        int cc;
        int fp64, fp32, tf32, half, fp8;
    } t[] = {
        {75, 4, 128, 0, 1024, 0},           /* T4 */
        {80, 128, 128, 1024, 2048, 0},      /* A100: 312 TF bf16 = 108 SMs x 1.41 GHz x 2048 */
        {86, 4, 256, 512, 1024, 0},         /* A40, RTX 30xx */
        {89, 4, 256, 512, 1024, 2048},      /* L40S, RTX 40xx */
        {90, 256, 256, 2048, 4096, 8192},   /* H100/H200: 989 TF bf16 = 132 x 1.83 x 4096 */
        {100, 256, 256, 4096, 8192, 16384}, /* B200 */
        {120, 4, 256, 1024, 2048, 4096},    /* RTX 50xx */
    };
    int cc = major * 10 + minor;
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        if (t[i].cc != cc)
            continue;
        switch (dt) {
        case TPB_DTYPE_FP64: return t[i].fp64;
        case TPB_DTYPE_FP32: return t[i].fp32;
        case TPB_DTYPE_TF32: return t[i].tf32;
        case TPB_DTYPE_FP16:
        case TPB_DTYPE_BF16: return t[i].half;
        case TPB_DTYPE_FP8: return t[i].fp8;
        }
        return 0;
    }
    return 0;
}

/* The clock (GHz) of the vendor's dense tensor-core datasheet figures, by compute
 * capability, SM count and a word of the name (NULL: any); 0 if not known. */
static double datasheet_ghz(int cc, int sms, const char *name)
{
    static const struct {
        int cc, sms;
        const char *word;
        double ghz;
    } t[] = {
        {90, 132, "NVL", 1.545}, /* H100 NVL, H200 NVL: 835 TFLOP/s bf16 */
        {90, 132, NULL, 1.830},  /* H100 SXM, H200 SXM: 989 TFLOP/s bf16 */
        {90, 114, NULL, 1.620},  /* H100 PCIe: 756 TFLOP/s bf16 */
        {80, 108, NULL, 1.410},  /* A100 SXM and PCIe: 312 TFLOP/s bf16 */
    };
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
        if (t[i].cc == cc && t[i].sms == sms && (!t[i].word || (name && strstr(name, t[i].word))))
            return t[i].ghz;
    return 0.0;
}

double tpb_cuda_peak_gflops(int major, int minor, int sms, const char *name, int max_khz,
                            tpb_dtype_t dt, char *basis, size_t cap)
{
    int fpc = tpb_cuda_flop_per_cycle_sm(major, minor, dt);
    int tensor =
        dt == TPB_DTYPE_TF32 || dt == TPB_DTYPE_FP16 || dt == TPB_DTYPE_BF16 || dt == TPB_DTYPE_FP8;
    double sheet = tensor ? datasheet_ghz(major * 10 + minor, sms, name) : 0.0;
    double ghz = sheet > 0.0 ? sheet : max_khz * 1e-6;
    snprintf(basis, cap, "%d SMs x %.3g GHz (%s) x %d FLOP/cycle (%s)", sms, ghz,
             sheet > 0.0 ? "datasheet" : "max clock", fpc, tpb_dtype_name(dt));
    return sms * ghz * fpc;
}
