#!/usr/bin/env python3
"""bench/torch_gemm.py - PyTorch's GEMMs timed as tpbal's compute phase is: a reference that
shares no code with tpbal or bench/gpu_bare (PyTorch picks its own cuBLAS(Lt) kernels).

Each case: X (M x K) times W^T (W: N x K, both K-contiguous: tpbal's TN layout), normal inputs
(W scaled by 1/sqrt(K), as tpbal's), 3 untimed GEMMs, then ITERS GEMMs queued back to back,
each between a pair of CUDA events, all events queued too; the median of the pairs, as
bench/gpu_bare and tpbal report it. fp8 is torch._scaled_mm (e4m3 in, bf16 out, unit scales).
Prints one line a case: "torch_us DTYPE MxNxK US" and its rate; "torch: not measured: WHY"
(exit 0) where PyTorch or a CUDA device is missing, or a case cannot run. bench/gpu-lease.sh
runs it on a lent GPU before the check.
"""
import math
import statistics
import sys

# (dtype, M, N, K): gpu-check's timed and gate steps, and its --check shape in every dtype
CASES = [("bf16", 8192, 8192, 8192), ("fp8", 8192, 8192, 8192), ("bf16", 1024, 1024, 1024)] + [
    (dt, 2048, 2048, 2048) for dt in ("fp32", "tf32", "fp16", "bf16", "fp8")]
ITERS = 50


def median_us(torch, fn, iters):
    """The median of ITERS event pairs around fn(), queued back to back, in microseconds."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    pairs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
             for _ in range(iters)]
    for a, b in pairs:
        a.record()
        fn()
        b.record()
    torch.cuda.synchronize()
    return statistics.median(a.elapsed_time(b) * 1e3 for a, b in pairs)


def gemm_of(torch, dt, m, n, k):
    """The GEMM of a case as a function of nothing, its inputs on the device."""
    dev = torch.device("cuda")
    x = torch.randn(m, k, device=dev)
    w = torch.randn(n, k, device=dev) / math.sqrt(k)
    torch.backends.cuda.matmul.allow_tf32 = dt == "tf32"
    if dt == "fp8":
        x8, w8 = x.to(torch.float8_e4m3fn), (w * math.sqrt(k)).to(torch.float8_e4m3fn)
        one = torch.tensor(1.0, device=dev)
        return lambda: torch._scaled_mm(x8, w8.t(), scale_a=one, scale_b=one,
                                        out_dtype=torch.bfloat16)
    t = {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16,
         "bf16": torch.bfloat16}[dt]
    x, w = x.to(t), w.to(t)
    return lambda: x @ w.t()


def main():
    try:
        import torch
    except ImportError as e:
        print(f"torch: not measured: {e}")
        return 0
    if not torch.cuda.is_available():
        print("torch: not measured: no CUDA device")
        return 0
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name(0)}, cuBLAS through "
          f"PyTorch; {ITERS} event pairs a case, the median", flush=True)
    for dt, m, n, k in CASES:
        shape = f"{m}x{n}x{k}"
        try:
            us = median_us(torch, gemm_of(torch, dt, m, n, k), ITERS)
        except (RuntimeError, AttributeError, TypeError) as e:
            print(f"torch: not measured: {dt} {shape}: {str(e).splitlines()[0]}", flush=True)
            continue
        print(f"torch_us {dt} {shape} {us:.1f} ({2.0 * m * n * k / us / 1e6:.1f} TFLOP/s)",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
