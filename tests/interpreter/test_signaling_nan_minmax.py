"""tl.minimum/tl.maximum (IEEE 754-2019 minimumNumber/maximumNumber as compiled) ignore a signaling NaN as they
ignore a quiet one. numpy's fmin/fmax, which the interpreter used, do so in their SIMD loops only: their scalar
loops (every accumulate, an array's tail) return NaN, so the oracle's answer hung on an element's position. Found
by the differential fuzzer on this host (seed 18020001, kernel 18020055060031: a reverse associative_scan of
tl.minimum over int64 data bitcast to float64, whose sNaN over a 0.0 gave NaN where every compiled target gave 0.0).
"""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl

from .conftest import run

N = 32
SNAN = {np.float64: np.uint64(0x7FF40E55309C38E2), np.float32: np.uint32(0x7FA00001)}


@triton.jit
def _min(a, b):
    return tl.minimum(a, b)


@triton.jit
def _max(a, b):
    return tl.maximum(a, b)


@triton.jit
def _minmax(x_ptr, y_ptr, lo_ptr, hi_ptr, fwd_ptr, rev_ptr, red_ptr, N: tl.constexpr):
    r = tl.arange(0, N)
    x = tl.load(x_ptr + r)
    y = tl.load(y_ptr + r)
    tl.store(lo_ptr + r, tl.minimum(x, y))
    tl.store(hi_ptr + r, tl.maximum(x, y))
    tl.store(fwd_ptr + r, tl.associative_scan(x, 0, _min))
    tl.store(rev_ptr + r, tl.associative_scan(x, 0, _min, reverse=True))
    tl.store(red_ptr, tl.min(x, 0))
    tl.store(red_ptr + 1, tl.reduce(x, 0, _max))


def _ignoring_nans(fn, a, b):
    return np.where(np.isnan(a), b, np.where(np.isnan(b), a, fn(a, b)))


@pytest.mark.parametrize("dt", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("interpret", [True, False], ids=["interpreter", "compiled"])
def test_signaling_nans_are_ignored_everywhere(dt, interpret):
    x = np.linspace(4.0, 1.0, N).astype(dt)
    x[[1, 9, 20, N - 2, N - 1]] = SNAN[dt].view(dt)     # in the SIMD body and in the scalar tail
    x[N - 3] = 0.5
    y = np.full(N, 2.0, dt)
    y[[0, N - 1]] = SNAN[dt].view(dt)                     # both NaN at N - 1
    outs = [np.zeros(N, dt) for _ in range(4)] + [np.zeros(2, dt)]
    lo, hi, fwd, rev, red = run(_minmax, (1, ), x, y, *outs, N=N, interpret=interpret)[2:]
    np.testing.assert_array_equal(lo, _ignoring_nans(np.minimum, x, y))
    np.testing.assert_array_equal(hi, _ignoring_nans(np.maximum, x, y))
    acc = [x[0]]
    for v in x[1:]:
        acc.append(_ignoring_nans(np.minimum, acc[-1], v))
    np.testing.assert_array_equal(fwd, np.array(acc, dt))
    racc = [x[-1]]
    for v in x[-2::-1]:
        racc.append(_ignoring_nans(np.minimum, racc[-1], v))
    np.testing.assert_array_equal(rev, np.array(racc[::-1], dt))    # the first entry is NaN only where all are
    np.testing.assert_array_equal(red, np.array([0.5, 4.0], dt))
