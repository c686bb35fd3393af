"""A dot's accumulator that is also used elsewhere keeps its value there: the CPU backend accumulates a dot in
place into its accumulator's buffer only when nothing else reads it. Found by the differential fuzzer (seed
1601004809): ``tl.dot(a, b, tl.abs(c))`` and a store of ``tl.abs(c)`` (one value after CSE) stored the dot's
result instead of ``|c|``."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl


@triton.jit
def _dot_and_accumulator(a_ptr, b_ptr, c_ptr, out_dot, out_acc, B: tl.constexpr, PRECISION: tl.constexpr):
    r = tl.arange(0, B)
    offs = r[:, None] * B + r[None, :]
    a, b, c = tl.load(a_ptr + offs), tl.load(b_ptr + offs), tl.load(c_ptr + offs)
    acc = tl.abs(c)
    tl.store(out_dot + offs, tl.dot(a, b, acc, input_precision=PRECISION))
    tl.store(out_acc + offs, tl.abs(c))


@pytest.mark.parametrize("precision", ["ieee", "tf32x3"])
def test_accumulator_used_after_the_dot_keeps_its_value(precision):
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal((16, 16)).astype(np.float32) for _ in range(3))
    out_dot, out_acc = np.empty_like(c), np.empty_like(c)
    _dot_and_accumulator[(1, )](a, b, c, out_dot, out_acc, B=16, PRECISION=precision)
    np.testing.assert_array_equal(out_acc, np.abs(c))
    np.testing.assert_allclose(out_dot, a.astype(np.float64) @ b + np.abs(c), rtol=1e-4, atol=1e-4)
