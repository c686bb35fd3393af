"""fp16 x fp16 dots with an fp16 result (``out_dtype=tl.float16``, or an fp16 ``acc``): one tile, optionally plus
a loaded matrix (Triton's test_dot "add-matrix"), a pipelined K loop carrying an fp16 accumulator, and a loop of
two such dots (the second reading the first's result, as attention's P @ V). Shared by the sm_90/sm_80 compile
tests (tests/nvidia_compile/test_f16_acc_dots_ptx.py) and the GPU tests (test_f16_acc_dots.py)."""
from __future__ import annotations

import tritium as triton
import tritium.language as tl


@triton.jit
def tile_dot(X, Y, Z, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, ADD: tl.constexpr,
             OUT_F16: tl.constexpr):
    """Z (BM x BN, row-major) = X (BM x BK) @ Y (BK x BN) [+ Z]."""
    om = tl.arange(0, BM)
    on = tl.arange(0, BN)
    ok = tl.arange(0, BK)
    x = tl.load(X + om[:, None] * BK + ok[None, :])
    y = tl.load(Y + ok[:, None] * BN + on[None, :])
    zs = Z + om[:, None] * BN + on[None, :]
    z = tl.dot(x, y, out_dtype=tl.float16 if OUT_F16 else tl.float32)
    if ADD:
        z += tl.load(zs)
    tl.store(zs, z)


@triton.jit
def loop_dot(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm, BM: tl.constexpr, BN: tl.constexpr,
             BK: tl.constexpr):
    """C (fp16) = A @ B, the fp16 accumulator carried through the K loop (``acc=``)."""
    offs_m = tl.program_id(0) * BM + tl.arange(0, BM)
    offs_n = tl.program_id(1) * BN + tl.arange(0, BN)
    offs_k = tl.arange(0, BK)
    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :]
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float16)
    for _ in range(0, K, BK):
        acc = tl.dot(tl.load(a_ptrs), tl.load(b_ptrs), acc, out_dtype=tl.float16)
        a_ptrs += BK
        b_ptrs += BK * stride_bk
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :], acc)


@triton.jit
def loop_chain(q_ptr, k_ptr, v_ptr, o_ptr, L, D: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    """O (BM x D, fp16) = sum over key blocks of (Q K^T) V, both dots fp16 x fp16 -> fp16, the second reading the
    first's result from registers (attention's loop, without its softmax)."""
    offs_m = tl.program_id(0) * BM + tl.arange(0, BM)
    offs_n = tl.arange(0, BN)
    offs_d = tl.arange(0, D)
    q = tl.load(q_ptr + offs_m[:, None] * D + offs_d[None, :])
    acc = tl.zeros((BM, D), dtype=tl.float16)
    for start in range(0, L, BN):
        kt = tl.load(k_ptr + (start + offs_n)[None, :] * D + offs_d[:, None])
        s = tl.dot(q, kt, out_dtype=tl.float16)
        v = tl.load(v_ptr + (start + offs_n)[:, None] * D + offs_d[None, :])
        acc = tl.dot(s, v, acc, out_dtype=tl.float16)
    tl.store(o_ptr + offs_m[:, None] * D + offs_d[None, :], acc)
