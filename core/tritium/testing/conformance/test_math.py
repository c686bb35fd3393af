"""Elementwise math: transcendental functions, precise division and square root, fma, abs, floor/ceil, clamp,
maximum/minimum with ``propagate_nan``, umulhi, cdiv, sigmoid, softmax, where."""
from __future__ import annotations

import math

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl

from .reference import ALL, DTYPES, arg, assert_ulp, decode, random

N = 64
_UNARY = ("exp", "exp2", "log", "log2", "sin", "cos", "sqrt", "rsqrt", "erf", "floor", "ceil", "abs", "sigmoid")


@triton.jit
def _unary(x_ptr, o_ptr, N: tl.constexpr, OPS: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    for k in tl.static_range(len(OPS)):
        op: tl.constexpr = OPS[k]
        if op == "exp":
            y = tl.exp(x)
        elif op == "exp2":
            y = tl.exp2(x)
        elif op == "log":
            y = tl.log(tl.abs(x))
        elif op == "log2":
            y = tl.log2(tl.abs(x))
        elif op == "sin":
            y = tl.sin(x)
        elif op == "cos":
            y = x.cos()
        elif op == "sqrt":
            y = tl.sqrt(tl.abs(x))
        elif op == "rsqrt":
            y = tl.rsqrt(tl.abs(x))
        elif op == "erf":
            y = tl.erf(x)
        elif op == "floor":
            y = tl.floor(x)
        elif op == "ceil":
            y = tl.math.ceil(x)
        elif op == "abs":
            y = tl.abs(x)
        else:
            y = tl.sigmoid(x)
        tl.store(o_ptr + k * N + offs, y)


_REF = {"exp": np.exp, "exp2": np.exp2, "log": lambda x: np.log(np.abs(x)), "log2": lambda x: np.log2(np.abs(x)),
        "sin": np.sin, "cos": np.cos, "sqrt": lambda x: np.sqrt(np.abs(x)),
        "rsqrt": lambda x: 1 / np.sqrt(np.abs(x)), "erf": np.vectorize(math.erf), "floor": np.floor,
        "ceil": np.ceil, "abs": np.abs, "sigmoid": lambda x: 1 / (1 + np.exp(-x))}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_unary_math(backend, rng, dtype):
    backend.require_dtype(dtype)
    x = rng.uniform(-10, 10, N).astype(dtype)
    x[:4] = [0.5, -0.5, 1.0, 7.25]
    out = np.zeros((len(_UNARY), N), dtype)
    _unary[(1, )](x, out, N, _UNARY)
    tol = 2e-6 if dtype == "float32" else 1e-13
    for k, op in enumerate(_UNARY):
        want = _REF[op](x.astype(np.float64))
        np.testing.assert_allclose(out[k], want, rtol=tol, atol=tol, err_msg=op)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "int32"])
def test_transcendental_needs_fp32_or_fp64(backend, dtype):
    x = np.zeros(N, DTYPES[dtype].storage)
    out = np.zeros((1, N), x.dtype)
    with pytest.raises(triton.CompilationError, match="fp32"):
        _unary[(1, )](arg(x, dtype), arg(out, dtype), N, ("exp", ))


