"""Program ids, creation and shape manipulation: arange, full, zeros(_like), cat, join, split, interleave,
broadcast(_to), expand_dims, permute, trans, reshape, view, ravel, flip."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl

from .reference import ALL, arg, decode, random


@triton.jit
def _ids(out_ptr):
    p0, p1, p2 = tl.program_id(0), tl.program_id(1), tl.program_id(axis=2)
    lin = (p2 * tl.num_programs(1) + p1) * tl.num_programs(0) + p0
    base = out_ptr + lin * 6
    tl.store(base + 0, p0)
    tl.store(base + 1, p1)
    tl.store(base + 2, p2)
    tl.store(base + 3, tl.num_programs(0))
    tl.store(base + 4, tl.num_programs(1))
    tl.store(base + 5, tl.num_programs(axis=2))


@pytest.mark.parametrize("grid", [(1, 1, 1), (5, 3, 2), (7, ), (2, 9)])
def test_program_id_and_num_programs(backend, grid):
    g = tuple(grid) + (1, ) * (3 - len(grid))
    out = np.full((g[2], g[1], g[0], 6), -1, np.int32)
    _ids[grid](out)
    z, y, x = np.meshgrid(np.arange(g[2]), np.arange(g[1]), np.arange(g[0]), indexing="ij")
    np.testing.assert_array_equal(out[..., 0], x)
    np.testing.assert_array_equal(out[..., 1], y)
    np.testing.assert_array_equal(out[..., 2], z)
    np.testing.assert_array_equal(out[..., 3:], np.broadcast_to(np.array(g, np.int32), out[..., 3:].shape))


@triton.jit
def _creation(out_i32, out_f, START: tl.constexpr, N: tl.constexpr, VALUE: tl.constexpr):
    r = tl.arange(START, START + N)
    tl.store(out_i32 + tl.arange(0, N), r)
    f = tl.full((N, ), VALUE, dtype=out_f.dtype.element_ty)
    tl.store(out_f + tl.arange(0, N), f)
    z = tl.zeros([N], out_f.dtype.element_ty)
    tl.store(out_f + N + tl.arange(0, N), z)
    zl = tl.zeros_like(f)
    tl.store(out_f + 2 * N + tl.arange(0, N), zl + 1)
    tl.static_assert(r.dtype == tl.int32)
    tl.static_assert(zl.dtype == f.dtype)
    tl.static_assert(z.shape[0] == N)


@pytest.mark.parametrize("start,n", [(0, 1), (0, 16), (5, 32), (-8, 64), (1000, 1024)])
@pytest.mark.parametrize("dtype", ["int8", "uint32", "float16", "float32", "int64"])
def test_arange_full_zeros(backend, start, n, dtype):
    out_i = np.zeros(n, np.int32)
    out_f = np.zeros(3 * n, np.dtype(dtype) if dtype != "float16" else np.float16)
    _creation[(1, )](out_i, out_f, start, n, 3)
    np.testing.assert_array_equal(out_i, np.arange(start, start + n))
    np.testing.assert_array_equal(out_f, np.concatenate([np.full(n, 3), np.zeros(n), np.ones(n)]))


@triton.jit
def _shape_ops(x_ptr, y_ptr, o_ptr, M: tl.constexpr, N: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    x = tl.load(x_ptr + rm[:, None] * N + rn[None, :])
    y = tl.load(y_ptr + rm[:, None] * N + rn[None, :])
    MN: tl.constexpr = M * N
    # transposes, [N, M]
    t_idx = rn[:, None] * M + rm[None, :]
    tl.store(o_ptr + t_idx, tl.trans(x))
    tl.store(o_ptr + MN + t_idx, tl.permute(x, (1, 0)))
    tl.store(o_ptr + 2 * MN + t_idx, x.T)
    tl.store(o_ptr + 3 * MN + t_idx, tl.trans(x, 1, 0))
    # reshapes: row-major order is kept
    tl.store(o_ptr + 4 * MN + t_idx, tl.reshape(x, (N, M)))
    tl.store(o_ptr + 5 * MN + tl.arange(0, MN), tl.ravel(x))
    tl.store(o_ptr + 6 * MN + tl.arange(0, MN), x.reshape(MN))
    # join / split / interleave
    j = tl.join(x, y)                                   # [M, N, 2]
    j_idx = (rm[:, None, None] * N + rn[None, :, None]) * 2 + tl.arange(0, 2)[None, None, :]
    tl.store(o_ptr + 7 * MN + j_idx, j)
    a, b = tl.split(j)
    tl.store(o_ptr + 9 * MN + rm[:, None] * N + rn[None, :], b)
    tl.store(o_ptr + 10 * MN + rm[:, None] * N + rn[None, :], a)
    i2 = tl.interleave(x, y)                            # [M, 2N]
    tl.store(o_ptr + 11 * MN + rm[:, None] * (2 * N) + tl.arange(0, 2 * N)[None, :], i2)
    # cat along the first dimension
    c = tl.cat(x, y, can_reorder=True)                  # [2M, N]
    tl.store(o_ptr + 13 * MN + tl.arange(0, 2 * M)[:, None] * N + rn[None, :], c)
    # broadcasting
    row = tl.load(x_ptr + rn)                           # the first row
    bt = tl.broadcast_to(row[None, :], (M, N))
    tl.store(o_ptr + 15 * MN + rm[:, None] * N + rn[None, :], bt)
    bb, _ = tl.broadcast(row[None, :], x)
    tl.store(o_ptr + 16 * MN + rm[:, None] * N + rn[None, :], bb)
    e = tl.expand_dims(x, 0)                            # [1, M, N]
    e2 = tl.expand_dims(x, (0, 3))                      # [1, M, N, 1]
    tl.static_assert(len(e.shape) == 3 and e.shape[0] == 1)
    tl.static_assert(len(e2.shape) == 4 and e2.shape[3] == 1)
    tl.store(o_ptr + 17 * MN + rm[None, :, None] * N + rn[None, None, :], e)
    # flips
    tl.store(o_ptr + 18 * MN + rm[:, None] * N + rn[None, :], tl.flip(x, 0))
    tl.store(o_ptr + 19 * MN + rm[:, None] * N + rn[None, :], tl.flip(x, 1))
    tl.store(o_ptr + 20 * MN + rm[:, None] * N + rn[None, :], tl.flip(x))
    # view may reorder: only the multiset of elements is defined
    v = tl.view(x, (N, M))
    tl.store(o_ptr + 21 * MN + t_idx, v)


_SHAPES = [(4, 8), (16, 2), (1, 32)]


@pytest.mark.parametrize("dtype,shape", [(d, _SHAPES[i % 3]) for i, d in enumerate(ALL)] +
                         [("float32", s) for s in _SHAPES[1:]])
def test_shape_manipulation(backend, rng, dtype, shape):
    backend.require_dtype(dtype)
    M, N = shape
    x = random(dtype, shape, rng)
    y = random(dtype, shape, rng)
    out = np.zeros((22, M * N), x.dtype)
    _shape_ops[(1, )](arg(x, dtype), arg(y, dtype), arg(out, dtype), M, N)
    o = [out[k] for k in range(22)]
    for k in range(4):
        np.testing.assert_array_equal(o[k].reshape(N, M), x.T, err_msg=f"transpose #{k}")
    np.testing.assert_array_equal(o[4].reshape(N, M), x.reshape(N, M))
    np.testing.assert_array_equal(o[5], x.ravel())
    np.testing.assert_array_equal(o[6], x.ravel())
    np.testing.assert_array_equal(np.concatenate([o[7], o[8]]).reshape(M, N, 2), np.stack([x, y], -1))
    np.testing.assert_array_equal(o[9].reshape(M, N), y)
    np.testing.assert_array_equal(o[10].reshape(M, N), x)
    np.testing.assert_array_equal(np.concatenate([o[11], o[12]]).reshape(M, 2 * N),
                                  np.stack([x, y], -1).reshape(M, 2 * N))
    np.testing.assert_array_equal(np.concatenate([o[13], o[14]]).reshape(2 * M, N), np.concatenate([x, y]))
    np.testing.assert_array_equal(o[15].reshape(M, N), np.broadcast_to(x[0], (M, N)))
    np.testing.assert_array_equal(o[16].reshape(M, N), np.broadcast_to(x[0], (M, N)))
    np.testing.assert_array_equal(o[17].reshape(M, N), x)
    np.testing.assert_array_equal(o[18].reshape(M, N), x[::-1])
    np.testing.assert_array_equal(o[19].reshape(M, N), x[:, ::-1])
    np.testing.assert_array_equal(o[20].reshape(M, N), x[:, ::-1])
    got, want = np.sort(decode(o[21], dtype).ravel()), np.sort(decode(x, dtype).ravel())
    np.testing.assert_array_equal(got.view(np.uint8) if got.dtype == np.bool_ else got, want)


@triton.jit
def _permute3(x_ptr, o_ptr, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr, P0: tl.constexpr,
              P1: tl.constexpr, P2: tl.constexpr):
    ra, rb, rc = tl.arange(0, A), tl.arange(0, B), tl.arange(0, C)
    x = tl.load(x_ptr + (ra[:, None, None] * B + rb[None, :, None]) * C + rc[None, None, :])
    y = tl.permute(x, P0, P1, P2)
    s0: tl.constexpr = y.shape[0]
    s1: tl.constexpr = y.shape[1]
    s2: tl.constexpr = y.shape[2]
    i0, i1, i2 = tl.arange(0, s0), tl.arange(0, s1), tl.arange(0, s2)
    tl.store(o_ptr + (i0[:, None, None] * s1 + i1[None, :, None]) * s2 + i2[None, None, :], y)


@pytest.mark.parametrize("perm", [(0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)])
def test_permute_3d(backend, perm):
    x = np.arange(2 * 4 * 8, dtype=np.int32).reshape(2, 4, 8)
    want = np.transpose(x, perm)
    out = np.zeros(want.size, np.int32)
    _permute3[(1, )](x, out, 2, 4, 8, *perm)
    np.testing.assert_array_equal(out.reshape(want.shape), want)
