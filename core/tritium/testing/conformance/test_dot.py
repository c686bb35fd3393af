"""``tl.dot`` for every input type and accumulator Triton allows, input precisions, batched dots,
``TRITON_F32_DEFAULT``, and ``tl.dot_scaled``."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium import knobs

from .reference import DTYPES, arg, decode, random

_CAPS = {"float32": "dot-fp32", "float16": "dot-fp16", "bfloat16": "dot-bf16", "int8": "dot-int8",
         "float64": "dot-fp64", "float8e4nv": "fp8", "float8e5": "fp8", "float8e4b15": "fp8", "float8e4b8": "fp8",
         "float8e5b16": "fp8"}


@triton.jit
def _dot(a_ptr, b_ptr, c_ptr, o_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, PREC: tl.constexpr,
         OUT: tl.constexpr, USE_ACC: tl.constexpr):
    rm, rn, rk = tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    if USE_ACC:
        c = tl.load(c_ptr + rm[:, None] * N + rn[None, :])
        d = tl.dot(a, b, c, input_precision=PREC, out_dtype=OUT)
    else:
        d = tl.dot(a, b, input_precision=PREC, out_dtype=OUT)
    tl.store(o_ptr + rm[:, None] * N + rn[None, :], d)


def _fp32_tol(prec) -> float:
    """tf32 keeps 10 mantissa bits of each input: products carry ~1e-3 relative error. A backend may
    compute more precisely than asked (the CPU does), so this is only an upper bound."""
    if prec is None:
        prec = knobs.language.fp32_default or "tf32"
    return 1e-2 if prec == "tf32" else 1e-4


_OUT = {"int8": "int32", "float16": "float32", "bfloat16": "float32", "float32": "float32", "float64": "float64"}


@pytest.mark.parametrize("dtype,prec,out", [("float32", "ieee", None), ("float32", "tf32", None),
                                            ("float32", "tf32x3", None), ("float16", None, None),
                                            ("float16", None, "float16"), ("bfloat16", None, None),
                                            ("int8", None, None), ("float64", None, None),
                                            ("float8e4nv", None, None), ("float8e5", None, "float16"),
                                            ("float8e4b15", None, None)])
@pytest.mark.parametrize("shape,use_acc", [((16, 16, 16), False), ((32, 64, 32), True)])
def test_dot_types(backend, rng, dtype, prec, out, shape, use_acc):
    backend.require(_CAPS[dtype])
    backend.require_dtype(dtype)
    M, N, K = shape
    lo = 1 if dtype.startswith("float8") else 3
    if dtype == "float8e4b15":
        lo = 0.5
    a = random(dtype, (M, K), rng, -lo, lo)
    b = random(dtype, (K, N), rng, -lo, lo)
    out_name = out or _OUT.get(dtype, "float32")
    c = random(out_name, (M, N), rng, -2, 2)
    o = np.zeros((M, N), DTYPES[out_name].storage)
    out_dt = getattr(tl, out) if out else tl.float32
    _dot[(1, )](arg(a, dtype), arg(b, dtype), arg(c, out_name), arg(o, out_name), M, N, K, prec, out_dt, use_acc)
    want = decode(a, dtype).astype(np.float64) @ decode(b, dtype).astype(np.float64)
    if use_acc:
        want = want + decode(c, out_name)
    got = decode(o, out_name).astype(np.float64)
    if dtype == "int8":
        np.testing.assert_array_equal(got, want)
    else:
        tol = {"float16": 2e-2, "float64": 1e-12}.get(out_name, _fp32_tol(prec) if dtype == "float32" else 1e-4)
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * max(1, K / 16))


@triton.jit
def _batched(a_ptr, b_ptr, o_ptr, B: tl.constexpr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr):
    rb, rm, rn, rk = tl.arange(0, B), tl.arange(0, M), tl.arange(0, N), tl.arange(0, K)
    a = tl.load(a_ptr + rb[:, None, None] * M * K + rm[None, :, None] * K + rk[None, None, :])
    b = tl.load(b_ptr + rb[:, None, None] * K * N + rk[None, :, None] * N + rn[None, None, :])
    d = tl.dot(a, b)
    tl.store(o_ptr + rb[:, None, None] * M * N + rm[None, :, None] * N + rn[None, None, :], d)


def test_dot_batched(backend, rng):
    backend.require("dot-fp32")
    B, M, N, K = 2, 16, 32, 16
    a = rng.standard_normal((B, M, K)).astype(np.float32)
    b = rng.standard_normal((B, K, N)).astype(np.float32)
    o = np.zeros((B, M, N), np.float32)
    _batched[(1, )](a, b, o, B, M, N, K)
    np.testing.assert_allclose(o, a @ b, rtol=_fp32_tol(None), atol=_fp32_tol(None))


@triton.jit
def _matmul_loop(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), tl.float32)
    for k in tl.range(0, K, BK, num_stages=3):
        rk = k + tl.arange(0, BK)
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def test_matmul_with_edges(backend, rng):
    backend.require("dot-fp32")
    M, N, K = 45, 70, 33
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    c = np.zeros((M, N), np.float32)
    _matmul_loop[(triton.cdiv(M, 32), triton.cdiv(N, 32))](a, b, c, M, N, K, 32, 32, 16)
    np.testing.assert_allclose(c, a @ b, rtol=_fp32_tol(None), atol=_fp32_tol(None) * 3)


def test_f32_default_knob(backend, rng):
    """TRITON_F32_DEFAULT chooses the input precision of fp32 dots that do not name one."""
    backend.require("dot-fp32")
    M = N = K = 16
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    with knobs.language.scope():
        knobs.language.fp32_default = "ieee"
        o = np.zeros((M, N), np.float32)
        _dot[(1, )](a, b, o, o, M, N, K, None, tl.float32, False)
    np.testing.assert_allclose(o, a @ b, rtol=1e-5, atol=1e-5)


@triton.jit
def _dot_scaled_kernel(a_ptr, sa_ptr, b_ptr, sb_ptr, o_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr,
                       KA: tl.constexpr, KB: tl.constexpr, FA: tl.constexpr, FB: tl.constexpr):
    rm, rn = tl.arange(0, M), tl.arange(0, N)
    a = tl.load(a_ptr + rm[:, None] * KA + tl.arange(0, KA)[None, :])
    b = tl.load(b_ptr + tl.arange(0, KB)[:, None] * N + rn[None, :])
    sa = tl.load(sa_ptr + rm[:, None] * (K // 32) + tl.arange(0, K // 32)[None, :])
    sb = tl.load(sb_ptr + rn[:, None] * (K // 32) + tl.arange(0, K // 32)[None, :])
    d = tl.dot_scaled(a, sa, FA, b, sb, FB)
    tl.store(o_ptr + rm[:, None] * N + rn[None, :], d)


_E2M1 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6])


@pytest.mark.parametrize("fa,fb", [("e2m1", "e4m3"), ("e5m2", "bf16"), ("e4m3", "e2m1")])
def test_dot_scaled(backend, rng, fa, fb):
    backend.require("fp8")
    M, N, K = 16, 16, 64

    def operand(fmt, rows, cols, k_dim):
        if fmt == "e2m1":
            codes = rng.integers(0, 16, (rows, cols))
            vals = _E2M1[codes]
            if k_dim == 1:   # packed along K (columns of lhs)
                packed = (codes[:, 0::2] | (codes[:, 1::2] << 4)).astype(np.uint8)
            else:            # rhs: packed along K (rows)
                packed = (codes[0::2, :] | (codes[1::2, :] << 4)).astype(np.uint8)
            return packed, vals
        name = {"e4m3": "float8e4nv", "e5m2": "float8e5", "bf16": "bfloat16"}[fmt]
        bits = random(name, (rows, cols), rng, -4, 4)
        return bits, decode(bits, name).astype(np.float64)

    a, av = operand(fa, M, K, 1)
    b, bv = operand(fb, K, N, 0)
    sa = rng.integers(120, 134, (M, K // 32)).astype(np.uint8)
    sb = rng.integers(120, 134, (N, K // 32)).astype(np.uint8)
    o = np.zeros((M, N), np.float32)
    _dot_scaled_kernel[(1, )](a, sa, b, sb, o, M, N, K, a.shape[1], b.shape[0], fa, fb)
    scale_a = np.repeat(2.0 ** (sa.astype(np.float64) - 127), 32, axis=1)
    scale_b = np.repeat(2.0 ** (sb.astype(np.float64) - 127), 32, axis=1).T
    want = (av * scale_a) @ (bv * scale_b)
    np.testing.assert_allclose(o, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())
