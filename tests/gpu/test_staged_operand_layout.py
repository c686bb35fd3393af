"""A pipelined dot operand staged along the other dimension than global memory runs along (core/tritium/gpu:
LayoutPolicy.dot_operand_contiguous and staged_copy; on sm_90 a tf32 B stored (K, N), which wgmma reads only
K-major). The NVIDIA policy asks for it only for wgmma, which the emulator does not run; here the emulator's
policy is made to ask for it for its own (FMA) dots, so the target-neutral parts run for real: the copy layout
(one element per thread and copy) and its address arithmetic, element-by-element copies into the K-major
stage, and the dot reading that stage. On the H200 the wgmma side is checked by tests/gpu/test_wgmma_types.py
(``k_major_b=False``)."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl


@triton.jit
def _matmul_nk(A, B, C, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    offs_m = tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in range(0, K, BK):
        a = tl.load(A + offs_m[:, None] * K + (k + offs_k)[None, :])
        b = tl.load(B + (k + offs_k)[:, None] * BN + offs_n[None, :], mask=(k + offs_k)[:, None] < K, other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")
    tl.store(C + offs_m[:, None] * BN + offs_n[None, :], acc)


@pytest.mark.parametrize("warps", [4, 8])
def test_emulated_k_major_stage_of_an_n_major_operand(emulator, monkeypatch, warps):
    from tritium import knobs
    from tritium.gpu.assign import LayoutPolicy
    monkeypatch.setattr(LayoutPolicy, "dot_operand_contiguous", lambda self, kind, operand: 1 - operand)
    monkeypatch.setattr(LayoutPolicy, "pipelines", True, raising=False)
    monkeypatch.setattr(knobs.compilation, "always_compile", True)
    BM, BN, BK, K = 32, 64, 16, 80
    rng = np.random.default_rng(warps)
    a = rng.standard_normal((BM, K)).astype(np.float32)
    b = rng.standard_normal((K, BN)).astype(np.float32)
    c = np.full((BM, BN), np.nan, np.float32)
    k = _matmul_nk[(1, )](a, b, c, K, BM=BM, BN=BN, BK=BK, num_warps=warps, num_stages=3)
    # the path ran: B's load has the copy layout (one element per thread, 8 lanes along N by 4 along K)
    assert "blocked{spt=[1,1],tpw=[4,8]" in k.asm["ttgir"], k.asm["ttgir"]
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-5, atol=1e-4)
