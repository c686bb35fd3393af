"""fp16 x fp16 -> fp16 dots on the GPU, which accumulate in fp16 (f16x2 registers of wgmma on Hopper, mma.sync
elsewhere and for small tiles): one tile (with and without Triton's "add-matrix" epilogue), a pipelined K loop
(K = 1024) carrying the fp16 accumulator, and a loop of two such dots (attention's shape). Outputs poisoned with
NaN first. The forms are pinned by tests/nvidia_compile/test_f16_acc_dots_ptx.py.

The reference is float64. An fp16 running sum rounds at every step of the tensor cores, in an order that is
theirs, so the tolerance is that of fp16 accumulation: |got - exact| <= 16 u S with u = 2^-11 and S = sum |a||b|
(plus |C| where C is added). A simulation rounding after every single product stays under 4.5 u S at K = 1024
(0.9 u S rounding every 16); a result with two columns of a register swapped is off by hundreds of u S."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from f16_acc_dots import loop_chain, loop_dot, tile_dot  # noqa: E402

U = 2.0 ** -11


def _check(got, exact, S):
    got = got.astype(np.float64)
    assert not np.isnan(got).any(), f"{np.isnan(got).sum()} elements not written (NaN)"
    bound = 16 * U * S + 2.0 ** -24
    over = np.abs(got - exact) / bound
    at = np.unravel_index(over.argmax(), over.shape)
    assert over.max() <= 1, f"error {over.max():.2f} x the fp16-accumulation bound at {at}"
    rel = np.linalg.norm(got - exact) / np.linalg.norm(exact)
    assert rel < 2e-2, f"relative error {rel:.2e}"


def _f16(rng, shape, scale):
    return (rng.standard_normal(shape) * scale).astype(np.float16)


# (BM, BN, BK, warps): wgmma tiles (64x64 at 4 warps, 128x128 at 8, ...) and mma.sync ones (small, 2 warps)
TILES = [(64, 64, 64, 4), (128, 128, 64, 8), (64, 128, 32, 4), (128, 64, 64, 8), (32, 32, 32, 4), (16, 16, 16, 4),
         (128, 128, 64, 2)]


@pytest.mark.parametrize("add", [False, True], ids=["none", "add-matrix"])
@pytest.mark.parametrize("BM,BN,BK,nw", TILES, ids=[f"{t[0]}x{t[1]}x{t[2]}w{t[3]}" for t in TILES])
def test_cuda_f16_tile_dot(cuda, BM, BN, BK, nw, add):
    """Triton's test_dot inputs: X, Y scaled by 0.1, Z = 1 + 0.1 randn (add-matrix), else Z poisoned."""
    import torch
    rng = np.random.default_rng(BM * 7 + BN * 3 + BK + nw + add)
    x, y = _f16(rng, (BM, BK), 0.1), _f16(rng, (BK, BN), 0.1)
    z = (1 + rng.standard_normal((BM, BN)) * 0.1).astype(np.float16) if add else np.full((BM, BN), np.nan, np.float16)
    zt = torch.from_numpy(z.copy()).cuda()
    tile_dot[(1,)](torch.from_numpy(x).cuda(), torch.from_numpy(y).cuda(), zt, BM=BM, BN=BN, BK=BK, ADD=add,
                   OUT_F16=True, num_warps=nw)
    torch.cuda.synchronize()
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    exact = x64 @ y64 + (z.astype(np.float64) if add else 0)
    S = np.abs(x64) @ np.abs(y64) + (np.abs(z.astype(np.float64)) if add else 0)
    _check(zt.cpu().numpy(), exact, S)


@pytest.mark.parametrize("BM,BN,BK,nw", [(128, 128, 64, 8), (64, 64, 64, 4), (64, 128, 32, 4), (32, 32, 32, 4)])
def test_cuda_f16_pipelined_loop(cuda, BM, BN, BK, nw):
    """C = A @ B over K = 1024 in a pipelined loop (3 stages), the fp16 accumulator carried as ``acc=``."""
    import torch
    M, N, K = 256, 256, 1024
    rng = np.random.default_rng(BM + BN + BK + nw)
    a, b = _f16(rng, (M, K), 1.0), _f16(rng, (K, N), 1.0)
    c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.float16)
    loop_dot[(M // BM, N // BN)](torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda(), c, M, N, K, K, N, N,
                                 BM=BM, BN=BN, BK=BK, num_warps=nw, num_stages=3)
    torch.cuda.synchronize()
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    _check(c.cpu().numpy(), a64 @ b64, np.abs(a64) @ np.abs(b64))


def test_cuda_f16_loop_of_two_dots(cuda):
    """O = sum over key blocks of fp16(Q K^T) V, both dots fp16 results (the second reads the first's from
    registers on Hopper); the reference rounds S to fp16 as the kernel does, and the bound adds S's own error."""
    import torch
    L, D, BM, BN, M = 512, 64, 64, 64, 128
    rng = np.random.default_rng(5)
    q, k, v = _f16(rng, (M, D), 0.3), _f16(rng, (L, D), 0.3), _f16(rng, (L, D), 1.0)
    o = torch.full((M, D), float("nan"), device="cuda", dtype=torch.float16)
    loop_chain[(M // BM,)](torch.from_numpy(q).cuda(), torch.from_numpy(k).cuda(), torch.from_numpy(v).cuda(), o, L,
                           D=D, BM=BM, BN=BN, num_warps=4, num_stages=3)
    torch.cuda.synchronize()
    q64, k64, v64 = q.astype(np.float64), k.astype(np.float64), v.astype(np.float64)
    s = (q64 @ k64.T).astype(np.float16).astype(np.float64)
    exact = s @ v64
    # S of the second dot, plus the first dot's error (16 u |q||k|, per element of s) carried through |v|
    S = np.abs(s) @ np.abs(v64) + (np.abs(q64) @ np.abs(k64).T + np.abs(s) / 16) @ np.abs(v64)
    _check(o.cpu().numpy(), exact, S)
