"""Debugging and hints: ``static_assert``, ``static_print``, ``device_print``, ``device_assert`` (with debug on and
off), overflow sanitizing, ``multiple_of``/``max_contiguous``/``max_constancy``/``assume``, ``debug_barrier``."""
from __future__ import annotations

import re

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium import knobs


@triton.jit
def _static_checks(o_ptr, N: tl.constexpr):
    tl.static_assert(N % 2 == 0, "N must be even")
    tl.static_print("N is", N)
    tl.store(o_ptr, N)


def test_static_assert_and_print(backend, capsys):
    out = np.zeros(1, np.int32)
    _static_checks[(1, )](out, 4)
    assert out[0] == 4 and "N is 4" in capsys.readouterr().out
    with pytest.raises(triton.CompilationError, match="N must be even"):
        _static_checks[(1, )](out, 3)


@triton.jit
def _printing(x_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    tl.device_print("x", x)
    tl.device_print("pair: ", x, x * 2)
    tl.device_print("hex", x, hex=True)
    s = tl.sum(x, 0)
    tl.device_print("sum", s)
    print("builtin", s)


def test_device_print(backend, capfd):
    backend.require("device-print")
    N = 4
    x = np.array([5, -3, 12, 7], np.int32)
    _printing[(2, )](x, N)
    out = capfd.readouterr().out
    lines = out.strip().splitlines()
    for pid in (0, 1):
        for i, v in enumerate(x):
            assert re.search(rf"pid \({pid}, 0, 0\) idx \(\s*{i}\) x: {v}\s*$", out, re.M), out
            assert re.search(rf"pid \({pid}, 0, 0\) idx \(\s*{i}\) pair: {v}, {2 * v}\s*$", out, re.M), out
        assert re.search(rf"pid \({pid}, 0, 0\) idx \(\) sum: {x.sum()}\s*$", out, re.M), out
        assert re.search(rf"pid \({pid}, 0, 0\) idx \(\) builtin: {x.sum()}\s*$", out, re.M), out
    assert any("hex: 0xc" in ln for ln in lines), out
    assert len(lines) == 2 * (3 * N + 2)


@triton.jit(debug=True)
def _asserting(x_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    tl.device_assert(x >= 0, "negative input")
    assert x.max() < 100, "too big"


@triton.jit
def _asserting_nodebug(x_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    tl.device_assert(x >= 0, "negative input")


def test_device_assert(backend):
    backend.require("device-assert")
    good = np.arange(8, dtype=np.int32)
    _asserting[(1, )](good, 8)
    bad = good.copy()
    bad[3] = -1
    with pytest.raises(AssertionError, match="negative input"):
        _asserting[(1, )](bad, 8)
    big = good.copy()
    big[5] = 1000
    with pytest.raises(AssertionError, match="too big"):
        _asserting[(1, )](big, 8)
    _asserting_nodebug[(1, )](bad, 8)        # without debug the check is not compiled in
    _asserting[(1, )](good, 8)               # a failure does not poison later launches


@triton.jit(debug=True)
def _overflow(x_ptr, o_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    tl.store(o_ptr + offs, x + 1)


def test_sanitize_overflow(backend):
    backend.require("device-assert")
    x = np.array([1, 2, 2**31 - 1, 4], np.int32)
    out = np.zeros_like(x)
    with knobs.compilation.scope():
        knobs.compilation.sanitize_overflow = True
        with pytest.raises(AssertionError, match="overflow"):
            _overflow[(1, )](x, out, 4)
    x[2] = 5
    _overflow[(1, )](x, out, 4)
    np.testing.assert_array_equal(out, x + 1)


@triton.jit
def _hints(x_ptr, o_ptr, n, N: tl.constexpr):
    tl.assume(n > 0)
    base = tl.multiple_of(tl.program_id(0) * N, N)
    offs = tl.max_contiguous(tl.multiple_of(base + tl.arange(0, N), [N]), N)
    same = tl.max_constancy(offs // N, [N])
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.debug_barrier()
    tl.store(o_ptr + offs, x + same, mask=offs < n)


def test_hints_change_nothing(backend):
    n, N = 50, 16
    x = np.arange(n, dtype=np.float32)
    out = np.zeros(n, np.float32)
    _hints[(triton.cdiv(n, N), )](x, out, n, N)
    np.testing.assert_array_equal(out, x + np.arange(n) // N)