@triton.jit
def _abs_kernel(x_ptr, o_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.store(o_ptr + offs, tl.abs(tl.load(x_ptr + offs)))


@pytest.mark.parametrize("dtype", [d for d in ALL if d != "int1"])
def test_abs_every_dtype(backend, rng, dtype):
    backend.require_dtype(dtype)
    x = random(dtype, N, rng, -30, 30)
    out = np.zeros_like(x)
    _abs_kernel[(1, )](arg(x, dtype), arg(out, dtype), N)
    v = decode(x, dtype)
    want = np.abs(v.astype(np.float64)) if DTYPES[dtype].is_float else np.abs(v)
    np.testing.assert_array_equal(decode(out, dtype).astype(want.dtype), want)


@triton.jit
def _precise(x_ptr, y_ptr, o_ptr, s, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(o_ptr + offs, tl.math.div_rn(x, y))
    tl.store(o_ptr + N + offs, tl.sqrt_rn(tl.abs(x)))
    tl.store(o_ptr + 2 * N + offs, tl.fdiv(x, y, ieee_rounding=True))
    tl.store(o_ptr + 3 * N + offs, tl.fdiv(x, y))
    tl.store(o_ptr + 4 * N + offs, tl.fma(x, y, x))
    tl.store(o_ptr + 5 * N + offs, x / y)
    # a divisor uniform over the tile (a backend may multiply by its reciprocal for `/`, never for these)
    tl.store(o_ptr + 6 * N + offs, tl.math.div_rn(x, s))
    tl.store(o_ptr + 7 * N + offs, tl.fdiv(x, s, ieee_rounding=True))
    tl.store(o_ptr + 8 * N + offs, x / s)


def test_precise_division_sqrt_fma(backend, rng):
    x = rng.uniform(-100, 100, N).astype(np.float32)
    y = rng.uniform(0.5, 50, N).astype(np.float32)
    a = np.float32(1 + 2**-12)
    x[0], y[0] = a, a       # fma(a, a, a) keeps the low bits a*a + a loses
    s = np.float32(3.7)
    out = np.zeros((9, N), np.float32)
    _precise[(1, )](x, y, out, 3.7, N)
    np.testing.assert_array_equal(out[0], x / y)
    np.testing.assert_array_equal(out[1], np.sqrt(np.abs(x)))
    np.testing.assert_array_equal(out[2], x / y)
    assert_ulp(out[3], x / y, 2, "fdiv")
    fused = (x.astype(np.float64) * y + x).astype(np.float32)
    np.testing.assert_array_equal(out[4], fused)
    # Triton's float32 `/` is div.full.f32 on GPUs (2 ulp); div_rn and fdiv(ieee_rounding=True) are exact
    assert_ulp(out[5], x / y, 2, "/")
    np.testing.assert_array_equal(out[6], x / s)
    np.testing.assert_array_equal(out[7], x / s)
    assert_ulp(out[8], x / s, 2, "/ by a uniform divisor")


@triton.jit
def _nan_ops(x_ptr, y_ptr, o_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(o_ptr + offs, tl.maximum(x, y))
    tl.store(o_ptr + N + offs, tl.maximum(x, y, propagate_nan=tl.PropagateNan.ALL))
    tl.store(o_ptr + 2 * N + offs, tl.minimum(x, y))
    tl.store(o_ptr + 3 * N + offs, tl.minimum(x, y, tl.PropagateNan.ALL))
    tl.store(o_ptr + 4 * N + offs, tl.clamp(x, -1.0, 2.0))
    tl.store(o_ptr + 5 * N + offs, tl.clamp(x, -1.0, 2.0, propagate_nan=tl.PropagateNan.ALL))
    tl.store(o_ptr + 6 * N + offs, tl.where(x > y, x, y))
    tl.store(o_ptr + 7 * N + offs, tl.where(x != x, 5.0, x))


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64"])
def test_nan_propagation(backend, rng, dtype):
    backend.require_dtype(dtype)
    x = rng.uniform(-3, 3, N).astype(dtype)
    y = rng.uniform(-3, 3, N).astype(dtype)
    x[::5] = np.nan
    y[::7] = np.nan
    out = np.zeros((8, N), dtype)
    _nan_ops[(1, )](x, y, out, N)
    np.testing.assert_array_equal(out[0], np.fmax(x, y))
    np.testing.assert_array_equal(out[1], np.maximum(x, y))
    np.testing.assert_array_equal(out[2], np.fmin(x, y))
    np.testing.assert_array_equal(out[3], np.minimum(x, y))
    np.testing.assert_array_equal(out[4], np.where(np.isnan(x), -1.0, np.clip(x, -1, 2)).astype(dtype))
    np.testing.assert_array_equal(out[5], np.clip(x, -1, 2))
    np.testing.assert_array_equal(out[6], np.where(x > y, x, y))
    np.testing.assert_array_equal(out[7], np.where(np.isnan(x), 5.0, x).astype(dtype))


@triton.jit
def _int_ops(x_ptr, y_ptr, o_ptr, N: tl.constexpr, C: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(o_ptr + offs, tl.umulhi(x, y))
    tl.store(o_ptr + N + offs, tl.cdiv(x, C))
    tl.store(o_ptr + 2 * N + offs, tl.cdiv(x, y))
    tl.static_assert(tl.cdiv(10, 4) == 3)
    tl.store(o_ptr + 3 * N + offs, tl.maximum(x, y) - tl.minimum(x, y))
    tl.store(o_ptr + 4 * N + offs, tl.where(x > 0, x, 0) + tl.where(y < 3, 1, 2))


@pytest.mark.parametrize("dtype", ["int32", "uint32", "int64", "uint64"])
def test_integer_math(backend, rng, dtype):
    info = np.iinfo(dtype)
    lo = 0 if info.min == 0 else -(2**20)
    x = rng.integers(lo, 2**20, N).astype(dtype)
    y = rng.integers(1, 2**20, N).astype(dtype)
    x[:2] = [info.max, info.max // 3]
    y[:2] = [info.max, 12345]
    out = np.zeros((5, N), dtype)
    _int_ops[(1, )](x, y, out, N, 7)
    bits = info.bits
    mask = (1 << bits) - 1
    hi = [((int(a) & mask) * (int(b) & mask)) >> bits for a, b in zip(x, y)]
    np.testing.assert_array_equal(out[0].astype(object) & mask, np.array(hi, dtype=object))

    def cdiv(a, b):
        a, b = a.astype(object), b.astype(object)
        # (a + b - 1) // b with C division: truncation toward zero
        num = a + b - 1
        q = [int(n / d) if (n < 0) != (d < 0) else n // d for n, d in zip(num, b)]
        return np.array(q, dtype=object)

    ok = slice(2, None)   # the first two lanes overflow a + b - 1
    np.testing.assert_array_equal(out[1][ok].astype(object), cdiv(x[ok], np.full(N - 2, 7, dtype)))
    np.testing.assert_array_equal(out[2][ok].astype(object), cdiv(x[ok], y[ok]))
    np.testing.assert_array_equal(out[3], np.maximum(x, y) - np.minimum(x, y))
    with np.errstate(over="ignore"):
        want = np.where(x > 0, x, 0).astype(dtype) + np.where(y < 3, 1, 2).astype(dtype)
    np.testing.assert_array_equal(out[4], want)


@triton.jit
def _softmax_kernel(x_ptr, o_ptr, M: tl.constexpr, N: tl.constexpr, DIM: tl.constexpr):
    rm, rn = tl.arange(0, M), tl.arange(0, N)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :])
    y = tl.softmax(x, dim=DIM)
    tl.store(o_ptr + rm[:, None] * N + rn[None, :], y)
    z = tl.softmax(x, dim=DIM, ieee_rounding=True)
    tl.store(o_ptr + M * N + rm[:, None] * N + rn[None, :], z)


@pytest.mark.parametrize("dim", [0, 1])
def test_softmax(backend, rng, dim):
    M, N_ = 8, 32
    x = rng.standard_normal((M, N_)).astype(np.float32) * 4
    out = np.zeros((2, M, N_), np.float32)
    _softmax_kernel[(1, )](x, out, M, N_, dim)
    e = np.exp(x - x.max(dim, keepdims=True))
    want = e / e.sum(dim, keepdims=True)
    np.testing.assert_allclose(out[0], want, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(out[1], want, rtol=1e-5, atol=1e-7)
