"""Software-pipelined loops (num_stages > 1) stage every load of a tile in a loop that is pipelined for its
dots, including loads that do not feed a dot (a row statistic read next to the dot operands), and loads
whose layout holds each element in several threads (a tile smaller than the program): only one thread
copies each element. A predicated-off copy writes zeros, so the duplicates' copies once raced with the
real one and the loop read zeros. On the GPU emulator (always) and an NVIDIA GPU."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl


@triton.jit
def dot_and_rows(A, B, S, O, C, NK, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    offs_m = tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), tl.float32)
    cur = 0
    for i in range(NK):
        a = tl.load(A + offs_m[:, None] * (NK * BK) + (i * BK + offs_k)[None, :])
        b = tl.load(B + (i * BK + offs_k)[:, None] * BN + offs_n[None, :])
        s = tl.load(S + cur + offs_m)                   # not a dot operand
        acc = tl.dot(a, b, acc) + s[:, None]
        tl.store(O + cur + offs_m, s)
        cur += BM
    tl.store(C + offs_m[:, None] * BN + offs_n[None, :], acc)


@pytest.mark.parametrize("BM,BN,BK", [(32, 32, 16), (16, 16, 16)])
@pytest.mark.parametrize("stages", [2, 3])
def test_staged_loads_with_duplicated_layouts(dev, BM, BN, BK, stages):
    NK = 6
    rng = np.random.default_rng(BM + stages)
    a = rng.standard_normal((BM, NK * BK)).astype(np.float16)
    b = rng.standard_normal((NK * BK, BN)).astype(np.float16)
    s = rng.standard_normal(NK * BM).astype(np.float32)
    c = dev.put(np.full((BM, BN), np.nan, np.float32))
    o = dev.put(np.full(NK * BM, np.nan, np.float32))
    dot_and_rows[(1, )](dev.put(a), dev.put(b), dev.put(s), o, c, NK, BM=BM, BN=BN, BK=BK, num_warps=4,
                        num_stages=stages)
    np.testing.assert_array_equal(dev.get(o), s)
    want = a.astype(np.float64) @ b.astype(np.float64) + s.reshape(NK, BM).sum(0)[:, None]
    np.testing.assert_allclose(dev.get(c), want, rtol=1e-3, atol=1e-3)
