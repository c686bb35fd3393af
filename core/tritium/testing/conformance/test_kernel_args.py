"""Structured run-time kernel arguments: tuples (indexed, iterated, nested, passed to device functions,
mixing arrays, ints, floats and compile-time values) and host ``TensorDescriptor`` objects (load, store,
shape and strides, padding, atomics, inside tuples)."""
from __future__ import annotations

from collections import namedtuple

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium.tools.tensor_descriptor import TensorDescriptor

from .reference import DTYPES, arg, decode, random

Scale = namedtuple("Scale", ["mul", "add"])


@triton.jit
def _sum_all(ptrs, offs, mask):
    acc = tl.load(ptrs[0] + offs, mask=mask).to(tl.float32)
    for j in tl.static_range(1, len(ptrs)):
        acc += tl.load(ptrs[j] + offs, mask=mask).to(tl.float32)
    return acc


@triton.jit
def _tuple_kernel(ins, out, n, params, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    acc = _sum_all(ins, offs, mask)
    for p in ins:  # iterating the tuple itself
        acc += tl.load(p + offs, mask=mask).to(tl.float32)
    # params: (float, (int, int), constexpr, None)
    acc = acc * params[0] + params[1][0] - params[1][1] + params[2]
    if params[3] is None:
        acc += 0.5
    tl.store(out + offs, acc, mask=mask)


@pytest.mark.parametrize("count", [1, 2, 3])
@pytest.mark.parametrize("k0,k1", [(1, 16), (17, 1)])
def test_tuple_of_arrays(backend, rng, count, k0, k1):
    n, block = 100, 32
    ins = tuple(rng.integers(-8, 8, n).astype(np.float32) for _ in range(count))
    out = np.zeros(n, np.float32)
    _tuple_kernel[(triton.cdiv(n, block), )](ins, out, n, (2.0, (k0, k1), tl.constexpr(3), None), BLOCK=block)
    want = sum(ins) * 2 * 2.0 + k0 - k1 + 3 + 0.5
    np.testing.assert_array_equal(out, want)


@triton.jit
def _nested_kernel(pairs, out, scale, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(pairs[0][0] + offs) + tl.load(pairs[0][1] + offs)
    b = tl.load(pairs[1][0] + offs) * pairs[1][1]
    tl.store(out + offs, (a + b) * scale.mul + scale.add)


@pytest.mark.parametrize("dtype", ["int32", "float16", "int64"])
def test_nested_and_named_tuples(backend, rng, dtype):
    backend.require_dtype(dtype)
    block = 16
    # small integers: every intermediate is exact in each type
    x, y, z = (rng.integers(-4, 4, block).astype(DTYPES[dtype].storage) for _ in range(3))
    out = np.zeros(block, x.dtype)
    _nested_kernel[(1, )](((x, y), (z, 3)), out, Scale(2, 1), BLOCK=block)
    want = ((x.astype(np.float64) + y + z * 3) * 2 + 1).astype(x.dtype)
    np.testing.assert_array_equal(out, want)


@triton.jit
def _desc_copy(src, dst, extra):
    pm = tl.program_id(0) * src.block_shape[0]
    pn = tl.program_id(1) * src.block_shape[1]
    v = src.load([pm, pn])
    dst.store([pm, pn], v)
    # shape and strides are the host's (the last stride is 1)
    if tl.program_id(0) == 0 and tl.program_id(1) == 0:
        tl.store(extra + 0, src.shape[0].to(tl.int64))
        tl.store(extra + 1, src.shape[1].to(tl.int64))
        tl.store(extra + 2, src.strides[0])
        tl.store(extra + 3, src.strides[1])


@pytest.mark.parametrize("dtype", ["float32", "float16", "int8", "int64", "bfloat16"])
def test_host_descriptor_copy(backend, rng, dtype):
    backend.require_dtype(dtype)
    M, N, BM = 19, 64, 8
    BN = max(16, 64 // DTYPES[dtype].bits)  # a block row spans at least 16 bytes
    x = random(dtype, (M, N), rng, -3, 3)
    out = np.zeros_like(x)
    extra = np.zeros(4, np.int64)
    src = TensorDescriptor(arg(x, dtype), [M, N], [N, 1], [BM, BN])
    dst = TensorDescriptor(arg(out, dtype), [M, N], [N, 1], [BM, BN])
    _desc_copy[(triton.cdiv(M, BM), triton.cdiv(N, BN))](src, dst, extra)
    np.testing.assert_array_equal(decode(out, dtype), decode(x, dtype))
    np.testing.assert_array_equal(extra, [M, N, N, 1])


@triton.jit
def _desc_window(src, out, i, j, BM: tl.constexpr, BN: tl.constexpr):
    v = src.load([i, j])
    rm, rn = tl.arange(0, BM), tl.arange(0, BN)
    tl.store(out + rm[:, None] * BN + rn[None, :], v)


@pytest.mark.parametrize("pad", ["zero", "nan"])
def test_host_descriptor_padding_and_views(backend, pad):
    big = np.arange(12 * 40, dtype=np.float32).reshape(12, 40)
    x = big[2:8, 8:17]  # a view: offset base, row stride 40
    BM, BN = 4, 8
    out = np.zeros((BM, BN), np.float32)
    src = TensorDescriptor.from_tensor(x, [BM, BN], padding=pad)
    assert src.strides == [40, 1]
    _desc_window[(1, )](src, out, 4, 6, BM, BN)
    want = np.full((BM, BN), 0.0 if pad == "zero" else np.nan, np.float32)
    want[:2, :3] = x[4:, 6:]
    np.testing.assert_array_equal(out, want)


@triton.jit
def _desc_in_tuple(descs, vals, BN: tl.constexpr):
    v = tl.load(vals + tl.arange(0, BN))
    descs[0].atomic_add([tl.program_id(0) * (BN // 2)], v)
    descs[1].store([tl.program_id(0) * BN], v * descs[2])


def test_host_descriptors_in_a_tuple_with_atomics(backend, rng):
    N, BN, grid = 40, 16, 5
    acc = rng.integers(-50, 50, N).astype(np.int32)
    scaled = np.zeros(grid * BN, np.int32)
    v = rng.integers(-50, 50, BN).astype(np.int32)
    want = acc.copy()
    for p in range(grid):
        lo = p * BN // 2
        hi = min(lo + BN, N)
        want[lo:hi] += v[:hi - lo]
    descs = (TensorDescriptor.from_tensor(acc, [BN]), TensorDescriptor.from_tensor(scaled, [BN]), 3)
    _desc_in_tuple[(grid, )](descs, v, BN)
    np.testing.assert_array_equal(acc, want)
    np.testing.assert_array_equal(scaled, np.tile(v * 3, grid))
