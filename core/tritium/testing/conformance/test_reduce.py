"""Reductions (sum, max, min, argmax, argmin, xor_sum, reduce_or, reduce with a @jit combine function,
keep_dims, axis=None) and scans (cumsum, cumprod, associative_scan, reverse)."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl

from .reference import DTYPES, arg, decode, encode, random


@triton.jit
def _reductions(x_ptr, o_ptr, M: tl.constexpr, N: tl.constexpr, AXIS: tl.constexpr, KEEP: tl.constexpr):
    rm, rn = tl.arange(0, M), tl.arange(0, N)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :])
    OUT: tl.constexpr = N if AXIS == 0 else M
    ro = tl.arange(0, OUT)
    results = (tl.sum(x, axis=AXIS, keep_dims=KEEP), tl.max(x, axis=AXIS, keep_dims=KEEP),
               tl.min(x, AXIS, keep_dims=KEEP), x.argmax(AXIS, keep_dims=KEEP), tl.argmin(x, axis=AXIS, keep_dims=KEEP))
    for k in tl.static_range(5):
        r = results[k]
        if KEEP:
            tl.static_assert(len(r.shape) == 2)
            r = tl.reshape(r, (OUT, ))
        tl.store(o_ptr + k * OUT + ro, r.to(tl.float64))


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8", "uint32", "float16", "bfloat16",
                                   "float32", "float64"])
@pytest.mark.parametrize("axis,keep", [(0, False), (1, True)])
def test_reductions(backend, rng, dtype, axis, keep):
    backend.require_dtype(dtype)
    M, N = 8, 16
    x = random(dtype, (M, N), rng, -20, 20)
    v = decode(x, dtype).astype(np.float64)
    v[2, 3] = v[5, 3] = v.max() + 1       # ties: the first index wins
    x = encode(v, dtype)
    v = decode(x, dtype).astype(np.float64)
    out = np.zeros((5, N if axis == 0 else M))
    _reductions[(1, )](arg(x, dtype), out, M, N, axis, keep)
    tol = 0 if DTYPES[dtype].is_int else (5e-2 if dtype in ("float16", "bfloat16") else 1e-5)
    ssum = v.sum(axis)
    if DTYPES[dtype].is_int:
        ssum = ssum.astype(np.int64)
    np.testing.assert_allclose(out[0], ssum, rtol=tol, atol=tol, err_msg="sum")
    np.testing.assert_array_equal(out[1], v.max(axis), err_msg="max")
    np.testing.assert_array_equal(out[2], v.min(axis), err_msg="min")
    np.testing.assert_array_equal(out[3], v.argmax(axis), err_msg="argmax")
    np.testing.assert_array_equal(out[4], v.argmin(axis), err_msg="argmin")


@triton.jit
def _max_min_rows(x_ptr, o_ptr, M: tl.constexpr, N: tl.constexpr):
    rm, rn = tl.arange(0, M), tl.arange(0, N)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :])
    tl.store(o_ptr + rm, tl.max(x, axis=1))
    tl.store(o_ptr + M + rm, tl.min(x, axis=1))


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_max_min_ignore_nan_unless_all_nan(backend, rng, dtype):
    """tl.max/tl.min combine with maximum/minimum without NaN propagation (maxnum/minnum): a NaN lane is
    skipped, a row of NaNs gives NaN, and rows of infinities keep their sign."""
    backend.require_dtype(dtype)
    M, N = 8, 256
    v = rng.uniform(-50, 50, (M, N))
    v[1, 7] = np.nan                                    # one NaN
    v[2, :] = np.nan                                    # all NaN
    v[3, :] = -np.inf
    v[3, 5] = np.nan                                    # NaN among -inf
    v[4, :] = np.inf                                    # all +inf
    v[5, 0] = np.nan                                    # NaN in the first lane
    v[6, :] = -np.inf                                   # all -inf
    v[7, ::3] = np.nan                                  # every third lane NaN
    x = encode(v, dtype)
    v = decode(x, dtype).astype(np.float64)
    out = np.zeros(2 * M, DTYPES[dtype].storage)
    _max_min_rows[(1, )](arg(x, dtype), arg(out, dtype), M, N)
    got = decode(out, dtype).astype(np.float64)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(got[:M], np.fmax.reduce(v, axis=1), err_msg="max")
        np.testing.assert_array_equal(got[M:], np.fmin.reduce(v, axis=1), err_msg="min")


@triton.jit
def _reduction_types(x_ptr, o_ptr, N: tl.constexpr, SUM_T: tl.constexpr, MAX_T: tl.constexpr,
                     ARG_T: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    s = tl.sum(x)
    m = tl.max(x, axis=0)
    v, i = tl.max(x, 0, return_indices=True)
    tl.static_assert(str(s.dtype) == SUM_T, "sum")
    tl.static_assert(str(m.dtype) == MAX_T, "max")
    tl.static_assert(str(v.dtype) == ARG_T, "max with indices")
    tl.static_assert(i.dtype == tl.int32)
    d = tl.sum(x, dtype=tl.float64)
    tl.static_assert(d.dtype == tl.float64)
    tl.store(o_ptr, d)


@pytest.mark.parametrize("dtype,sum_t,max_t,arg_t", [
    ("int8", "int32", "int32", "int8"), ("uint16", "uint32", "int32", "uint16"), ("int64", "int64", "int64", "int64"),
    ("float16", "fp16", "fp32", "fp16"), ("bfloat16", "bf16", "fp32", "fp32"), ("float32", "fp32", "fp32", "fp32"),
    ("int1", "uint32", "int32", "int1")])
def test_reduction_result_types(backend, rng, dtype, sum_t, max_t, arg_t):
    backend.require("fp64")
    x = random(dtype, 16, rng, -5, 5)
    out = np.zeros(1, np.float64)
    _reduction_types[(1, )](arg(x, dtype), out, 16, sum_t, max_t, arg_t)
    np.testing.assert_allclose(out[0], decode(x, dtype).astype(np.float64).sum())


@triton.jit
def _bitwise_reductions(x_ptr, o_ptr, M: tl.constexpr, N: tl.constexpr):
    rm, rn = tl.arange(0, M), tl.arange(0, N)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :])
    tl.store(o_ptr + rm, tl.xor_sum(x, axis=1))
    tl.store(o_ptr + M + rn, tl.reduce_or(x, axis=0))
    tl.store(o_ptr + M + N, x.xor_sum())


def test_xor_sum_and_reduce_or(backend, rng):
    M, N = 8, 16
    x = rng.integers(0, 2**31, (M, N)).astype(np.int32)
    out = np.zeros(M + N + 1, np.int32)
    _bitwise_reductions[(1, )](x, out, M, N)
    np.testing.assert_array_equal(out[:M], np.bitwise_xor.reduce(x, 1))
    np.testing.assert_array_equal(out[M:M + N], np.bitwise_or.reduce(x, 0))
    assert out[-1] == np.bitwise_xor.reduce(x.ravel())


@triton.jit
def _pair_max(a, ia, b, ib):
    take_a = (a > b) | ((a == b) & (ia < ib))
    return tl.where(take_a, a, b), tl.where(take_a, ia, ib)


@triton.jit
def _product(a, b):
    return a * b


@triton.jit
def _custom_reduce(x_ptr, o_ptr, M: tl.constexpr, N: tl.constexpr):
    rm, rn = tl.arange(0, M), tl.arange(0, N)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :])
    idx = tl.broadcast_to(rn[None, :], (M, N))
    v, i = tl.reduce((x, idx), 1, _pair_max)
    tl.store(o_ptr + rm, v)
    tl.store(o_ptr + M + rm, i.to(tl.float32))
    p = tl.reduce(x, axis=0, combine_fn=_product, keep_dims=True)
    tl.store(o_ptr + 2 * M + rn[None, :], p)
    total = x.reduce(None, _product)
    tl.store(o_ptr + 2 * M + N, total)


def test_reduce_with_jit_combine(backend, rng):
    M, N = 4, 8
    x = rng.uniform(0.5, 1.5, (M, N)).astype(np.float32)
    out = np.zeros(2 * M + N + 1, np.float32)
    _custom_reduce[(1, )](x, out, M, N)
    np.testing.assert_array_equal(out[:M], x.max(1))
    np.testing.assert_array_equal(out[M:2 * M], x.argmax(1))
    np.testing.assert_allclose(out[2 * M:2 * M + N], x.prod(0), rtol=1e-6)
    np.testing.assert_allclose(out[-1], x.prod(), rtol=1e-5)


@triton.jit
def _scans(x_ptr, o_ptr, M: tl.constexpr, N: tl.constexpr, AXIS: tl.constexpr, REV: tl.constexpr):
    rm, rn = tl.arange(0, M), tl.arange(0, N)
    off = rm[:, None] * N + rn[None, :]
    x = tl.load(x_ptr + off)
    tl.store(o_ptr + off, tl.cumsum(x, axis=AXIS, reverse=REV).to(tl.float64))
    tl.store(o_ptr + M * N + off, x.cumprod(AXIS, reverse=REV).to(tl.float64))
    tl.store(o_ptr + 2 * M * N + off, tl.associative_scan(x, AXIS, _product, reverse=REV).to(tl.float64))


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("axis,rev", [(0, False), (1, True), (1, False)])
def test_scans(backend, rng, dtype, axis, rev):
    backend.require_dtype(dtype)
    M, N = 4, 8
    lo, hi = (1, 2) if DTYPES[dtype].is_int else (0.5, 1.5)
    x = random(dtype, (M, N), rng, lo, hi)
    v = decode(x, dtype).astype(np.float64)
    out = np.zeros((3, M, N))
    _scans[(1, )](arg(x, dtype), out, M, N, axis, rev)

    def scan(fn, a):
        a = np.flip(a, axis) if rev else a
        r = fn(a, axis=axis)
        return np.flip(r, axis) if rev else r

    tol = 2e-2 if dtype in ("float16", "bfloat16") else 1e-6
    np.testing.assert_allclose(out[0], scan(np.cumsum, v), rtol=tol)
    if DTYPES[dtype].is_int:
        # an integer product keeps its type (only sums widen small integers) and wraps: eight 2s overflow int8
        stored = decode(x, dtype).astype(DTYPES[dtype].storage)
        prod = scan(lambda a, axis: np.cumprod(a, axis=axis, dtype=a.dtype), stored).astype(np.float64)
    else:
        prod = scan(np.cumprod, v)
    np.testing.assert_allclose(out[1], prod, rtol=tol)
    np.testing.assert_allclose(out[2], prod, rtol=tol)


@triton.jit
def _scan_types(x_ptr, N: tl.constexpr, T: tl.constexpr):
    x = tl.load(x_ptr + tl.arange(0, N))
    tl.static_assert(str(tl.cumsum(x, 0).dtype) == T)


@pytest.mark.parametrize("dtype,t", [("int8", "int32"), ("uint8", "uint32"), ("bfloat16", "fp32"), ("float16", "fp16"),
                                     ("int64", "int64")])
def test_scan_result_types(backend, dtype, t):
    x = np.zeros(8, DTYPES[dtype].storage)
    _scan_types[(1, )](arg(x, dtype), 8, t)
