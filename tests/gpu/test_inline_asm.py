"""``tl.inline_asm_elementwise`` on an NVIDIA GPU, values checked against numpy: one register per 32-bit element,
four int8 elements per register (pack=4), two fp16 per register (pack=2), several results of mixed widths, and an
impure statement that stores through pointers it is given. The PTX these produce is checked without a GPU in
tests/nvidia_compile/test_inline_asm_ptx.py."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl


@triton.jit
def _funnel(X, Y, Z, SHIFT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    s = tl.full([BLOCK], SHIFT, tl.int32)
    z = tl.inline_asm_elementwise("shf.l.wrap.b32 $0, $1, $2, $3;", "=r, r, r, r",
                                  [tl.load(X + offs), tl.load(Y + offs), s], dtype=tl.uint32, is_pure=True, pack=1)
    tl.store(Z + offs, z)


@triton.jit
def _bytes_times_8(X, Y, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    y = tl.inline_asm_elementwise("and.b32 $0, $1, 0x1F1F1F1F; shl.b32 $0, $0, 3;", "=r,r", [tl.load(X + offs)],
                                  dtype=tl.uint8, is_pure=True, pack=4)
    tl.store(Y + offs, y)


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


@triton.jit
def _widen_and_max(A, B, C, D, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    c, d = tl.inline_asm_elementwise(
        "{ .reg .b8 t<4>; mov.b32 {t0, t1, t2, t3}, $8; cvt.u32.u8 $0, t0; cvt.u32.u8 $1, t1; cvt.u32.u8 $2, t2; "
        "cvt.u32.u8 $3, t3; } cvt.rn.f32.s32 $4, $0; cvt.rn.f32.s32 $5, $1; cvt.rn.f32.s32 $6, $2; "
        "cvt.rn.f32.s32 $7, $3; max.f32 $4, $4, $9; max.f32 $5, $5, $10; max.f32 $6, $6, $11; max.f32 $7, $7, $12;",
        "=r,=r,=r,=r,=r,=r,=r,=r,r,r,r,r,r", [tl.load(A + offs), tl.load(B + offs)], dtype=(tl.int32, tl.float32),
        is_pure=True, pack=4)
    tl.store(C + offs, c)
    tl.store(D + offs, d)


@triton.jit
def _copy_shifted(X, Y, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.inline_asm_elementwise("ld.global.b8 $0, [$1]; shl.b32 $0, $0, 3; st.global.b8 [$2], $0;", "=r,l,l",
                              [X + offs, Y + offs], dtype=tl.int8, is_pure=False, pack=1)


def _t(a):
    import torch
    return torch.from_numpy(a).cuda()


@pytest.mark.parametrize("warps", [1, 4])
def test_funnel_shift(cuda, warps):
    rng = np.random.default_rng(1)
    x, y = (rng.integers(0, 2**32, 512, dtype=np.uint64).astype(np.uint32) for _ in range(2))
    z = _t(np.zeros(512, np.uint32))
    _funnel[(1,)](_t(x), _t(y), z, SHIFT=17, BLOCK=512, num_warps=warps)
    np.testing.assert_array_equal(z.cpu().numpy(), (y << np.uint32(17)) | (x >> np.uint32(15)))


def test_packed_bytes_and_halves(cuda):
    rng = np.random.default_rng(2)
    x = rng.integers(0, 256, 2048).astype(np.uint8)
    y = _t(np.zeros(2048, np.uint8))
    _bytes_times_8[(1,)](_t(x), y, BLOCK=2048)
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
    _widen_and_max[(1,)](_t(u8), _t(f), ci, df, BLOCK=512)
    np.testing.assert_array_equal(ci.cpu().numpy(), u8.astype(np.int32))
    np.testing.assert_array_equal(df.cpu().numpy(), np.maximum(u8.astype(np.float32), f))


def test_impure_statement_through_pointers(cuda):
    x = np.random.default_rng(4).integers(0, 256, 512).astype(np.uint8)
    y = _t(np.zeros(512, np.uint8))
    _copy_shifted[(1,)](_t(x), y, BLOCK=512)
    np.testing.assert_array_equal(y.cpu().numpy(), (x << 3).astype(np.uint8))
