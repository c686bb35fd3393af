"""Narrowing to float8e5 (E5M2) rounding to nearest saturates, as Triton's conversion does: values past the
largest finite one, infinities included, become +-57344; NaN stays NaN. Rounding toward zero keeps an infinity.

Triton 3.6 compiles ``x.to(tl.float8e5)`` for sm_90 to ``cvt.rn.satfinite.e5m2x2.f32`` (``.f16x2`` from half),
and the ``rtz`` cast to ``cvt.rz.f16.f32`` followed by keeping the half's top byte (an infinity stays one, a
finite overflow stops at the largest finite half, whose top byte is 57344). Triton's own
test_conversions.py::test_typeconvert_downcast_clamping expects +-57344 for +-inf. tritium's GPU lowering
saturated already; the CPU math library and the interpreter gave inf, as torch's float8_e5m2 does.
A constant infinity is not a conversion: ``tl.full(..., inf, tl.float8e5)`` stays inf.
"""
import numpy as np
import pytest

import tritium as triton
import tritium.language as tl

E5_MAX, E5_INF = 0x7B, 0x7C


@pytest.fixture
def mode(compiled_or_interpreted):
    return compiled_or_interpreted


@triton.jit
def _narrow(X, RNE, RTZ, BLOCK: tl.constexpr):
    o = tl.arange(0, BLOCK)
    x = tl.load(X + o)
    tl.store(RNE + o, x.to(tl.float8e5))
    tl.store(RTZ + o, x.to(tl.float8e5, fp_downcast_rounding="rtz"))


@triton.jit
def _inf_constant(Y, BLOCK: tl.constexpr):
    tl.store(Y + tl.arange(0, BLOCK), tl.full([BLOCK], float("inf"), tl.float8e5))


def _run(x, n=8):
    rne = np.zeros(n, np.uint8)
    rtz = np.zeros(n, np.uint8)
    _narrow[(1, )](x, triton.reinterpret(rne, tl.float8e5), triton.reinterpret(rtz, tl.float8e5), BLOCK=n)
    return rne, rtz


def _is_nan(code):
    return (code & 0x7C) == 0x7C and (code & 0x03) != 0


@pytest.mark.parametrize("src", ["float32", "bfloat16"])
def test_wide_sources(mode, src):
    vals = [np.inf, -np.inf, 1e6, -1e6, 61440.0, 61441.0, 57344.0, 1.0]
    x = np.array(vals, np.float32)
    if src == "bfloat16":   # the top halves: these values are bfloat16 numbers too (61441 becomes 61440)
        x = triton.reinterpret((x.view(np.uint32) >> 16).astype(np.uint16), tl.bfloat16)
    rne, rtz = _run(x)
    sat = [E5_MAX, E5_MAX | 0x80, E5_MAX, E5_MAX | 0x80, E5_MAX, E5_MAX, E5_MAX, 0x3C]
    assert [hex(v) for v in rne] == [hex(v) for v in sat]
    assert [hex(v) for v in rtz] == [hex(v) for v in [E5_INF, E5_INF | 0x80] + sat[2:]]


def test_half_source(mode):
    x = np.array([np.inf, -np.inf, 65504.0, -61440.0, 57344.0, np.nan, 1.0, -2.0], np.float16)
    rne, rtz = _run(x)
    assert [hex(v) for v in rne[[0, 1, 2, 3, 4, 6, 7]]] == \
        [hex(v) for v in [E5_MAX, E5_MAX | 0x80, E5_MAX, E5_MAX | 0x80, E5_MAX, 0x3C, 0xC0]]
    assert [hex(v) for v in rtz[[0, 1, 2, 3, 4, 6, 7]]] == \
        [hex(v) for v in [E5_INF, E5_INF | 0x80, E5_MAX, E5_MAX | 0x80, E5_MAX, 0x3C, 0xC0]]
    assert _is_nan(rne[5]) and _is_nan(rtz[5])


def test_an_infinite_constant_stays_infinite(mode):
    y = np.zeros(4, np.uint8)
    _inf_constant[(1, )](triton.reinterpret(y, tl.float8e5), BLOCK=4)
    assert list(y) == [E5_INF] * 4
