"""The sign of a zero from tl.maximum/tl.minimum (and tl.clamp) on the GPU emulator. x86 lowers llvm.maxnum/minnum
to maxss/minss, which return the second operand when the inputs compare equal, so max(-0.0, +0.0) came out -0.0 or
+0.0 by operand order; the interpreter, the CPU backend and (IEEE 754-2019 maximumNumber) GPUs order -0 below +0.
Found by the differential fuzzer (bfloat16 max in a loop). Settling it with llvm.maximumnum/minimumnum instead broke
NaN-ignoring: LLVM 22's x86 lowering returns the NaN when the other operand is known not to be one (an integer
converted to float), also found by the fuzzer."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl


@triton.jit
def min_max(x_ptr, y_ptr, o_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(o_ptr + offs, tl.maximum(x, y))
    tl.store(o_ptr + N + offs, tl.maximum(y, x))
    tl.store(o_ptr + 2 * N + offs, tl.minimum(x, y))
    tl.store(o_ptr + 3 * N + offs, tl.minimum(y, x))
    tl.store(o_ptr + 4 * N + offs, tl.clamp(x, y, y + 1))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_zero_signs(emulator, dtype):
    n = 32
    x = np.where(np.arange(n) % 2 == 0, -0.0, 0.0).astype(dtype)
    y = -x
    out = np.ones(5 * n, dtype)
    min_max[(1, )](x, y, out, n)
    neg = np.signbit(out)
    assert not neg[:2 * n].any(), "max(-0, +0) must be +0"
    assert neg[2 * n:4 * n].all(), "min(-0, +0) must be -0"
    # clamp(x, lo=y, hi=y+1): x = -0 with lo = +0 gives +0; x = +0 with lo = -0 gives +0
    assert not neg[4 * n:].any()


@triton.jit
def nan_ignoring(x_ptr, i_ptr, o_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    i = tl.load(i_ptr + offs)
    tl.store(o_ptr + offs, tl.maximum(x, 0.0))
    tl.store(o_ptr + N + offs, tl.minimum(i.to(x.dtype), x))
    tl.store(o_ptr + 2 * N + offs, tl.maximum(x, i.to(x.dtype)))
    tl.store(o_ptr + 3 * N + offs, tl.clamp(x, i.to(x.dtype), i.to(x.dtype) + 1))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_nan_is_ignored_next_to_a_converted_integer(emulator, dtype):
    n = 16
    x = np.full(n, np.nan, dtype)
    x[1] = 3.0
    i = np.arange(n, dtype=np.int32)
    out = np.zeros(4 * n, dtype)
    nan_ignoring[(1, )](x, i, out, n)
    got = out.reshape(4, n)
    want_relu = np.where(np.isnan(x), 0, np.maximum(x, 0))
    np.testing.assert_array_equal(got[0], want_relu)
    np.testing.assert_array_equal(got[1], np.fmin(i.astype(dtype), x))
    np.testing.assert_array_equal(got[2], np.fmax(x, i.astype(dtype)))
    np.testing.assert_array_equal(got[3], np.fmin(np.fmax(x, i.astype(dtype)), i.astype(dtype) + 1))
