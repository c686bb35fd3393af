"""float64 ``libdevice`` functions at the edges of their domains that the whole-domain sweep of the fourth session
found over CUDA's documented bounds, on the CPU backend at every ISA level and in the interpreter, against mpmath:

- ``erfcinv``/``normcdfinv`` of subnormal arguments in the interpreter: Newton on erfc stopped where its slope
  exp(-x^2) underflows (erfcinv(5e-324) was 27.2099, not 27.2133: 9e11 ulp; CUDA: 6 and 8 ulp).
- ``erfcx`` of large negative x on the CPU backend: -inf where x^2 is finite but exp(x^2) overflows (x =
  -5.8e29; the fma's low part of x^2 multiplied the infinity), true +inf.
- ``cyl_bessel_i1`` of x <= -1419.6 in the interpreter: +inf (Python's exp raised and the overflow lost the sign),
  true -inf.
- ``remainder`` on the CPU backend: a zero result must take x's sign (IEEE 754); glibc's was +0 for
  remainder(-4.5e-276, 4e-323) (the interpreter, through Python's math.remainder, gave -0).
"""
from __future__ import annotations

import functools
import math
import os
import sys

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium.language.extra import libdevice
from tritium_cpu import isa

# the shared helpers live beside this file (pytest imports tests with importlib, so the folder is not on
# sys.path by itself)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from libdevice_modes import launch, ulps64  # noqa: E402

MODES = [*isa.levels_to_check(), "interpreter"]


@triton.jit
def _inverses(y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    y = tl.load(y_ptr + offs, mask=mask, other=0.5)
    tl.store(out_ptr + offs, libdevice.erfcinv(y), mask=mask)
    tl.store(out_ptr + n + offs, libdevice.normcdfinv(y), mask=mask)


@functools.lru_cache(maxsize=None)
def _references(y: tuple) -> list:
    """erfcinv(y) for each y, then normcdfinv(y) = -sqrt(2) erfcinv(2 y): roots of erfc, which mpmath evaluates
    to full relative precision however small (erfinv(1 - y) would need ~330 digits for 1 - y alone)."""
    import mpmath
    with mpmath.workdps(40):
        # in log space: erfc(x) - v is below any absolute tolerance here
        root = lambda v: mpmath.findroot(lambda x: mpmath.log(mpmath.erfc(x)) - mpmath.log(v),  # noqa: E731
                                         mpmath.sqrt(-mpmath.log(v)))
        ecinv = [root(mpmath.mpf(v)) for v in y]
        return ecinv + [-mpmath.sqrt(2) * root(2 * mpmath.mpf(v)) for v in y]


@pytest.mark.parametrize("mode", MODES)
def test_erfcinv_normcdfinv_of_subnormals(mode):
    y = np.concatenate([[5e-324, 1e-323, 3e-320, 1e-315, 2.2250738585072014e-308 / 3, 2.2250738585072014e-308],
                        np.geomspace(1e-307, 1e-299, 6)])
    out = np.empty(2 * y.size)
    launch(mode, _inverses, (1, ), y, out, y.size, 16)
    err = ulps64(out, _references(tuple(y)))
    worst = int(np.argmax(err - np.repeat([6, 8], y.size)))
    name = "normcdfinv" if worst >= y.size else "erfcinv"
    assert err[worst] <= (8 if worst >= y.size else 6), \
        f"{name}({y[worst % y.size]!r}) = {out[worst]!r}: {err[worst]:.3g} ulp"


@triton.jit
def _overflowing(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1.0)
    tl.store(out_ptr + offs, libdevice.erfcx(x), mask=mask)
    tl.store(out_ptr + n + offs, libdevice.cyl_bessel_i0(x), mask=mask)
    tl.store(out_ptr + 2 * n + offs, libdevice.cyl_bessel_i1(x), mask=mask)


@pytest.mark.parametrize("mode", MODES)
def test_erfcx_and_bessel_i_overflow_with_their_signs(mode):
    x = np.array([-27.0, -1e10, -5.77036121707544e29, -1e100, -1.3e154, -1e200, -1500.0, -4357.8, -1e5, 4357.8])
    out = np.empty(3 * x.size)
    launch(mode, _overflowing, (1, ), x, out, x.size, 16)
    erfcx, i0, i1 = out.reshape(3, -1)
    np.testing.assert_array_equal(erfcx[:-1], np.inf)       # 2 exp(x^2) overflows from x = -26.6
    np.testing.assert_array_equal(i0[6:], np.inf)
    np.testing.assert_array_equal(i1[6:], [-np.inf, -np.inf, -np.inf, np.inf])


@triton.jit
def _remainder(a_ptr, b_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask, other=1.0)
    b = tl.load(b_ptr + offs, mask=mask, other=1.0)
    tl.store(out_ptr + offs, libdevice.remainder(a, b), mask=mask)


@pytest.mark.parametrize("mode", MODES)
def test_remainder_zero_takes_the_sign_of_x(mode):
    a = np.array([-4.525519097602761e-276, -4.0, 4.0, -3e-323, -1e-300, 7.5, -7.5])
    b = np.array([4e-323, 2.0, 2.0, 1e-323, 2.0 ** -1022, 2.5, 2.5])
    out = np.empty_like(a)
    launch(mode, _remainder, (1, ), a, b, out, a.size, 16)
    want = np.array([math.remainder(x, y) for x, y in zip(a.tolist(), b.tolist())])
    np.testing.assert_array_equal(out, want)
    assert list(np.signbit(out)) == list(np.signbit(want)), (out, want)
