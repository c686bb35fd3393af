"""A combine function (reduce, scan) that makes a tile from its scalar arguments, as torch inductor's
``triton_helpers.maximum`` does (``promote_to_tensor(x) = x + tl.zeros((1,), tl.int1)``, to read its dtype). The
interpreter runs a combine on whole rows at once, so its "scalars" hold a row each; splatting one to a tile failed
("cannot reshape array of size 32 into shape (1,1)")."""
from __future__ import annotations

import numpy as np

import tritium as triton
import tritium.language as tl


@triton.jit
def _promote_to_tensor(x):
    return x + tl.zeros((1, ), tl.int1)


@triton.jit
def _maximum(a, b):
    mask = a > b
    if _promote_to_tensor(a).dtype.is_floating():
        mask |= a != a
    return tl.where(mask, a, b)


@triton.jit
def _max_and_cummax(x_ptr, max_ptr, cum_ptr, N: tl.constexpr):
    row = tl.program_id(0)
    v = tl.load(x_ptr + row * N + tl.arange(0, N))
    tl.store(max_ptr + row, tl.reduce(v, 0, _maximum))
    tl.store(cum_ptr + row * N + tl.arange(0, N), tl.associative_scan(v, 0, _maximum))


def test_combine_that_splats_its_arguments(kit):
    x = np.random.default_rng(0).standard_normal((5, 64)).astype(np.float32)
    _, mx, cum = kit.assert_same_as_compiled(_max_and_cummax, (5, ), x, np.zeros(5, np.float32),
                                          np.zeros_like(x), N=64)
    assert np.array_equal(mx, x.max(1)) and np.array_equal(cum, np.maximum.accumulate(x, 1))
