"""The fast copy of a loop (codegen/fastpath.py) checks the load masks of a fused expression once; a masked
load under a broadcast (``x[None, :]``) must be checked in the stored tile's index space. It was checked at the
row index: with fewer rows than columns the masked-off lanes past the row count went unchecked, the fast copy
loaded them and stored the loaded value instead of ``other``. Found from FlagGems' fused MoE kernel on this host,
whose (16, 64) store with a (16,) mask buffer under a broadcast also crashed the compiler (IndexError)."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl


@triton.jit
def _bcast(a_ptr, m_ptr, o_ptr, BM: tl.constexpr, BN: tl.constexpr, ROW: tl.constexpr):
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    if ROW:
        x = tl.load(a_ptr + rn, mask=tl.load(m_ptr + rn) != 0, other=-1.0)   # a mask the bounds cannot decide
        v = x[None, :] + tl.zeros([BM, BN], tl.float32)
    else:
        x = tl.load(a_ptr + rm, mask=tl.load(m_ptr + rm) != 0, other=-1.0)
        v = x[:, None] + tl.zeros([BM, BN], tl.float32)
    tl.store(o_ptr + rm[:, None] * BN + rn[None, :], v, mask=(rm[:, None] < BM) & (rn[None, :] < BN))


@pytest.mark.parametrize("row", [True, False], ids=["row", "column"])
@pytest.mark.parametrize("bm, bn", [(4, 8), (8, 4)])
def test_masked_load_under_a_broadcast(row, bm, bn):
    n = bn if row else bm
    a = np.arange(n, dtype=np.float32)
    m = np.ones(n, np.int32)
    m[-1] = 0                                    # only the last lane is masked off
    out = np.zeros((bm, bn), np.float32)
    _bcast[(1, )](a, m, out, BM=bm, BN=bn, ROW=row)
    x = np.where(m != 0, a, np.float32(-1.0))
    np.testing.assert_array_equal(out, np.broadcast_to(x[None, :] if row else x[:, None], (bm, bn)))


@triton.jit
def _joined(a_ptr, b_ptr, m_ptr, o_ptr, w_ptr, BM: tl.constexpr, BN: tl.constexpr, PART: tl.constexpr):
    offs = tl.arange(0, BM)[:, None] * BN + tl.arange(0, BN)[None, :]
    m = tl.load(m_ptr + offs) != 0
    tl.store(w_ptr + offs, tl.where(m, 1, 2))        # a second use: the mask becomes a buffer
    a = tl.load(a_ptr + offs, mask=m, other=-1)
    b = tl.load(b_ptr + offs)
    x, y = tl.split(tl.join(a, b))
    tl.store(o_ptr + offs, x if PART == 0 else y + x)


@pytest.mark.parametrize("part", [0, 1])
@pytest.mark.parametrize("bm, bn", [(1, 1), (2, 8)])
def test_masked_load_under_a_join(part, bm, bn):
    """A join's operands are read at the joined tile's index less its last axis (a Select2, not a Remap): the
    mask found under it was evaluated at the joined index, one axis too many for a mask buffer (IndexError in
    linear_index; fuzz seed 19020008, kernel 19020065060034, every ISA level)."""
    n = bm * bn
    a = np.arange(n, dtype=np.int64).reshape(bm, bn) + 10
    b = np.arange(n, dtype=np.int64).reshape(bm, bn) + 100
    m = np.ones((bm, bn), np.int8)
    m.flat[-1] = 0
    out, w = np.zeros((bm, bn), np.int64), np.zeros((bm, bn), np.int32)
    _joined[(1, )](a, b, m, out, w, BM=bm, BN=bn, PART=part)
    x = np.where(m != 0, a, -1)
    np.testing.assert_array_equal(out, x if part == 0 else b + x)
