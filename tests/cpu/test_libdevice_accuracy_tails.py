"""float64 ``libdevice`` functions within CUDA's documented maximum ulp errors where their naive formulas lose
it, on the CPU backend at every ISA level and in the interpreter (the fuzzer's oracle), against mpmath:

- ``erfinv`` near +-1: Newton on erf is limited by erf's absolute rounding near 1, which the root's slope
  magnifies (erfinv(1 - 2^-53) was 5.46 instead of 5.86, 4.6e14 ulp); CUDA: 5 ulp.
- ``normcdf`` in the lower tail: erfc(-x / sqrt(2)) magnifies the product's rounding ~x^2 times (1e3 ulp at
  x = -28); CUDA: 5 ulp.
- ``cospi`` near half-integers: cos(pi r) magnified pi r's rounding (3e3 ulp at x = 1.5001); CUDA: 2 ulp.
- ``erfcx`` where x^2 overflows: -inf for x = -1e200 and NaN for -inf (true: +inf).
"""
from __future__ import annotations

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
def _one(x_ptr, y_ptr, n, FN: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.5)
    if FN == "erfinv":
        y = libdevice.erfinv(x)
    elif FN == "normcdf":
        y = libdevice.normcdf(x)
    elif FN == "cospi":
        y = libdevice.cospi(x)
    elif FN == "sinpi":
        y = libdevice.sinpi(x)
    else:
        y = libdevice.erfcx(x)
    tl.store(y_ptr + offs, y, mask=mask)


def _run(mode: str, fn: str, x: np.ndarray) -> np.ndarray:
    y = np.empty_like(x)
    launch(mode, _one, (triton.cdiv(x.size, 256), ), x, y, x.size, fn, 256)
    return y


def _check(mode: str, fn: str, x: np.ndarray, ref, bound: float) -> None:
    import mpmath
    mpmath.mp.dps = 50
    got = _run(mode, fn, x)
    err = ulps64(got, [ref(mpmath.mpf(float(v))) for v in x])
    worst = int(np.argmax(err))
    assert err[worst] <= bound, f"{fn}({x[worst]!r}) = {got[worst]!r}: {err[worst]:.3g} ulp (bound {bound})"


@pytest.mark.parametrize("mode", MODES)
def test_erfinv_near_one(mode):
    import mpmath
    d = np.geomspace(2.0 ** -53, 0.5, 120)
    x = np.concatenate([1 - d, d - 1])
    _check(mode, "erfinv", x, mpmath.erfinv, 5)


@pytest.mark.parametrize("mode", MODES)
def test_normcdf_lower_tail(mode):
    import mpmath
    _check(mode, "normcdf", -np.geomspace(1.0, 38.0, 150), mpmath.ncdf, 5)


@pytest.mark.parametrize("mode", MODES)
def test_cospi_near_half_integers(mode):
    import mpmath
    x = np.concatenate([np.arange(-300, 300, 7) + 0.5 + s for s in (1e-4, -1e-7, 3e-12)])
    _check(mode, "cospi", x, mpmath.cospi, 2)


@pytest.mark.parametrize("mode", MODES)
def test_erfcx_where_the_square_overflows(mode):
    x = np.array([-1e200, -1e160, -np.inf, -27.0])
    got = _run(mode, "erfcx", x)
    assert np.all(got == np.inf), got


@pytest.mark.parametrize("mode", MODES)
def test_normcdf_erfinv_special_values(mode):
    # the tail correction must leave the ends alone (normcdf(-inf) came out NaN with it)
    x = np.array([-np.inf, np.inf, np.nan, -1e300, 1e300, -0.0, 0.0])
    np.testing.assert_array_equal(_run(mode, "normcdf", x), [0.0, 1.0, np.nan, 0.0, 1.0, 0.5, 0.5])
    y = _run(mode, "erfinv", np.array([1.0, -1.0, 1.5, np.nan, -0.0, 0.0]))
    np.testing.assert_array_equal(y, [np.inf, -np.inf, np.nan, np.nan, -0.0, 0.0])
    assert np.signbit(y[4]) and not np.signbit(y[5])


@pytest.mark.parametrize("mode", MODES)
def test_sinpi_cospi_special_values(mode):
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 0.5, -0.5, 1.5])
    s = _run(mode, "sinpi", x)
    np.testing.assert_array_equal(s, [0.0, -0.0, np.nan, np.nan, np.nan, 1.0, -1.0, -1.0])
    assert list(np.signbit(s[:2])) == [False, True], s     # sinpi(-0) was +0
    np.testing.assert_array_equal(_run(mode, "cospi", x), [1.0, 1.0, np.nan, np.nan, np.nan, 0.0, 0.0, 0.0])
