"""``tl.inline_asm_elementwise`` on an NVIDIA GPU, values checked against numpy: one register per 32-bit element,
four int8 elements per register (pack=4), two fp16 per register (pack=2), several results of mixed widths, and an
impure statement that stores through pointers it is given. The PTX these produce is checked without a GPU in
tests/nvidia_compile/test_inline_asm_ptx.py."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from found_kernels import funnel_shift, bytes_times_8, widen_and_max, copy_shifted  # noqa: E402






@triton.jit
def _half_pairs(X, Y, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(X + offs)
    # two halves per register: negate both with one xor of their sign bits
    y = tl.inline_asm_elementwise("xor.b32 $0, $1, 0x80008000;", "=r,r", [x], dtype=tl.float16, is_pure=True, pack=2)
    tl.store(Y + offs, y)


@triton.jit
def _sub_both_ways(A, B, C, D, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    c, d = tl.inline_asm_elementwise("sub.u32 $0, $2, $3; sub.u32 $1, $3, $2;", "=r,=r,r,r",
                                     [tl.load(A + offs), tl.load(B + offs)], dtype=(tl.uint32, tl.uint32),
                                     is_pure=True, pack=1)
    tl.store(C + offs, c)
    tl.store(D + offs, d)






def _t(a):
    import torch
    return torch.from_numpy(a).cuda()


@pytest.mark.parametrize("warps", [1, 4])
def test_funnel_shift(cuda, warps):
    rng = np.random.default_rng(1)
    x, y = (rng.integers(0, 2**32, 512, dtype=np.uint64).astype(np.uint32) for _ in range(2))
    z = _t(np.zeros(512, np.uint32))
    funnel_shift[(1,)](_t(x), _t(y), z, SHIFT=17, BLOCK=512, num_warps=warps)
    np.testing.assert_array_equal(z.cpu().numpy(), (y << np.uint32(17)) | (x >> np.uint32(15)))


def test_packed_bytes_and_halves(cuda):
    rng = np.random.default_rng(2)
    x = rng.integers(0, 256, 2048).astype(np.uint8)
    y = _t(np.zeros(2048, np.uint8))
    bytes_times_8[(1,)](_t(x), y, BLOCK=2048)
    np.testing.assert_array_equal(y.cpu().numpy(), (x & 0x1F) << 3)
    h = rng.standard_normal(1024).astype(np.float16)
    out = _t(np.zeros(1024, np.float16))
    _half_pairs[(1,)](_t(h), out, BLOCK=1024)
    np.testing.assert_array_equal(out.cpu().numpy(), -h)


def test_several_results(cuda):
    rng = np.random.default_rng(3)
    a = rng.integers(0, 2**32, 512, dtype=np.uint64).astype(np.uint32)
    b = rng.integers(0, 2**32, 512, dtype=np.uint64).astype(np.uint32)
    c, d = _t(np.zeros(512, np.uint32)), _t(np.zeros(512, np.uint32))
    _sub_both_ways[(1,)](_t(a), _t(b), c, d, BLOCK=512)
    np.testing.assert_array_equal(c.cpu().numpy(), a - b)
    np.testing.assert_array_equal(d.cpu().numpy(), b - a)
    u8 = rng.integers(0, 256, 512).astype(np.uint8)
    f = (rng.standard_normal(512) * 100).astype(np.float32)
    ci, df = _t(np.zeros(512, np.int32)), _t(np.zeros(512, np.float32))
    widen_and_max[(1,)](_t(u8), _t(f), ci, df, BLOCK=512)
    np.testing.assert_array_equal(ci.cpu().numpy(), u8.astype(np.int32))
    np.testing.assert_array_equal(df.cpu().numpy(), np.maximum(u8.astype(np.float32), f))


def test_impure_statement_through_pointers(cuda):
    x = np.random.default_rng(4).integers(0, 256, 512).astype(np.uint8)
    y = _t(np.zeros(512, np.uint8))
    copy_shifted[(1,)](_t(x), y, BLOCK=512)
    np.testing.assert_array_equal(y.cpu().numpy(), (x << 3).astype(np.uint8))
