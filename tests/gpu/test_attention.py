"""Fused attention (Triton's tutorial 06, forward) and the index masks it builds, through the GPU lowering: on
the host emulator (always) and on an NVIDIA GPU (``test_cuda_*``, skips without one).

The causal stage's mask ``offs_m[:, None] >= start_n + offs_n[None, :]`` once came out as one compare per
register group: the axis analysis believed it constant over the whole tile (expand_dims kept the
divisibility of a run's first element for every element), so causal attention was wrong on every GPU
configuration while the CPU backend and the interpreter were right."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attention as A  # noqa: E402


@triton.jit
def diagonal_mask_kernel(X, Out, BM: tl.constexpr, BN: tl.constexpr):
    start_m = tl.program_id(0)
    offs_m = start_m * BM + tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    lo = tl.multiple_of(start_m * BM, BM)
    for start_n in range(lo, (start_m + 1) * BM, BN):
        start_n = tl.multiple_of(start_n, BN)
        ptrs = offs_m[:, None] * BM + (start_n - lo + offs_n)[None, :]
        x = tl.load(X + ptrs)
        mask = offs_m[:, None] >= (start_n + offs_n[None, :])
        tl.store(Out + ptrs, x * 2.0 + tl.where(mask, 0, -1.0e6))


@pytest.mark.parametrize("num_warps", [1, 2, 4])
@pytest.mark.parametrize("BM,BN", [(16, 16), (32, 16), (32, 32)])
def test_emulated_causal_mask_in_a_loop_from_lo(emulator, num_warps, BM, BN):
    N = 2 * BM
    x = np.random.default_rng(0).standard_normal((N, BM)).astype(np.float32)
    out = np.full_like(x, np.nan)
    diagonal_mask_kernel[(N // BM, )](x, out, BM=BM, BN=BN, num_warps=num_warps)
    rows = np.arange(N)[:, None]
    cols = rows // BM * BM + np.arange(BM)[None, :]
    want = x * np.float32(2) + np.where(rows >= cols, np.float32(0), np.float32(-1e6))
    np.testing.assert_array_equal(out, want)


@triton.jit
def index_masks_kernel(Out, n, BLOCK: tl.constexpr):
    # `n` is specialized as a multiple of 16: each compare of a run against it is constant over some
    # registers and not others; the analysis must tell which
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    rows = tl.arange(0, BLOCK)[:, None]
    base = Out + tl.program_id(0) * 8 * BLOCK * BLOCK + rows * BLOCK + tl.arange(0, BLOCK)[None, :]
    step = BLOCK * BLOCK
    tl.store(base + 0 * step, tl.where(n < offs, 1, 0)[None, :] + rows * 0)
    tl.store(base + 1 * step, tl.where(offs > n, 1, 0)[None, :] + rows * 0)
    tl.store(base + 2 * step, tl.where(offs <= n, 1, 0)[None, :] + rows * 0)
    tl.store(base + 3 * step, tl.where(n >= offs, 1, 0)[None, :] + rows * 0)
    tl.store(base + 4 * step, tl.where(rows >= (offs * 2)[None, :] - n, 1, 0))
    tl.store(base + 5 * step, tl.where(rows < ((offs << 1) - n)[None, :], 1, 0))
    tl.store(base + 6 * step, tl.where(rows >= offs[None, :] - n, 1, 0))
    tl.store(base + 7 * step, tl.where((rows + n) > offs[None, :], 1, 0))


@pytest.mark.parametrize("num_warps", [1, 4])
def test_emulated_index_masks_are_computed_per_element(emulator, num_warps):
    BLOCK, n, progs = 16, 16, 3
    out = np.full((progs, 8, BLOCK, BLOCK), -1, np.int32)
    index_masks_kernel[(progs, )](out, n, BLOCK=BLOCK, num_warps=num_warps)
    offs = (np.arange(progs)[:, None] * BLOCK + np.arange(BLOCK)[None, :])[:, None, :]   # [prog, 1, col]
    rows = np.arange(BLOCK)[None, :, None]
    want = np.stack([np.broadcast_to(c, (progs, BLOCK, BLOCK)) for c in (
        n < offs, offs > n, offs <= n, n >= offs, rows >= offs * 2 - n, rows < offs * 2 - n, rows >= offs - n,
        rows + n > offs)], axis=1).astype(np.int32)
    np.testing.assert_array_equal(out, want)


class _Numpy:
    put = get = staticmethod(lambda a: a)


class _Torch:
    @staticmethod
    def put(a):
        import torch
        return torch.from_numpy(a.copy()).to("cuda")

    @staticmethod
    def get(t):
        from tritium.runtime.driver import driver
        driver.active.synchronize()
        return t.cpu().numpy()


def _attention(dev, Z, H, N, D, causal, BM, BN, warps, stages, seed=0, kind="block_ptr"):
    """Max abs error against exact attention, and the compiled kernel."""
    rng = np.random.default_rng(seed)
    q, k, v = (rng.standard_normal((Z, H, N, D)).astype(np.float16) for _ in range(3))
    out = dev.put(np.full_like(q, np.nan))
    m = dev.put(np.zeros((Z * H, N), np.float32))
    kernel = A.run(dev.put(q), dev.put(k), dev.put(v), out, m, 0.5, causal, BM, BN, warps, stages, kind)
    got = dev.get(out).astype(np.float64)
    assert not np.isnan(got).any(), "elements left unwritten"
    return np.abs(got - A.reference(q, k, v, 0.5, causal)).max(), kernel


@pytest.mark.parametrize("kind", ["block_ptr", "pointers"])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("N,D,BM,BN,warps,stages", [(128, 16, 16, 16, 1, 1), (128, 32, 32, 16, 2, 3),
                                                     (128, 32, 32, 32, 4, 3), (64, 16, 32, 16, 4, 1)])
def test_emulated_attention_forward(emulator, kind, causal, N, D, BM, BN, warps, stages):
    assert _attention(_Numpy(), 1, 2, N, D, causal, BM, BN, warps, stages, kind=kind)[0] < 1e-2


def test_emulated_pipelined_loops_share_shared_memory(emulator):
    """Causal attention runs two pipelined loops one after the other: the second loop's stages take the bytes
    of the first's (and scratch buffers take what is free around them), and the results stay right."""
    N, D, BM, BN, S = 128, 32, 32, 32, 3
    one_loop = 2 * S * max(1024, D * BN * 2)      # K and V stages, each 1024-byte aligned
    sizes = {}
    for causal in (False, True):
        err, kernel = _attention(_Numpy(), 1, 2, N, D, causal, BM, BN, 4, S, kind="pointers")
        assert err < 1e-2
        sizes[causal] = kernel.metadata.shared
    assert one_loop <= sizes[False] < 2 * one_loop
    assert sizes[True] == sizes[False], sizes


@pytest.mark.parametrize("kind", ["block_ptr", "pointers"])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("N,D,BM,BN,warps,stages", [(256, 64, 64, 64, 4, 1), (256, 64, 128, 64, 4, 3),
                                                     (256, 128, 128, 128, 8, 3), (1024, 128, 128, 64, 8, 3),
                                                     (1024, 64, 64, 32, 4, 3),
                                                     # tiles wgmma cannot take (2 warps; 32 rows): mma.sync
                                                     (256, 64, 64, 64, 2, 3), (512, 128, 32, 32, 4, 3)])
def test_cuda_attention_forward(cuda, kind, causal, N, D, BM, BN, warps, stages):
    err, _ = _attention(_Torch(), 2, 3, N, D, causal, BM, BN, warps, stages, seed=N + D, kind=kind)
    assert err < 1e-2
