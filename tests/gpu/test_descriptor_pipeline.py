"""Tensor-descriptor loads feeding dots are software-pipelined (copies into shared stages, 16-byte vectors
along the contiguous dimension), also through ``b.T``. Out-of-bounds elements read zero: the descriptors
here cover part of a wider array whose columns past the descriptor's shape hold NaN, and the last vector of
a row is cut by the bound (K = 76: a vector of 8 fp16 at 72 has 4 elements inside), and M, N are not
multiples of the block. On the GPU emulator (always) and an NVIDIA GPU."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium.tools.tensor_descriptor import TensorDescriptor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hopper import example08  # noqa: E402


@triton.jit
def desc_matmul(a_desc, b_desc, c_ptr, M, N, K, stride_cm, BM: tl.constexpr, BN: tl.constexpr,
                BK: tl.constexpr, B_T: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = a_desc.load([pid_m * BM, k])
        if B_T:
            b = b_desc.load([pid_n * BN, k]).T         # B stored (N, K)
        else:
            b = b_desc.load([k, pid_n * BN])           # B stored (K, N)
        acc = tl.dot(a, b, acc)
    offs_m = pid_m * BM + tl.arange(0, BM)
    offs_n = pid_n * BN + tl.arange(0, BN)
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :], acc,
             mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@pytest.mark.parametrize("b_t", [True, False])
def test_pipelined_descriptor_loads_with_partial_bounds(dev, b_t):
    M, N, K = 80, 72, 76
    BM = BN = 64 if dev.name == "cuda" else 32
    BK = 32
    rng = np.random.default_rng(11 + b_t)
    # wider arrays: the columns past the descriptors' shapes are NaN and must never be read
    a = np.full((M, 80), np.nan, np.float16)
    a[:, :K] = rng.standard_normal((M, K))
    if b_t:
        b = np.full((N, 80), np.nan, np.float16)
        b[:, :K] = rng.standard_normal((N, K))
        bk = b[:, :K].T
    else:
        b = np.full((K, 80), np.nan, np.float16)
        b[:, :N] = rng.standard_normal((K, N))
        bk = b[:, :N]
    da, db = dev.put(a), dev.put(b)
    a_desc = TensorDescriptor(da, [M, K], [80, 1], [BM, BK])
    b_desc = TensorDescriptor(db, [N, K] if b_t else [K, N], [80, 1], [BN, BK] if b_t else [BK, BN])
    c = dev.put(np.full((M, N), np.nan, np.float32))
    desc_matmul[(triton.cdiv(M, BM), triton.cdiv(N, BN))](a_desc, b_desc, c, M, N, K, N, BM=BM, BN=BN, BK=BK,
                                                           B_T=b_t, num_warps=4, num_stages=3)
    want = a[:, :K].astype(np.float64) @ bk.astype(np.float64)
    np.testing.assert_allclose(dev.get(c), want, rtol=1e-2, atol=1e-2)


EX08 = example08()  # once per process (hopper.py says why)


@pytest.mark.parametrize("ws", [False, True])
def test_persistent_descriptor_matmul_partial_tiles(dev, ws):
    """examples/08's kernel: an outer persistent loop over tiles (3 programs, 9 tiles) around the pipelined K
    loop; M, N, K are not multiples of the blocks, so edge tiles read zeros past the bounds and store partially."""
    ex = EX08
    M, N, K = 80, 72, 72
    BM = BN = BK = 32
    rng = np.random.default_rng(5 + ws)
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((N, K)).astype(np.float16)
    c = dev.put(np.full((M, N), np.nan, np.float16))
    a_desc = TensorDescriptor(dev.put(a), [M, K], [K, 1], [BM, BK])
    b_desc = TensorDescriptor(dev.put(b), [N, K], [K, 1], [BN, BK])
    c_desc = TensorDescriptor(c, [M, N], [N, 1], [BM, BN])
    ex.matmul_persistent[(3, )](a_desc, b_desc, c_desc, M, N, K, BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, GROUP_M=2,
                                NUM_SMS=3, WARP_SPECIALIZE=ws, num_warps=4, num_stages=3)
    want = a.astype(np.float64) @ b.astype(np.float64).T
    np.testing.assert_allclose(dev.get(c).astype(np.float64), want, rtol=1e-2, atol=2e-2)
