"""Kernels of session 21's Triton-parity work that both tiers use: the sm_90 compile tests (tests/nvidia_compile,
PTX through ptxas without a GPU) and the GPU tests (values on an H200) import them from here."""
from __future__ import annotations

import tritium as triton
import tritium.language as tl


# -- tl.inline_asm_elementwise ---------------------------------------------------------------------------------------
@triton.jit
def funnel_shift(X, Y, Z, SHIFT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    s = tl.full([BLOCK], SHIFT, tl.int32)
    z = tl.inline_asm_elementwise("shf.l.wrap.b32 $0, $1, $2, $3;", "=r, r, r, r",
                                  [tl.load(X + offs), tl.load(Y + offs), s], dtype=tl.uint32, is_pure=True, pack=1)
    tl.store(Z + offs, z)


@triton.jit
def bytes_times_8(X, Y, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    y = tl.inline_asm_elementwise("and.b32 $0, $1, 0x1F1F1F1F; shl.b32 $0, $0, 3;", "=r,r", [tl.load(X + offs)],
                                  dtype=tl.uint8, is_pure=True, pack=4)
    tl.store(Y + offs, y)


@triton.jit
def widen_and_max(A, B, C, D, BLOCK: tl.constexpr):
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
def copy_shifted(X, Y, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.inline_asm_elementwise("ld.global.b8 $0, [$1]; shl.b32 $0, $0, 3; st.global.b8 [$2], $0;", "=r,l,l",
                              [X + offs, Y + offs], dtype=tl.int8, is_pure=False, pack=1)


# -- max_num_imprecise_acc -------------------------------------------------------------------------------------------
@triton.jit
def promoted_matmul(A, B, C, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, LOW: tl.constexpr):
    m, n, k = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
    a_ptrs = A + m[:, None] * K + k[None, :]
    b_ptrs = B + k[:, None] * BN + n[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for _ in range(0, K // BK):
        acc = tl.dot(tl.load(a_ptrs), tl.load(b_ptrs), acc=acc, max_num_imprecise_acc=LOW)
        a_ptrs += BK
        b_ptrs += BK * BN
    tl.store(C + m[:, None] * BN + n[None, :], acc)


# -- descriptor min/max of fp16/bf16 ---------------------------------------------------------------------------------
@triton.jit
def descriptor_minmax(out_ptr, a_ptr, M, N, MB: tl.constexpr, NB: tl.constexpr, KIND: tl.constexpr,
                      SHIFT: tl.constexpr):
    mo = tl.program_id(0) * MB
    no = tl.program_id(1) * NB
    val = tl.load(a_ptr + (mo + tl.arange(0, MB)[:, None]) * N + no + tl.arange(0, NB)[None, :])
    desc = tl.make_tensor_descriptor(out_ptr, shape=[M, N], strides=[N, 1], block_shape=[MB, NB])
    if KIND == "min":
        desc.atomic_min([mo, no + SHIFT], val)
    else:
        desc.atomic_max([mo, no + SHIFT], val)


# -- tl.extra.cuda ---------------------------------------------------------------------------------------------------
@triton.jit
def timed_loop(Out1, Out2, func: tl.constexpr):
    start = func()
    off = tl.arange(0, 128)
    for i in range(10000):
        tl.store(Out1 + off, tl.load(Out1 + off) + 1)
    end = func()
    tl.store(Out2, start)
    tl.store(Out2 + 1, end)


@triton.jit
def smid_per_program(Out):
    tl.store(Out + tl.program_id(0), tl.extra.cuda.smid())
