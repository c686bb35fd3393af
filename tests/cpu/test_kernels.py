"""End-to-end kernels on the CPU backend: each result checked against numpy."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@pytest.mark.parametrize("n", [1, 17, 1024, 98432])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int8, np.float16])
def test_vector_add(n, dtype):
    rng = np.random.default_rng(0)
    x = (rng.random(n) * 100).astype(dtype)
    y = (rng.random(n) * 100).astype(dtype)
    out = np.zeros_like(x)
    add_kernel[(triton.cdiv(n, 256), )](x, y, out, n, BLOCK=256)
    np.testing.assert_array_equal(out, x + y)


@triton.jit
def reduce_kernel(x_ptr, out_ptr, M: tl.constexpr, N: tl.constexpr, AXIS: tl.constexpr, OP: tl.constexpr):
    rows = tl.arange(0, M)[:, None]
    cols = tl.arange(0, N)[None, :]
    x = tl.load(x_ptr + rows * N + cols)
    if OP == "sum":
        r = tl.sum(x, axis=AXIS)
    elif OP == "max":
        r = tl.max(x, axis=AXIS)
    elif OP == "min":
        r = tl.min(x, axis=AXIS)
    elif OP == "argmax":
        r = tl.argmax(x, axis=AXIS)
    else:
        r = tl.argmin(x, axis=AXIS)
    if AXIS == 0:
        tl.store(out_ptr + tl.arange(0, N), r)
    else:
        tl.store(out_ptr + tl.arange(0, M), r)


@pytest.mark.parametrize("op", ["sum", "max", "min", "argmax", "argmin"])
@pytest.mark.parametrize("axis", [0, 1])
def test_reductions(op, axis):
    M, N = 16, 32
    x = np.random.default_rng(1).standard_normal((M, N)).astype(np.float32)
    ref = {"sum": np.sum, "max": np.max, "min": np.min, "argmax": np.argmax, "argmin": np.argmin}[op](x, axis=axis)
    out = np.zeros(ref.shape, dtype=np.int32 if op.startswith("arg") else np.float32)
    reduce_kernel[(1, )](x, out, M, N, axis, op)
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)


@triton.jit
def loop_kernel(x_ptr, out_ptr, n_iter, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK, ), dtype=tl.float32)
    total = 0.0
    i = 0
    for k in range(n_iter):
        v = tl.load(x_ptr + k * BLOCK + offs)
        acc += v
        if k % 2 == 0:
            total += tl.sum(v, axis=0)
    while i < 3:
        acc = acc * 2.0
        i += 1
    tl.store(out_ptr + offs, acc)
    tl.store(out_ptr + BLOCK, total)


def test_control_flow():
    n_iter, B = 5, 64
    x = np.random.default_rng(2).standard_normal((n_iter, B)).astype(np.float32)
    out = np.zeros(B + 1, np.float32)
    loop_kernel[(1, )](x, out, n_iter, BLOCK=B)
    np.testing.assert_allclose(out[:B], x.sum(0) * 8, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out[B], x[::2].sum(), rtol=1e-4, atol=1e-4)


@triton.jit
def dot_kernel(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    c = tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], c)


@pytest.mark.parametrize("shape", [(16, 16, 16), (32, 64, 16), (64, 32, 128)])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64])
def test_dot(shape, dtype):
    M, N, K = shape
    rng = np.random.default_rng(3)
    a = rng.standard_normal((M, K)).astype(dtype)
    b = rng.standard_normal((K, N)).astype(dtype)
    c = np.zeros((M, N), np.float64 if dtype == np.float64 else np.float32)
    dot_kernel[(1, )](a, b, c, M, N, K)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-2, atol=1e-2)


@triton.jit
def _square(x):
    return x * x


@triton.jit
def _both(x, y):
    return x + y, x - y


@triton.jit
def call_kernel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    s, d = _both(_square(x), x)
    tl.store(out_ptr + offs, s * d)


def test_device_functions():
    x = np.arange(16, dtype=np.float32)
    out = np.zeros_like(x)
    call_kernel[(1, )](x, out, BLOCK=16)
    np.testing.assert_allclose(out, (x * x + x) * (x * x - x))
