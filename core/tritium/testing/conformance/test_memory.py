"""Loads and stores: masks, ``other``, scalars, hints; block pointers with boundary checks, padding and
``advance``; tensor descriptors (load, store, atomics, gather, scatter); ``tl.gather``; stores that overwrite
what their value read."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl

from .reference import ALL, DTYPES, arg, decode, random


@triton.jit
def _masked_copy(x_ptr, o_ptr, n, OTHER: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=OTHER, cache_modifier=".ca", eviction_policy="evict_last")
    tl.store(o_ptr + offs, x, cache_modifier=".wb", eviction_policy="evict_first")


@pytest.mark.parametrize("dtype", ALL)
def test_masked_load_other(backend, rng, dtype):
    backend.require_dtype(dtype)
    n, block = 45, 16
    x = random(dtype, n, rng)
    out = random(dtype, 48, rng)
    other = 1 if dtype != "int1" else True
    _masked_copy[(3, )](arg(x, dtype), arg(out, dtype), n, other, BLOCK=block)
    np.testing.assert_array_equal(out[:n], x)
    fill = decode(out[n:], dtype)
    np.testing.assert_array_equal(fill, np.ones(3, fill.dtype))


@triton.jit
def _mask_shapes(x_ptr, o_ptr, rows, cols, M: tl.constexpr, N: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    ptrs = x_ptr + rm[:, None] * N + rn[None, :]
    # a row mask and a column mask broadcast against the [M, N] block of pointers
    row_ok = rm[:, None] < rows
    col_ok = rn < cols
    a = tl.load(ptrs, mask=row_ok, other=-1)
    b = tl.load(ptrs, mask=col_ok, other=-2)
    c = tl.load(ptrs, mask=row_ok & col_ok[None, :], other=tl.full((1, N), -3, tl.int32))
    out = o_ptr + rm[:, None] * N + rn[None, :]
    tl.store(out, a)
    tl.store(out + M * N, b)
    tl.store(out + 2 * M * N, c)
    tl.store(out + 3 * M * N, a + 100, mask=row_ok & col_ok[None, :])


def test_mask_and_other_broadcast(backend):
    M, N, rows, cols = 8, 16, 5, 11
    x = np.arange(M * N, dtype=np.int32).reshape(M, N)
    out = np.full((4, M, N), 7, np.int32)
    _mask_shapes[(1, )](x, out, rows, cols, M, N)
    r = np.arange(M)[:, None] < rows
    c = np.arange(N)[None, :] < cols
    np.testing.assert_array_equal(out[0], np.where(r, x, -1))
    np.testing.assert_array_equal(out[1], np.where(c, x, -2))
    np.testing.assert_array_equal(out[2], np.where(r & c, x, -3))
    np.testing.assert_array_equal(out[3], np.where(r & c, x + 100, 7))


@triton.jit
def _scalars(x_ptr, o_ptr, i64_ptr, k, flag):
    v = tl.load(x_ptr + k)
    tl.store(o_ptr, v * 2)
    w = tl.load(x_ptr + k + 1, mask=flag > 0, other=-5.0, volatile=True)
    tl.store(o_ptr + 1, w)
    tl.store(o_ptr + 2, 3.5, mask=flag < 0)
    big = tl.load(i64_ptr)
    tl.store(i64_ptr + 1, big + 1)
    # negative and 64-bit offsets
    end = o_ptr + 8
    tl.store(end - 5, v)
    far = tl.full((), 6, tl.int64)
    tl.store(o_ptr + far, v + 1)


@pytest.mark.parametrize("flag", [1, -1])
def test_scalar_pointers(backend, flag):
    x = np.arange(10, dtype=np.float32) + 0.5
    out = np.zeros(8, np.float32)
    big = np.array([2**40 + 3, 0], np.int64)
    _scalars[(1, )](x, out, big, 4, flag)
    assert out[0] == 9.0
    assert out[1] == (5.5 if flag > 0 else -5.0)
    assert out[2] == (3.5 if flag < 0 else 0.0)
    assert out[3] == 4.5 and out[6] == 5.5
    assert big[1] == 2**40 + 4


@triton.jit
def _block_ptr_kernel(x_ptr, o_ptr, M, N, off_m, off_n, BM: tl.constexpr, BN: tl.constexpr, CHECK: tl.constexpr,
                      PAD: tl.constexpr, ORDER: tl.constexpr):
    src = tl.make_block_ptr(x_ptr, shape=(M, N), strides=(N, 1), offsets=(off_m, off_n), block_shape=(BM, BN),
                            order=ORDER)
    if PAD == "":
        v = tl.load(src, boundary_check=CHECK)
    else:
        v = tl.load(src, boundary_check=CHECK, padding_option=PAD)
    dst = tl.make_block_ptr(o_ptr, shape=(BM, BN), strides=(BN, 1), offsets=(0, 0), block_shape=(BM, BN),
                            order=(1, 0))
    tl.store(dst, v)


@pytest.mark.parametrize("check", [(0, 1), (0, ), (1, )])
@pytest.mark.parametrize("pad", ["zero", "nan"])
@pytest.mark.parametrize("offsets", [(0, 0), (6, 5), (-2, -3)])
def test_block_pointer_load(backend, check, pad, offsets):
    M, N, BM, BN = 10, 12, 8, 8
    x = np.arange(M * N, dtype=np.float32).reshape(M, N) + 1
    # keep the unchecked dimension in bounds: reading outside is undefined
    om, on = offsets
    if 0 not in check:
        om = min(max(om, 0), M - BM)
    if 1 not in check:
        on = min(max(on, 0), N - BN)
    out = np.full((BM, BN), -7, np.float32)
    _block_ptr_kernel[(1, )](x, out, M, N, om, on, BM, BN, check, pad, (1, 0))
    ii = np.arange(BM)[:, None] + om
    jj = np.arange(BN)[None, :] + on
    ok = (ii >= 0) & (ii < M) & (jj >= 0) & (jj < N)
    fill = 0.0 if pad == "zero" else np.nan
    want = np.where(ok, x[np.clip(ii, 0, M - 1), np.clip(jj, 0, N - 1)], fill)
    np.testing.assert_array_equal(out, want)


@triton.jit
def _block_ptr_walk(a_ptr, o_ptr, M, K, stride_m, BM: tl.constexpr, BK: tl.constexpr):
    """Sum the blocks of a row panel while advancing along K; then store with a boundary check."""
    pid = tl.program_id(0)
    a = tl.make_block_ptr(a_ptr, (M, K), (stride_m, 1), (pid * BM, 0), (BM, BK), (1, 0))
    acc = tl.zeros((BM, BK), tl.float32)
    for _ in range(0, K, BK):
        acc += tl.load(a, boundary_check=(0, 1), padding_option="zero").to(tl.float32)
        a = tl.advance(a, (0, BK))
    out = tl.make_block_ptr(o_ptr, (M, BK), (BK, 1), (pid * BM, 0), (BM, BK), (0, 1))
    tl.store(out, acc.to(o_ptr.dtype.element_ty), boundary_check=(0, ))


@pytest.mark.parametrize("dtype", ["float16", "float32", "int32", "bfloat16"])
def test_block_pointer_advance_and_store(backend, rng, dtype):
    M, K, BM, BK = 37, 50, 16, 16
    a = random(dtype, (M, K), rng, -4, 4)
    out = random(dtype, (M, BK), rng)
    before = out.copy()
    _block_ptr_walk[(triton.cdiv(M, BM), )](arg(a, dtype), arg(out, dtype), M, K, K, BM, BK)
    av = decode(a, dtype).astype(np.float64)
    padded = np.zeros((M, 64))
    padded[:, :K] = av
    want = padded.reshape(M, 4, BK).sum(1)
    got = decode(out, dtype).astype(np.float64)
    tol = 0.0 if dtype == "int32" else 0.5
    np.testing.assert_allclose(got, want, atol=tol, rtol=1e-2)
    assert np.array_equal(out.shape, before.shape)


@triton.jit
def _desc_kernel(x_ptr, o_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr, PAD: tl.constexpr):
    src = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN], padding_option=PAD)
    dst = tl.make_tensor_descriptor(o_ptr, [M, N], [N, 1], [BM, BN])
    pm, pn = tl.program_id(0) * BM, tl.program_id(1) * BN
    v = src.load([pm, pn])
    tl.static_assert(v.dtype == src.dtype)
    tl.static_assert(src.block_shape[0] == BM)
    dst.store([pm, pn], v * 2)
    # a second store one block further down, clipped at the bottom edge
    tl.store_tensor_descriptor(dst, [pm + M, pn], v)


@pytest.mark.parametrize("dtype,pad", [(d, p) for d in ["float32", "float16", "int8", "int64", "bfloat16", "float8e5"]
                                       for p in ("zero", "nan") if p == "zero" or not DTYPES[d].is_int])
def test_tensor_descriptor(backend, rng, dtype, pad):
    backend.require_dtype(dtype)
    M, N, BM, BN = 19, 40, 8, 32
    x = random(dtype, (M, N), rng, -3, 3)
    out = random(dtype, (M, N), rng)
    _desc_kernel[(triton.cdiv(M, BM), triton.cdiv(N, BN))](arg(x, dtype), arg(out, dtype), M, N, BM, BN, pad)
    np.testing.assert_allclose(decode(out, dtype).astype(np.float64), decode(x, dtype).astype(np.float64) * 2)


@triton.jit
def _desc_padding(x_ptr, o_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr, PAD: tl.constexpr):
    src = tl.make_tensor_descriptor(x_ptr, [M, N], [N, 1], [BM, BN], padding_option=PAD)
    v = tl.load_tensor_descriptor(src, [M - 2, N - 3])
    rm, rn = tl.arange(0, BM), tl.arange(0, BN)
    tl.store(o_ptr + rm[:, None] * BN + rn[None, :], v)


@pytest.mark.parametrize("pad", ["zero", "nan"])
def test_tensor_descriptor_padding(backend, pad):
    M, N, BM, BN = 6, 9, 4, 8
    x = np.arange(M * N, dtype=np.float32).reshape(M, N)
    out = np.zeros((BM, BN), np.float32)
    _desc_padding[(1, )](x, out, M, N, BM, BN, pad)
    fill = 0.0 if pad == "zero" else np.nan
    want = np.full((BM, BN), fill, np.float32)
    want[:2, :3] = x[M - 2:, N - 3:]
    np.testing.assert_array_equal(out, want)


@triton.jit
def _desc_atomics(x_ptr, v_ptr, N, BN: tl.constexpr, OP: tl.constexpr):
    d = tl.make_tensor_descriptor(x_ptr, [N], [1], [BN])
    v = tl.load(v_ptr + tl.arange(0, BN))
    off = tl.program_id(0) * (BN // 2)
    if OP == "add":
        d.atomic_add([off], v)
    elif OP == "min":
        d.atomic_min([off], v)
    elif OP == "max":
        d.atomic_max([off], v)
    elif OP == "and":
        d.atomic_and([off], v)
    elif OP == "or":
        d.atomic_or([off], v)
    else:
        d.atomic_xor([off], v)


@pytest.mark.parametrize("op", ["add", "min", "max", "and", "or", "xor"])
def test_tensor_descriptor_atomics(backend, rng, op):
    N, BN, grid = 40, 16, 5
    x = rng.integers(-50, 50, N).astype(np.int32)
    v = rng.integers(-50, 50, BN).astype(np.int32)
    want = x.copy()
    fn = {"add": np.add, "min": np.minimum, "max": np.maximum, "and": np.bitwise_and, "or": np.bitwise_or,
          "xor": np.bitwise_xor}[op]
    for p in range(grid):
        lo = p * BN // 2
        hi = min(lo + BN, N)
        want[lo:hi] = fn(want[lo:hi], v[:hi - lo])
    _desc_atomics[(grid, )](x, v, N, BN, op)
    np.testing.assert_array_equal(x, want)


@triton.jit
def _desc_gather_scatter(x_ptr, o_ptr, rows_ptr, M, N, col, R: tl.constexpr, BN: tl.constexpr):
    src = tl.make_tensor_descriptor(x_ptr, [M, N], [N, 1], [1, BN])
    rows = tl.load(rows_ptr + tl.arange(0, R))
    g = src.gather(rows, col)
    tl.static_assert(g.shape[0] == R and g.shape[1] == BN)
    dst = tl.make_tensor_descriptor(o_ptr, [M, N], [N, 1], [1, BN])
    dst.scatter(g + 1, rows, col)


def test_tensor_descriptor_gather_scatter(backend):
    M, N, R, BN, col = 20, 40, 8, 16, 30
    x = np.arange(M * N, dtype=np.float32).reshape(M, N)
    rows = np.array([3, 0, 19, 7, 25, 11, 2, 18], np.int32)    # row 25 is out of bounds
    out = np.zeros_like(x)
    _desc_gather_scatter[(1, )](x, out, rows, M, N, col, R, BN)
    want = np.zeros_like(x)
    for r in rows:
        if r < M:
            want[r, col:] = x[r, col:] + 1
    np.testing.assert_array_equal(out, want)


@triton.jit
def _gather_kernel(x_ptr, i_ptr, o_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, AXIS: tl.constexpr):
    rm, rn = tl.arange(0, M), tl.arange(0, N)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :])
    if AXIS == 0:
        rk = tl.arange(0, K)
        idx = tl.load(i_ptr + rk[:, None] * N + rn[None, :])
        y = tl.gather(x, idx, 0)
        tl.store(o_ptr + rk[:, None] * N + rn[None, :], y)
    else:
        rk = tl.arange(0, K)
        idx = tl.load(i_ptr + rm[:, None] * K + rk[None, :])
        y = x.gather(idx, axis=1)
        tl.store(o_ptr + rm[:, None] * K + rk[None, :], y)


@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("dtype", ["float32", "int16", "float16"])
def test_gather(backend, rng, axis, dtype):
    M, N, K = 8, 16, 32
    x = random(dtype, (M, N), rng)
    if axis == 0:
        idx = rng.integers(0, M, (K, N)).astype(np.int32)
        want = np.take_along_axis(x, idx, 0)
    else:
        idx = rng.integers(0, N, (M, K)).astype(np.int64)
        want = np.take_along_axis(x, idx, 1)
    out = np.zeros_like(want)
    _gather_kernel[(1, )](arg(x, dtype), idx, arg(out, dtype), M, N, K, axis)
    np.testing.assert_array_equal(out, want)


@triton.jit
def _load_through(d, off):
    return d.load([off, 0])


@triton.jit
def _pointers_in_control_flow(x_ptr, o_ptr, M, N, flag, BM: tl.constexpr, BN: tl.constexpr):
    d = tl.make_tensor_descriptor(x_ptr, [M, N], [N, 1], [BM, BN])
    v = _load_through(d, 0)                       # a descriptor passed to a device function
    p = tl.make_block_ptr(x_ptr, (M, N), (N, 1), (0, 0), (BM, BN), (1, 0))
    if flag > 0:                                  # a block pointer chosen at run time
        p = tl.advance(p, (BM, 0))
    w = tl.load(p, boundary_check=(0, 1))
    i = 0
    q = tl.make_block_ptr(o_ptr, (M, N), (N, 1), (0, 0), (BM, BN), (1, 0))
    while i < 2:                                  # and carried by a while loop
        tl.store(q, v + w + i, boundary_check=(0, 1))
        q = tl.advance(q, (BM, 0))
        i += 1


@pytest.mark.parametrize("flag", [0, 1])
def test_pointers_through_calls_and_control_flow(backend, flag):
    x = np.arange(32 * 16, dtype=np.float32).reshape(32, 16)
    out = np.zeros_like(x)
    _pointers_in_control_flow[(1, )](x, out, 32, 16, flag, BM=8, BN=16)
    w = x[8:16] if flag else x[:8]
    np.testing.assert_array_equal(out[:8], x[:8] + w)
    np.testing.assert_array_equal(out[8:16], x[:8] + w + 1)
    np.testing.assert_array_equal(out[16:], 0)


@triton.jit
def _overwrite_what_is_read(p, q, r, s, N: tl.constexpr):
    offs = tl.arange(0, N)
    # a tile is read whole before it is stored, also when the store overwrites it at other indices
    tl.store(p + offs + 1, tl.load(p + offs) * 2)
    tl.store(q + offs, tl.flip(tl.load(q + offs), 0))
    bp = tl.make_block_ptr(r, (N, N), (N, 1), (0, 0), (N, N), (1, 0))
    tl.store(bp, tl.trans(tl.load(bp)))
    d = tl.make_tensor_descriptor(s, shape=[2 * N], strides=[1], block_shape=[N])
    d.store([N // 2], d.load([0]) + 1)


def test_store_overwrites_what_it_read(backend):
    n = 16
    p, q = np.arange(n + 1, dtype=np.float32), np.arange(n, dtype=np.float32)
    r, s = np.arange(n * n, dtype=np.float32).reshape(n, n), np.arange(2 * n, dtype=np.float32)
    want_p, want_s = p.copy(), s.copy()
    want_p[1:] = 2 * p[:n]
    want_s[n // 2:n // 2 + n] = s[:n] + 1
    want_q, want_r = q[::-1].copy(), r.T.copy()
    _overwrite_what_is_read[(1, )](p, q, r, s, N=n)
    for got, want in ((p, want_p), (q, want_q), (r, want_r), (s, want_s)):
        np.testing.assert_array_equal(got, want)
