"""Tuples and host TensorDescriptors as kernel arguments in the interpreter: the same values as compiled
(bit for bit), the same specialization rules, and errors naming the kernel and the argument."""
from __future__ import annotations

from collections import namedtuple

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium.compiler.errors import CompilationError
from tritium.tools.tensor_descriptor import TensorDescriptor

Affine = namedtuple("Affine", ["mul", "add"])


@triton.jit
def _weighted(ins, out, aff, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    acc = tl.zeros([BLOCK], tl.float32)
    for j in tl.static_range(len(ins)):
        acc += tl.load(ins[j][0] + offs, mask=m) * ins[j][1]
    tl.store(out + offs, acc * aff.mul + aff.add, mask=m)


@triton.jit
def _desc_tiles(src, dst, BM: tl.constexpr, BN: tl.constexpr):
    pm, pn = tl.program_id(0) * BM, tl.program_id(1) * BN
    v = src.load([pm, pn])
    dst.store([pm, pn], tl.where(v == v, v, -1.0) + src.shape[1])


def _both(launch):
    out = []
    for interpret in (False, True):
        for k in (_weighted, _desc_tiles):
            k.interpret = interpret
        try:
            out.append(launch())
        finally:
            for k in (_weighted, _desc_tiles):
                k.interpret = False
    return out


def test_tuples_match_the_compiled_kernel():
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal(100).astype(np.float32) for _ in range(3)]

    def launch():
        out = np.zeros(100, np.float32)
        _weighted[(4, )](tuple((x, w) for x, w in zip(xs, (0.5, 1, 16))), out, Affine(3.0, 1), 100, BLOCK=32)
        return out
    compiled, interpreted = _both(launch)
    np.testing.assert_array_equal(compiled.view(np.uint32), interpreted.view(np.uint32))
    np.testing.assert_allclose(interpreted, (xs[0] * 0.5 + xs[1] + xs[2] * 16) * 3 + 1, rtol=1e-6)


@pytest.mark.parametrize("pad", ["zero", "nan"])
def test_descriptors_match_the_compiled_kernel(pad):
    x = np.arange(20 * 24, dtype=np.float32).reshape(20, 24)

    def launch():
        y = np.zeros((32, 32), np.float32)
        _desc_tiles[(4, 2)](TensorDescriptor.from_tensor(x, [8, 16], padding=pad),
                            TensorDescriptor.from_tensor(y, [8, 16]), 8, 16)
        return y
    compiled, interpreted = _both(launch)
    np.testing.assert_array_equal(compiled, interpreted)
    want = np.zeros((32, 32), np.float32)
    want[:20, :24] = x + 24
    want[20:, :] = 24 if pad == "zero" else 23  # NaN padding reads back as -1
    want[:20, 24:] = 24 if pad == "zero" else 23
    np.testing.assert_array_equal(interpreted, want)


def test_errors_name_the_kernel_and_argument(interpret):
    x = np.zeros(16, np.float32)
    with pytest.raises(TypeError, match=r"argument `ins` \(list\) of kernel `_weighted`"):
        _weighted[(1, )]([(x, 1.0)], x, Affine(1.0, 0), 16, BLOCK=16)
    d = TensorDescriptor.from_tensor(np.zeros((8, 16), np.float32), [8, 16])
    d.block_shape = [8, 12]
    with pytest.raises(ValueError, match=r"argument `src` \(TensorDescriptor\) of kernel `_desc_tiles`: .*powers"):
        _desc_tiles[(1, 1)](d, d, 8, 16)
    narrow = TensorDescriptor.from_tensor(np.zeros((8, 16), np.float32), [8, 2])
    with pytest.raises(CompilationError, match=r"argument `src`: Descriptor block shape must have at least 16 bytes in the last dimension"):
        _desc_tiles[(1, 1)](narrow, narrow, 8, 2)
