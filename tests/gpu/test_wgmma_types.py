"""Tensor-core dots of every operand type on the GPU (wgmma on Hopper, mma.sync elsewhere), in a pipelined
loop, B K-major and N-major: results against float64 (integers: exactly). Fresh random inputs, the output
poisoned first. The sm_90 instruction selection is pinned by tests/nvidia_compile/test_wgmma_types.py."""
from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from typed_dots import TYPES, typed_matmul  # noqa: E402

TORCH_DTYPE = {"fp16": "float16", "bf16": "bfloat16", "tf32": "float32", "e4m3": "float8_e4m3fn",
               "e5m2": "float8_e5m2", "s8": "int8"}
TOL = {"fp16": 1e-5, "bf16": 1e-5, "tf32": 2e-3, "e4m3": 1e-3, "e5m2": 1e-3}


@pytest.mark.parametrize("k_major_b", [True, False])
@pytest.mark.parametrize("name,elem,acc,kstep,ptx_types", TYPES, ids=[t[0] for t in TYPES])
def test_cuda_dot_types(cuda, name, elem, acc, kstep, ptx_types, k_major_b):
    _check(name, kstep, k_major_b, 256, 256, 1024, 128, 128)


@pytest.mark.parametrize("BN", [32, 64])
@pytest.mark.parametrize("k_major_b", [True, False])
@pytest.mark.parametrize("name,elem,acc,kstep,ptx_types", TYPES, ids=[t[0] for t in TYPES])
def test_cuda_64_rows_at_8_warps(cuda, name, elem, acc, kstep, ptx_types, k_major_b, BN):
    """64 x BN tiles at 8 warps: the warpgroups split N (tf32/8-bit: in parts under a 64-column panel)."""
    _check(name, kstep, k_major_b, 128, 192, 512, 64, BN)


def _check(name, kstep, k_major_b, M, N, K, BM, BN):
    import torch
    dtype = getattr(torch, TORCH_DTYPE[name])
    BK = 128 // (4 if name == "tf32" else 2 if kstep == 16 else 1)
    g = torch.Generator(device="cuda").manual_seed(sum(map(ord, name)) + 7 * k_major_b + BN)
    if name == "s8":
        a = torch.randint(-100, 100, (M, K), device="cuda", generator=g).to(dtype)
        b_nk = torch.randint(-100, 100, (N, K), device="cuda", generator=g).to(dtype)
    else:
        a = torch.randn((M, K), device="cuda", generator=g).to(dtype)
        b_nk = torch.randn((N, K), device="cuda", generator=g).to(dtype)
    b = b_nk.T if k_major_b else b_nk.T.contiguous()           # (K, N), K- or N-contiguous
    c = torch.full((M, N), -7 if name == "s8" else float("nan"), device="cuda",
                   dtype=torch.int32 if name == "s8" else torch.float32)
    typed_matmul[(M // BM, N // BN)](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                     c.stride(0), BM=BM, BN=BN, BK=BK, ACC_INT=name == "s8", num_warps=8,
                                     num_stages=3)
    torch.cuda.synchronize()
    if name == "s8":
        want = a.long().cpu() @ b.long().cpu()
        assert torch.equal(c.long().cpu(), want)
        return
    want = a.double() @ b.double()
    err = ((c.double() - want).norm() / want.norm()).item()
    assert err < TOL[name], f"{name}: relative error {err:.2e}"
