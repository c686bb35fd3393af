"""fp8 wgmma dots with ``max_num_imprecise_acc`` on an H200: promoted every n products along K into the fp32
accumulator (tests/nvidia_compile/test_wgmma_promotion_ptx.py checks the instructions), the result is within fp32
summation error of the fp64 product over a long K; without it the tensor cores' narrower accumulation is within
Triton's own tolerance for fp8 (test_core.py test_dot_max_num_imprecise_acc)."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl


@triton.jit
def _matmul(A, B, C, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, LOW: tl.constexpr):
    m, n, k = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    a_ptrs = A + m[:, None] * K + k[None, :]
    b_ptrs = B + k[:, None] * BN + n[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for _ in range(0, K // BK):
        acc = tl.dot(tl.load(a_ptrs), tl.load(b_ptrs), acc=acc, max_num_imprecise_acc=LOW)
        a_ptrs += BK
        b_ptrs += BK * BN
    tl.store(C + m[:, None] * BN + n[None, :], acc)


@pytest.mark.parametrize("low, rtol", [(32, 2e-5), (128, 2e-5), (None, 1e-2)])
def test_promoted_fp8_dot(cuda, low, rtol):
    import torch
    M, N, K = 128, 256, 4096
    g = torch.Generator().manual_seed(0)
    a = (torch.rand((M, K), generator=g) * 4 + 1).to(torch.float8_e4m3fn)     # positive: the sums only grow
    b = (torch.rand((K, N), generator=g) * 4 + 1).to(torch.float8_e4m3fn)
    c = torch.empty((M, N), device="cuda")
    _matmul[(1,)](a.cuda(), b.cuda(), c, K, BM=M, BN=N, BK=128, LOW=low, num_warps=8, num_stages=3)
    exact = a.double() @ b.double()
    np.testing.assert_allclose(c.cpu().double().numpy(), exact.numpy(), rtol=rtol)
