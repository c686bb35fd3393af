"""A full reduction (axis=None) stored through a scalar pointer writes exactly one element.

Found by Triton's ``test_reduce[...-None-False]``: its kernel starts from ``z_ptr = Z`` and replaces the pointer
only under ``if AXIS == 0:`` / ``elif AXIS == 1:``. With ``AXIS=None`` the compiler evaluated ``None == 0`` as
``None.__eq__(0)``, got ``NotImplemented`` (truthy) and took the branch: the scalar was broadcast over a
32-element pointer block, 31 elements past a one-element output (glibc then aborted on the heap). The output
here sits between guard elements that must stay untouched, so an overrun is a failure, not a crash.
"""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl

GUARD = 64   # more than any pointer block the kernel could wrongly store through
SENTINEL = -12345


@triton.jit
def _full_reduce(x_ptr, guarded_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, OP: tl.constexpr,
                 AXIS: tl.constexpr, KEEP: tl.constexpr, G: tl.constexpr):
    Z = guarded_ptr + G   # the output follows G guard elements
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    if K > 1:
        x = tl.load(x_ptr + rm[:, None, None] * N * K + rn[None, :, None] * K + rk[None, None, :])
    else:
        x = tl.load(x_ptr + rm[:, None] * N + rn[None, :])
    if OP == "sum":
        z = tl.sum(x, axis=AXIS, keep_dims=KEEP)
    elif OP == "max":
        z = tl.max(x, axis=AXIS, keep_dims=KEEP)
    elif OP == "min":
        z = tl.min(x, axis=AXIS, keep_dims=KEEP)
    elif OP == "argmax":
        z = tl.argmax(x, axis=AXIS, keep_dims=KEEP)
    else:
        z = tl.argmin(x, axis=AXIS, keep_dims=KEEP)
    # Triton's test_reduce chooses its output pointer this way: the branches must not be taken for AXIS=None
    z_ptr = Z
    if KEEP and AXIS is None:
        if K > 1:
            z_ptr = z_ptr[None, None, None, :]
        else:
            z_ptr = z_ptr[None, None, :]
    if AXIS == 0:
        z_ptr = Z + rn
    elif AXIS == 1:
        z_ptr = Z + rm
    tl.store(z_ptr, z)


@pytest.mark.parametrize("shape", [(16, 32), (32, 2, 16)])
@pytest.mark.parametrize("keep", [False, True])
@pytest.mark.parametrize("op", ["sum", "max", "min"])   # argmin/argmax need an axis (as in Triton)
def test_full_reduction_stores_one_element(backend, rng, shape, keep, op):
    x = rng.standard_normal(shape).astype(np.float32)
    out = np.full(2 * GUARD + 1, SENTINEL, np.float32)
    k = shape[2] if len(shape) == 3 else 1
    _full_reduce[(1, )](x, out, shape[0], shape[1], k, op, None, keep, GUARD)
    want = {"sum": np.sum, "max": np.max, "min": np.min}[op](x)
    np.testing.assert_array_equal(out[:GUARD], SENTINEL, err_msg="written before the output")
    np.testing.assert_array_equal(out[GUARD + 1:], SENTINEL, err_msg="written past the one-element output")
    if op == "sum":
        np.testing.assert_allclose(out[GUARD], want, rtol=1e-5, atol=1e-4)
    else:
        np.testing.assert_array_equal(out[GUARD], want)


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("op", ["max", "argmin"])
def test_axis_reduction_still_takes_its_branch(backend, rng, axis, op):
    """The constexpr comparisons that must be false for AXIS=None are true for AXIS=0 and 1."""
    shape = (16, 32)
    x = rng.permutation(shape[0] * shape[1]).astype(np.float32).reshape(shape)   # distinct: one arg index
    n = shape[1 - axis]
    dt = np.int32 if op == "argmin" else np.float32
    out = np.full(2 * GUARD + n, SENTINEL, dt)
    _full_reduce[(1, )](x, out, shape[0], shape[1], 1, op, axis, False, GUARD)
    want = x.argmin(axis) if op == "argmin" else x.max(axis)
    np.testing.assert_array_equal(out[GUARD:GUARD + n], want)
    np.testing.assert_array_equal(out[:GUARD], SENTINEL)
    np.testing.assert_array_equal(out[GUARD + n:], SENTINEL)


@triton.jit
def _compare_none(o_ptr, A: tl.constexpr):
    # each comparison of None with a number must be a compile-time False (== 0, != 0 is True)
    tl.store(o_ptr + 0, tl.full((), A == 0, tl.int32))
    tl.store(o_ptr + 1, tl.full((), A != 0, tl.int32))
    tl.store(o_ptr + 2, tl.full((), 0 == A, tl.int32))
    tl.store(o_ptr + 3, tl.full((), A == "x", tl.int32))


def test_constexpr_none_compares_like_python(backend):
    out = np.full(4, SENTINEL, np.int32)
    _compare_none[(1, )](out, None)
    np.testing.assert_array_equal(out, [0, 1, 0, 0])
