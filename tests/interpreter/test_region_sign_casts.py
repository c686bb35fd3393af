"""Reductions and scans over a value cast between signed and unsigned integers of one width (the cast emits no
op, so the interpreter's array keeps the source's signedness). The scan concatenates its inputs with the combine's
results; with an int64 array beside a uint64 one numpy promoted to float64 and the last bits were lost
(7861989326846768219 came back as 7861989326846768128, 2**64 - 1 as 0). Found by the differential fuzzer
(seed 17020007, kernel 17020058060033: every compiled target agreed with each other, the interpreter did not)."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl

from .conftest import run

BIG = np.array([2**64 - 1, 7861989326846768219, 18, 2**63 + 1, 2**53 + 1, 5, 2**63 - 1, 2**62 + 3], np.uint64)


@triton.jit
def _min(a, b):
    return tl.minimum(a, b)


@triton.jit
def _max_via_signed(a, b):
    # the | takes the storage of its first operand (int64), and the cast to uint64 emits no op: the combine returns
    # an int64 array typed uint64
    return (tl.full([], 0, tl.int64) | tl.maximum(a, b).to(tl.int64)).to(tl.uint64)


@triton.jit
def _scans(x_ptr, fwd_ptr, rev_ptr, cast_ptr, red_ptr):
    r = tl.arange(0, 8)
    v = tl.load(x_ptr + r).to(tl.uint64)                                 # int64 -> uint64
    tl.store(fwd_ptr + r, tl.associative_scan(v, 0, _min))
    tl.store(rev_ptr + r, tl.associative_scan(v, 0, _min, reverse=True))
    u = tl.load(x_ptr + r).to(tl.uint64)
    tl.store(cast_ptr + r, tl.associative_scan(u, 0, _max_via_signed))
    tl.store(red_ptr, tl.reduce(v, 0, _min))
    tl.store(red_ptr + 1, tl.reduce(u, 0, _max_via_signed))


@pytest.mark.parametrize("interpret", [True, False], ids=["interpreter", "compiled"])
def test_uint64_scans_of_a_cast_keep_every_bit(interpret):
    x = BIG.view(np.int64)
    outs = [np.zeros(8, np.uint64) for _ in range(3)] + [np.zeros(2, np.uint64)]
    fwd, rev, cast, red = run(_scans, (1, ), x, *outs, interpret=interpret)[1:]
    np.testing.assert_array_equal(fwd, np.minimum.accumulate(BIG))
    np.testing.assert_array_equal(rev, np.minimum.accumulate(BIG[::-1])[::-1])
    np.testing.assert_array_equal(cast, np.maximum.accumulate(BIG))
    np.testing.assert_array_equal(red, [BIG.min(), BIG.max()])
