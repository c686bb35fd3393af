"""A cast between a signed and an unsigned integer type of one width emits no op, so the interpreter's value keeps
the array (and type) of the source: the ops reading it must take the bits as the target type says. Found by the
differential fuzzer against the GPU emulator (tritium.testing.fuzz)."""
from __future__ import annotations

import numpy as np

import tritium as triton
import tritium.language as tl

from .conftest import run


@triton.jit
def _dot_of_cast(x_ptr, y_ptr, out_ptr):
    r = tl.arange(0, 16)
    a = tl.load(x_ptr + r[:, None] * 16 + r[None, :]).to(tl.int8)       # uint8 -> int8
    b = tl.load(y_ptr + r[:, None] * 16 + r[None, :])
    acc = tl.load(out_ptr + r[:, None] * 16 + r[None, :]).to(tl.int32)  # uint32 -> int32
    tl.store(out_ptr + r[:, None] * 16 + r[None, :], tl.dot(a, b, acc).to(tl.uint32))


def test_int8_dot_of_unsigned_bits():
    rng = np.random.default_rng(3)
    x = rng.integers(0, 256, (16, 16)).astype(np.uint8)
    y = rng.integers(-128, 128, (16, 16)).astype(np.int8)
    acc = rng.integers(0, 1 << 32, (16, 16), dtype=np.uint64).astype(np.uint32)
    (out, ) = [a for a in run(_dot_of_cast, (1, ), x, y, acc)][2:]
    want = x.view(np.int8).astype(np.int64) @ y.astype(np.int64) + acc.view(np.int32)
    np.testing.assert_array_equal(out.view(np.int32), want.astype(np.int32))


@triton.jit
def _join_cat_of_cast(u_ptr, s_ptr, j_ptr, c_ptr):
    r = tl.arange(0, 8)
    u = tl.load(u_ptr + r).to(tl.int64)                                  # uint64 -> int64
    s = tl.load(s_ptr + r)
    tl.store(j_ptr + r[:, None] * 2 + tl.arange(0, 2)[None, :], tl.join(u, s))
    tl.store(c_ptr + tl.arange(0, 16), tl.cat(u, s, can_reorder=True))


def test_join_and_cat_keep_64_bit_integers_exact():
    u = np.array([0, 1, 2**63, 2**64 - 1, 2**53 + 1, 7, 2**62 + 3, 5], np.uint64)
    s = np.array([-(2**62) - 109, 3, -1, 2**53 + 1, -(2**63), 9, 11, -5], np.int64)
    j, c = np.zeros((8, 2), np.int64), np.zeros(16, np.int64)
    j, c = run(_join_cat_of_cast, (1, ), u, s, j, c)[2:]
    np.testing.assert_array_equal(j, np.stack([u.view(np.int64), s], axis=-1))
    np.testing.assert_array_equal(np.sort(c), np.sort(np.concatenate([u.view(np.int64), s])))
