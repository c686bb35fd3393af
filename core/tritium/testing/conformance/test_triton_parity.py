"""Semantics that Triton's own language tests (python/test/unit/language) rely on and that tritium once got
wrong: each test names the Triton test that exposed the gap."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl


@triton.jit
def _flip3d(x_ptr, z_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, DIM: tl.constexpr):
    off = (tl.arange(0, M)[:, None, None] * N * K + tl.arange(0, N)[None, :, None] * K
           + tl.arange(0, K)[None, None, :])
    tl.store(z_ptr + off, tl.flip(tl.load(x_ptr + off), DIM))


@pytest.mark.parametrize("dim", [0, 1, 2, -1, -2, -3])
def test_flip_negative_dim(backend, dim):
    # test_standard.py::test_flip[-2-...]: a negative dim counts from the last, as in torch.flip
    x = np.arange(4 * 2 * 8, dtype=np.int32).reshape(4, 2, 8)
    z = np.zeros_like(x)
    _flip3d[(1, )](x, z, 4, 2, 8, dim)
    np.testing.assert_array_equal(z, np.flip(x, dim))
