"""Reductions over masked rows and columns on the CPU backend, at every x86-64 level this host runs, against the
interpreter: NaN and infinities among the values, rows with every element masked off, widths that are no multiple
of any vector, contiguous and strided masked loads, and 16-bit floats loaded under a mask.

The explicit vector reductions (codegen/vreduce.py) load each vector of a masked row with one masked vector load
(codegen/lanes.py); they used to gather it lane by lane, a branch around a scalar load per lane, which no
vectorizer undid: 4 blocks of 8192-wide masked rows became ~28,000 lines of optimized LLVM IR and scalar loops.
``test_masked_rows_load_vectors`` keeps that form from coming back."""
from __future__ import annotations

import re

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium_cpu import isa

LEVELS = isa.levels_to_check()
BLOCK_M, BLOCK_N = 8, 128          # long enough rows for the vector reduction at every level and type


@triton.jit
def _add(a, b):
    return a + b


@triton.jit
def _max_nan(a, b):
    return tl.maximum(a, b, propagate_nan=tl.PropagateNan.ALL)


@triton.jit
def float_rows(x_ptr, h_ptr, o_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    inside = (rows[:, None] < M) & (cols[None, :] < N)
    at = rows[:, None] * N + cols[None, :]
    x = tl.load(x_ptr + at, mask=inside, other=0.0)
    lo = tl.load(x_ptr + at, mask=inside, other=float("-inf"))
    hi = tl.load(x_ptr + at, mask=inside, other=float("inf"))
    # the same rows read backwards (a step of -1 element along the reduced axis: a gather)
    xt = tl.load(x_ptr + rows[:, None] * N + (N - 1 - cols[None, :]), mask=inside, other=0.0)
    h = tl.load(h_ptr + at, mask=inside, other=0.0).to(tl.float32)
    out = o_ptr + tl.arange(0, BLOCK_M)          # every row is stored, the masked-off ones too
    tl.store(out, tl.sum(x, axis=1))
    tl.store(out + BLOCK_M, tl.max(lo, axis=1))
    tl.store(out + 2 * BLOCK_M, tl.min(hi, axis=1))
    tl.store(out + 3 * BLOCK_M, tl.reduce(x * x, 1, _add))
    tl.store(out + 4 * BLOCK_M, tl.reduce(lo * 2.0, 1, _max_nan))
    tl.store(out + 5 * BLOCK_M, tl.sum(xt, axis=1))
    tl.store(out + 6 * BLOCK_M, tl.sum(h, axis=1).to(o_ptr.dtype.element_ty))
    tl.store(out + 7 * BLOCK_M, tl.argmax(lo, axis=1).to(o_ptr.dtype.element_ty))


@triton.jit
def int_rows(i_ptr, o_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    inside = (rows[:, None] < M) & (cols[None, :] < N)
    i = tl.load(i_ptr + rows[:, None] * N + cols[None, :], mask=inside, other=0)
    out = o_ptr + tl.arange(0, BLOCK_M)
    tl.store(out, tl.sum(i, axis=1))
    tl.store(out + BLOCK_M, tl.xor_sum(i, axis=1))
    tl.store(out + 2 * BLOCK_M, tl.max(tl.where(inside, i, -1000), axis=1))
    tl.store(out + 3 * BLOCK_M, tl.min(i, axis=1))
    tl.store(out + 4 * BLOCK_M, tl.argmax(i, axis=1))


def _both(kernel, lvl, out, *args):
    want = np.zeros_like(out)
    kernel.interpret = True
    try:
        kernel[(1, )](*[want if a is None else a for a in args])
    finally:
        kernel.interpret = False
    with isa.compiling_for(lvl):
        kernel[(1, )](*[out if a is None else a for a in args])
    return out, want


def _floats(rng, m, n, dtype):
    x = rng.standard_normal((m, n)).astype(dtype)
    special = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0], dtype)
    x.flat[rng.integers(0, x.size, max(1, x.size // 16))] = rng.choice(special, max(1, x.size // 16))
    if m > 1:
        x[1] = np.nan                                # a row of NaN only
    return x


@pytest.mark.parametrize("lvl", LEVELS)
@pytest.mark.parametrize("dtype,n", [(np.float32, 101), (np.float32, 1), (np.float64, 37)])
def test_masked_float_reductions(lvl, dtype, n):
    m = 5                                            # rows 5..7 are masked off entirely
    rng = np.random.default_rng(n)
    x = _floats(rng, m, n, dtype)
    x[2] = np.where(np.isnan(x[2]), 1.0, x[2])       # argmax over NaN is undefined (Triton leaves it open)
    x[2, n // 2] = np.inf
    h = rng.standard_normal((m, n)).astype(np.float16)
    out = np.zeros(8 * BLOCK_M, dtype)
    got, want = _both(float_rows, lvl, out, x, h, None, m, n, BLOCK_M, BLOCK_N)
    rows, wrows = got.reshape(8, BLOCK_M), want.reshape(8, BLOCK_M)
    for k in (1, 2, 4):                              # max, min (NaN ignored), max propagating NaN: exact
        np.testing.assert_array_equal(rows[k], wrows[k], err_msg=f"row reduction {k}")
        np.testing.assert_array_equal(np.signbit(rows[k]), np.signbit(wrows[k]), err_msg=f"row reduction {k}")
    for k in (0, 3, 5, 6):                           # sums: the order of additions is the backend's
        np.testing.assert_allclose(rows[k], wrows[k], rtol=1e-5, atol=1e-5, err_msg=f"row reduction {k}")
    np.testing.assert_array_equal(rows[7][[2, 5, 6, 7]], wrows[7][[2, 5, 6, 7]])   # argmax: rows without NaN
    # the oracle itself: masked-off rows reduce their `other`, NaN rows follow tl.max's rules
    assert (wrows[0, m:] == 0).all() and (wrows[1, m:] == -np.inf).all() and (wrows[2, m:] == np.inf).all()
    # the NaN row: tl.max ignores NaN (the masked-off lanes' -inf remains), maximum(ALL) and sums propagate it
    assert wrows[1, 1] == -np.inf and np.isnan(wrows[4, 1]) and np.isnan(wrows[0, 1])
    assert wrows[7, 2] == np.argmax(x[2]) and wrows[7, m] == 0


@pytest.mark.parametrize("lvl", LEVELS)
@pytest.mark.parametrize("dtype,n", [(np.int32, 101), (np.int64, 3)])
def test_masked_integer_reductions(lvl, dtype, n):
    m = 6
    rng = np.random.default_rng(n)
    i = rng.integers(-50, 50, (m, n)).astype(dtype)
    out = np.zeros(5 * BLOCK_M, dtype)
    got, want = _both(int_rows, lvl, out, i, None, m, n, BLOCK_M, BLOCK_N)
    np.testing.assert_array_equal(got, want)
    ref = np.zeros((BLOCK_M, BLOCK_N), dtype)
    ref[:m, :n] = i
    np.testing.assert_array_equal(want[:BLOCK_M], ref.sum(1))
    np.testing.assert_array_equal(want[BLOCK_M:2 * BLOCK_M], np.bitwise_xor.reduce(ref, 1))


@triton.jit
def _row_sums(x_ptr, o_ptr, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    inside = (rows[:, None] < M) & (cols[None, :] < N)
    x = tl.load(x_ptr + rows[:, None] * N + cols[None, :], mask=inside, other=0.0)
    tl.store(o_ptr + rows, tl.sum(x * x, axis=1) + tl.max(x, axis=1))


@pytest.mark.parametrize("lvl", LEVELS)
def test_masked_rows_load_vectors(lvl):
    """The masked copy of a vector reduction loads whole vectors (llvm.masked.load) instead of branching around
    a scalar load per lane: before, this kernel's optimized IR had 113 (SSE2) to 398 (AVX-512) conditional
    branches; now 13 to 20 (the fast/masked split, loop latches, the max's exact re-check, the stores)."""
    x = np.random.default_rng(0).standard_normal((4, 100)).astype(np.float32)
    out = np.zeros(4, np.float32)
    with isa.compiling_for(lvl):
        k = _row_sums[(1, )](x, out, 4, 100, 4, BLOCK_N)
    np.testing.assert_allclose(out, (x * x).sum(1) + x.max(1), rtol=1e-5)
    llir = k.asm["llir"]
    assert re.search(r"@llvm\.masked\.load\.v\d+f32", llir), "no masked vector load"
    branches = llir.count("br i1")
    assert branches < 50, f"{branches} conditional branches: lanes loaded one by one again?"
