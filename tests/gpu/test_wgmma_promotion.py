"""fp8 wgmma dots with ``max_num_imprecise_acc`` on an H200: promoted every n products along K into the fp32
accumulator (tests/nvidia_compile/test_wgmma_promotion_ptx.py checks the instructions), a long K is far closer
to the fp64 product than when the tensor cores accumulate all of it, and closer the more often it is promoted."""
from __future__ import annotations

import os
import sys


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from found_kernels import promoted_matmul  # noqa: E402




def _relative_error(low, M=128, N=256, BK=128):
    import torch
    K = 4096
    g = torch.Generator().manual_seed(0)
    a = (torch.rand((M, K), generator=g) * 4 + 1).to(torch.float8_e4m3fn)     # positive: the sums only grow
    b = (torch.rand((K, N), generator=g) * 4 + 1).to(torch.float8_e4m3fn)
    c = torch.empty((M, N), device="cuda")
    promoted_matmul[(1,)](a.cuda(), b.cuda(), c, K, BM=M, BN=N, BK=BK, LOW=low, num_warps=8, num_stages=3)
    exact = a.double() @ b.double()
    return ((c.cpu().double() - exact).abs() / exact).max().item()


def test_promoted_fp8_dot(cuda):
    """H200, 2026-12-03: the whole K=4096 in the tensor cores is off by up to 7.2% (their fp8 accumulation keeps
    fewer bits), promoted every 128 products by 2.7e-4, every 32 by 2.3e-5."""
    whole, every128, every32 = (_relative_error(low) for low in (None, 128, 32))
    assert every32 < 1e-4 and every128 < 1e-3
    assert every128 < whole / 10 and every32 < every128


def test_promoted_fp8_dot_64_rows_8_warps(cuda):
    """64x64 at 8 warps: each warpgroup promotes its 32-column half."""
    whole, every32 = (_relative_error(low, 64, 64, 64) for low in (None, 32))
    assert every32 < 1e-4 and every32 < whole / 10
