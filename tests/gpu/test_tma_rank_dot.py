"""Batched matmuls on descriptors of rank 3 and 4 (``desc.load([z, m, k]).reshape(BM, BK)`` feeding ``tl.dot``):
the loads are software-pipelined like 2-D ones (pipeline_desc.squeezed_to_2d: the reshape is a view of the stage),
on sm_90 as ``cp.async.bulk.tensor.3d``/``4d`` copies into the stages. M, N and K are not multiples of the
blocks (the copies' zeros past the ends must not leak into the sums), the batches differ, and B is read both
(N, K) through ``.T`` and (K, N). Host descriptors and descriptors made in the kernel. Results against numpy in
float64; on the GPU emulator (the portable copies into the same stages) and an NVIDIA GPU."""
from __future__ import annotations

import re

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium.tools.tensor_descriptor import TensorDescriptor


@triton.jit
def _bmm3(a, b, c, Z, M, N, K, B_T: tl.constexpr, HOST: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr,
          BK: tl.constexpr):
    if HOST:
        da = a
        db = b
    else:
        da = tl.make_tensor_descriptor(a, [Z, M, K], [M * K, K, 1], [1, BM, BK])
        if B_T:
            db = tl.make_tensor_descriptor(b, [Z, N, K], [N * K, K, 1], [1, BN, BK])
        else:
            db = tl.make_tensor_descriptor(b, [Z, K, N], [K * N, N, 1], [1, BK, BN])
    z = tl.program_id(2)
    m = tl.program_id(0) * BM
    n = tl.program_id(1) * BN
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        x = da.load([z, m, k]).reshape(BM, BK)
        if B_T:
            y = db.load([z, n, k]).reshape(BN, BK).T
        else:
            y = db.load([z, k, n]).reshape(BK, BN)
        acc = tl.dot(x, y, acc)
    om = m + tl.arange(0, BM)
    on = n + tl.arange(0, BN)
    tl.store(c + z * M * N + om[:, None] * N + on[None, :], acc, mask=(om[:, None] < M) & (on[None, :] < N))


@triton.jit
def _bmm4(da, db, c, H, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # [batch, head, rows, K] descriptors: one program per (batch, head) pair along axis 2
    zh = tl.program_id(2)
    zb = zh // H
    h = zh % H
    m = tl.program_id(0) * BM
    n = tl.program_id(1) * BN
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        x = da.load([zb, h, m, k]).reshape(BM, BK)
        y = db.load([zb, h, n, k]).reshape(BN, BK)
        acc = tl.dot(x, y.T, acc)
    om = m + tl.arange(0, BM)
    on = n + tl.arange(0, BN)
    tl.store(c + zh * M * N + om[:, None] * N + on[None, :], acc, mask=(om[:, None] < M) & (on[None, :] < N))


def _blocks(dev):
    return (64, 64, 32) if dev.name == "cuda" else (32, 32, 32)


def _check_pipelined(k, rank):
    """With TRITIUM_NVIDIA_TMA_RANKS: A's loads copied by the engine in the prologue and in the loop (B's too
    where its row stride is known 16-byte aligned: not N = 72, which is no multiple of 16)."""
    from tritium.runtime.driver import driver
    from tritium_nvidia.knobs import nvidia
    if not 90 <= int(driver.active.get_current_target().arch) < 100 or not nvidia.tma_ranks:
        return
    ptx = k.asm["ptx"]
    sites = len(re.findall(rf"cp\.async\.bulk\.tensor\.{rank}d\.shared::cluster\.global", ptx))
    assert sites >= 3, sites


@pytest.mark.parametrize("b_t", [True, False])
@pytest.mark.parametrize("host", [True, False])
def test_batched_matmul_on_3d_descriptors(dev, b_t, host):
    Z, M, N, K = 3, 80, 72, 112          # K a multiple of 16 (aligned rows), none a multiple of the blocks
    BM, BN, BK = _blocks(dev)
    rng = np.random.default_rng(3 + 2 * b_t + host)
    a = rng.standard_normal((Z, M, K)).astype(np.float16)
    b = rng.standard_normal((Z, N, K) if b_t else (Z, K, N)).astype(np.float16)
    if not b_t and N % 8:
        pytest.skip("B (K, N) needs N a multiple of 8 fp16 for 16-byte rows")
    da, db = dev.put(a), dev.put(b)
    c = dev.put(np.full((Z, M, N), np.nan, np.float32))
    if host:
        ta = TensorDescriptor(da, [Z, M, K], [M * K, K, 1], [1, BM, BK])
        tb = TensorDescriptor(db, list(b.shape), [b.shape[1] * b.shape[2], b.shape[2], 1],
                              [1, BN, BK] if b_t else [1, BK, BN])
    else:
        ta, tb = da, db
    k = _bmm3[(triton.cdiv(M, BM), triton.cdiv(N, BN), Z)](ta, tb, c, Z, M, N, K, B_T=b_t, HOST=host, BM=BM, BN=BN,
                                                            BK=BK, num_warps=4, num_stages=3)
    bt = b.astype(np.float64) if not b_t else b.astype(np.float64).transpose(0, 2, 1)
    want = a.astype(np.float64) @ bt
    np.testing.assert_allclose(dev.get(c), want, rtol=1e-2, atol=2e-2)
    if dev.name == "cuda":
        _check_pipelined(k, 3)


def test_batched_matmul_on_4d_descriptors(dev):
    Zb, H, M, N, K = 2, 2, 48, 40, 96
    BM, BN, BK = _blocks(dev)
    rng = np.random.default_rng(44)
    a = rng.standard_normal((Zb, H, M, K)).astype(np.float16)
    b = rng.standard_normal((Zb, H, N, K)).astype(np.float16)
    da, db = dev.put(a), dev.put(b)
    c = dev.put(np.full((Zb * H, M, N), np.nan, np.float32))
    ta = TensorDescriptor(da, list(a.shape), [H * M * K, M * K, K, 1], [1, 1, BM, BK])
    tb = TensorDescriptor(db, list(b.shape), [H * N * K, N * K, K, 1], [1, 1, BN, BK])
    k = _bmm4[(triton.cdiv(M, BM), triton.cdiv(N, BN), Zb * H)](ta, tb, c, H, M, N, K, BM=BM, BN=BN, BK=BK,
                                                                 num_warps=4, num_stages=3)
    want = (a.astype(np.float64) @ b.astype(np.float64).transpose(0, 1, 3, 2)).reshape(Zb * H, M, N)
    np.testing.assert_allclose(dev.get(c), want, rtol=1e-2, atol=2e-2)
    if dev.name == "cuda":
        _check_pipelined(k, 4)
