"""A pipelined matmul loop for every tensor-core operand type (fp16, bf16, tf32, fp8, int8), with B read
either K-major (stride_bk == 1: B stored as (N, K)) or N-major (stride_bn == 1). Shared by the sm_90 compile
tests (tests/nvidia_compile/test_wgmma_types.py) and the GPU tests (test_wgmma_types.py)."""
from __future__ import annotations

import tritium as triton
import tritium.language as tl


@triton.jit
def typed_matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
                 BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, ACC_INT: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BM + tl.arange(0, BM)
    offs_n = pid_n * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn
    if ACC_INT:
        acc = tl.zeros((BM, BN), dtype=tl.int32)
    else:
        acc = tl.zeros((BM, BN), dtype=tl.float32)
    for _ in range(0, K, BK):
        acc = tl.dot(tl.load(a_ptrs), tl.load(b_ptrs), acc)
        a_ptrs += BK * stride_ak
        b_ptrs += BK * stride_bk
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :], acc)


#: (name, tritium signature type, accumulator, K per wgmma instruction, PTX types)
TYPES = [("fp16", "fp16", "fp32", 16, "f32.f16.f16"), ("bf16", "bf16", "fp32", 16, "f32.bf16.bf16"),
         ("tf32", "fp32", "fp32", 8, "f32.tf32.tf32"), ("e4m3", "fp8e4nv", "fp32", 32, "f32.e4m3.e4m3"),
         ("e5m2", "fp8e5", "fp32", 32, "f32.e5m2.e5m2"), ("s8", "i8", "i32", 32, "s32.s8.s8")]
