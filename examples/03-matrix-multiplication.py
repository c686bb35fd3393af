"""
Matrix multiplication
=====================

C = A @ B with a 2-D grid of output tiles: each program walks along K, loading one tile of A and one
of B per step and accumulating with `tl.dot` (tensor cores on GPUs, a register-blocked vector
microkernel on the CPU). Programs are grouped along M ("super-grouping") so that tiles of B stay in
cache across neighbouring programs.

Run: python examples/03-matrix-multiplication.py
"""
import numpy as np

import tritium as triton
import tritium.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c = acc.to(c_ptr.dtype.element_ty)
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    tl.store(c_ptrs, c, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


#: what CI compiles for GPU targets without a GPU (tests/nvidia_compile): (kernel, signature, constexprs)
COMPILE_CASES = [(matmul_kernel, {"a_ptr": f"*{t}", "b_ptr": f"*{t}", "c_ptr": f"*{t}", "M": "i32", "N": "i32",
                                  "K": "i32", "stride_am": "i32", "stride_ak": "constexpr", "stride_bk": "i32",
                                  "stride_bn": "constexpr", "stride_cm": "i32", "stride_cn": "constexpr",
                                  "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "BLOCK_K": "constexpr",
                                  "GROUP_M": "constexpr"},
                  {"stride_ak": 1, "stride_bn": 1, "stride_cn": 1, "BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64,
                   "GROUP_M": 8}) for t in ("fp16", "bf16", "fp32")]

def matmul(a, b, c, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M=8, **launch):
    M, K = a.shape
    K2, N = b.shape
    assert K == K2, "inner dimensions differ"
    st = (lambda t: tuple(s // t.itemsize for s in t.strides)) if isinstance(a, np.ndarray) else (lambda t: t.stride())
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]), )
    matmul_kernel[grid](a, b, c, M, N, K, *st(a), *st(b), *st(c), BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
                        GROUP_M=GROUP_M, **launch)
    return c


def main():
    from _bench import device, interleaved, line, triton_twin
    dev = device()
    if dev == "cpu":
        M = N = K = 1024
        rng = np.random.default_rng(0)
        a = rng.standard_normal((M, K), dtype=np.float32)
        b = rng.standard_normal((K, N), dtype=np.float32)
        c = np.empty((M, N), np.float32)
        blocks = dict(BLOCK_M=128, BLOCK_N=128, BLOCK_K=32)
        matmul(a, b, c, **blocks)
        np.testing.assert_allclose(c, a @ b, rtol=1e-3, atol=1e-3)
        ref = np.empty_like(c)
        tflop = 2 * M * N * K / 1e9
        t = interleaved({"tritium": lambda: matmul(a, b, c, **blocks), "numpy": lambda: np.matmul(a, b, out=ref)},
                        dev)
        line("matmul fp32 1024^3 (cpu)", t["tritium"], "numpy", t["numpy"], "GFLOP/s", tflop)
        return
    import torch
    M = N = K = 8192
    for dtype in (torch.float16, torch.bfloat16):
        a = torch.randn(M, K, device="cuda", dtype=dtype)
        b = torch.randn(K, N, device="cuda", dtype=dtype)
        c = torch.empty(M, N, device="cuda", dtype=dtype)
        cfg = dict(BLOCK_M=128, BLOCK_N=256, BLOCK_K=64, GROUP_M=8, num_warps=8, num_stages=3)
        matmul(a, b, c, **cfg)
        torch.testing.assert_close(c, a @ b, atol=1e-1, rtol=1e-2)
        tflop = 2 * M * N * K / 1e12
        name = f"matmul {str(dtype)[6:]} 8192^3 (gpu)"
        c3 = torch.empty_like(c)
        fns = {"tritium": lambda: matmul(a, b, c, **cfg), "torch": lambda: torch.matmul(a, b, out=c3)}
        twin = triton_twin(__file__)
        if twin is not None:
            c2 = torch.empty_like(c)
            twin.matmul(a, b, c2, **cfg)
            fns["Triton"] = lambda: twin.matmul(a, b, c2, **cfg)
        t = interleaved(fns, dev)
        for ref in ("Triton", "torch"):
            if ref in t:
                line(name, t["tritium"], ref, t[ref], "TFLOP/s", tflop)


if __name__ == "__main__":
    main()
