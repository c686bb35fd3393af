"""numpy scalars as kernel arguments pass as the Python numbers they hold (np.float32 -> fp32, np.bool_ -> i1,
np.int64 -> i32/i64 by value), compiled and interpreted; before, those that are not Python-number subclasses went
through the array interface and the kernel got the address of a temporary (a compile error, or wrong values)."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl


@triton.jit
def _scale(x_ptr, s, flag, N: tl.constexpr):
    o = tl.arange(0, N)
    y = tl.load(x_ptr + o) * s
    tl.store(x_ptr + o, tl.where(flag, y, -y))


SCALARS = [np.float32(0.25), np.float16(1.5), np.float64(0.125), np.int32(3), np.int64(-2), np.uint8(7),
           np.int64(2**40)]


@pytest.mark.parametrize("interpret", [False, True], ids=["compiled", "interpreted"])
@pytest.mark.parametrize("s", SCALARS, ids=lambda v: type(v).__name__)
@pytest.mark.parametrize("flag", [np.bool_(True), np.bool_(False)], ids=["true", "false"])
def test_numpy_scalar_is_its_number(s, flag, interpret):
    _scale.interpret = interpret
    try:
        x = np.arange(8, dtype=np.float32)
        want = x * np.float32(float(s)) * (1 if flag else -1)
        _scale[(1, )](x, s, flag, N=8)
        np.testing.assert_allclose(x, want, rtol=1e-6)
    finally:
        _scale.interpret = False


def test_complex_scalar_is_refused():
    with pytest.raises(TypeError, match="numpy complex128 scalar"):
        _scale[(1, )](np.zeros(8, np.float32), np.complex128(1), True, N=8)
