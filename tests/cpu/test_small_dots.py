"""tl.dot below 16 in M, N or K on the CPU backend (Triton-CPU and Triton's interpreter allow any size; libraries
written for them, e.g. FlagGems' CPU configs with 4x4x4 tiles, rely on it): right answers against float64."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl


@triton.jit
def _dot(a, b, c, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, ACC: tl.constexpr):
    m = tl.arange(0, M)
    n = tl.arange(0, N)
    k = tl.arange(0, K)
    x = tl.load(a + m[:, None] * K + k[None, :])
    y = tl.load(b + k[:, None] * N + n[None, :])
    tl.store(c + m[:, None] * N + n[None, :], tl.dot(x, y, out_dtype=ACC))


@pytest.mark.parametrize("M,N,K", [(4, 4, 4), (1, 8, 2), (2, 1, 4), (16, 4, 8), (8, 8, 1)])
@pytest.mark.parametrize("dtype", ["float32", "float16", "int8"])
def test_small_dot_matches_float64(M, N, K, dtype):
    rng = np.random.default_rng(M * 100 + N * 10 + K)
    a = (rng.standard_normal((M, K)) * 4).astype(dtype)
    b = (rng.standard_normal((K, N)) * 4).astype(dtype)
    integer = dtype == "int8"
    c = np.zeros((M, N), np.int32 if integer else np.float32)
    _dot[(1,)](a, b, c, M, N, K, tl.int32 if integer else tl.float32)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    if integer:
        np.testing.assert_array_equal(c, ref.astype(np.int32))
    else:
        np.testing.assert_allclose(c, ref, rtol=1e-5, atol=1e-5)
