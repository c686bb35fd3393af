"""A pipelined loop whose dot is left in flight (targets with asynchronous tensor cores) computes the next stages'
addresses after the iteration's own ops; those addresses (``k + tl.arange``, expanded and broadcast) must be
computed from the iteration they load for, never taken from what the current iteration already computed in the
same layout. On sm_90 this gave wrong matmuls (conformance test_matmul_with_edges on the H200, 80% of the
elements) once index arithmetic was recomputed in its users' layouts: the recomputation looked the current
iteration's index vectors up in the loop body's cache. The emulator runs the same lowering; here it is told
its dots are asynchronous (its waits are no-ops), which takes that path without a GPU."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl


@triton.jit
def _masked_matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in tl.range(0, K, BK, num_stages=3):
        rk = k + tl.arange(0, BK)
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@pytest.mark.parametrize("async_dots", [False, True])
def test_ahead_copies_use_their_own_iteration(emulator, monkeypatch, async_dots):
    from tritium import knobs
    from tritium.gpu.emulator import EmulatorTarget
    monkeypatch.setattr(EmulatorTarget, "async_dots", async_dots)
    knobs.compilation.always_compile = True        # the target's attribute is not part of the cache key
    M, N, K = 45, 70, 81
    rng = np.random.default_rng(7)
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    c = np.full((M, N), np.nan, np.float32)
    _masked_matmul[(triton.cdiv(M, 32), triton.cdiv(N, 32))](a, b, c, M, N, K, 32, 32, 16)
    np.testing.assert_allclose(c, a @ b, rtol=1e-3, atol=1e-3)
