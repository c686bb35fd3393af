"""fp8/int8 dots whose operands are staged along their other dimension (A stored (K, M), B stored (K, N)), rewritten
K-major for wgmma in 4 x 4-byte blocks (tritium_nvidia/restage.py), against float64 (int8: exactly), at 4 and 8
warps and tile shapes whose blocks the warps share differently. Fresh random inputs, the output poisoned first.
Needs an NVIDIA GPU (on others the operands take mma.sync, also checked here)."""
from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from typed_dots import typed_matmul  # noqa: E402


@pytest.mark.parametrize("m_major_a", [False, True])
@pytest.mark.parametrize("name", ["e4m3", "s8"])
@pytest.mark.parametrize("blocks,warps", [((128, 128, 128), 8), ((64, 64, 64), 4), ((128, 256, 64), 8)])
def test_cuda_restaged_8bit_operands(cuda, name, m_major_a, blocks, warps):
    import torch
    BM, BN, BK = blocks
    M, N, K = 2 * BM, 2 * BN, 4 * BK
    g = torch.Generator(device="cuda").manual_seed(hash((name, m_major_a, blocks)) % 1000)
    if name == "s8":
        a = torch.randint(-100, 100, (M, K), device="cuda", generator=g).to(torch.int8)
        b = torch.randint(-100, 100, (K, N), device="cuda", generator=g).to(torch.int8)
    else:
        a = torch.randn((M, K), device="cuda", generator=g).to(torch.float8_e4m3fn)
        b = torch.randn((K, N), device="cuda", generator=g).to(torch.float8_e4m3fn)
    if m_major_a:
        a = a.T.contiguous().T                  # the same values, stored (K, M)
    c = torch.full((M, N), -7 if name == "s8" else float("nan"), device="cuda",
                   dtype=torch.int32 if name == "s8" else torch.float32)
    typed_matmul[(M // BM, N // BN)](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                     c.stride(0), BM=BM, BN=BN, BK=BK, ACC_INT=name == "s8", num_warps=warps,
                                     num_stages=3)
    torch.cuda.synchronize()
    if name == "s8":
        assert torch.equal(c.long().cpu(), a.long().cpu() @ b.long().cpu())
        return
    want = a.double() @ b.double()
    err = ((c.double() - want).norm() / want.norm()).item()
    assert err < 1e-3, f"relative error {err:.2e}"
