"""fp32/fp64 tl.dot on the CPU backend at every ISA level: the register-blocked microkernel (``codegen/dot.py``)
picks its MR x NV block from the vector width, with a block of the leftover rows when MR does not divide M, and
a loop of K tiles copies each 2-D tile with vector moves. Results against float64; the blocking and the copy
are checked in the assembly (structure, never speed)."""
from __future__ import annotations

import re

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl
from tritium_cpu import isa

LEVELS = isa.levels_to_check()
NAMED = [n for n in isa.runnable_levels() if n != "native"]
level = isa.compiling_for


@triton.jit
def _loop_dot(a_ptr, b_ptr, c_ptr, K, stride_am, stride_bk, M: tl.constexpr, N: tl.constexpr,
              BK: tl.constexpr):
    m = tl.arange(0, M)
    n = tl.arange(0, N)
    k = tl.arange(0, BK)
    a_ptrs = a_ptr + m[:, None] * stride_am + k[None, :]
    b_ptrs = b_ptr + k[:, None] * stride_bk + n[None, :]
    acc = tl.zeros((M, N), dtype=c_ptr.dtype.element_ty)
    for kk in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptrs, mask=k[None, :] < K - kk * BK, other=0.0)
        b = tl.load(b_ptrs, mask=k[:, None] < K - kk * BK, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK
        b_ptrs += BK * stride_bk
    tl.store(c_ptr + m[:, None] * N + n[None, :], acc)


def _run(M, N, K, BK, dtype):
    rng = np.random.default_rng(M * 7 + N * 3 + K)
    a = rng.standard_normal((M, K)).astype(dtype)
    b = rng.standard_normal((K, N)).astype(dtype)
    c = np.zeros((M, N), dtype)
    k = _loop_dot[(1, )](a, b, c, K, K, N, M, N, BK)
    return a, b, c, k


@pytest.mark.parametrize("lvl", LEVELS)
@pytest.mark.parametrize("M,N,K,BK", [(128, 128, 96, 32), (16, 64, 40, 16), (64, 32, 64, 32), (32, 16, 8, 8),
                                      (4, 16, 16, 16), (1, 32, 16, 16)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_blocked_dot_matches_float64(lvl, M, N, K, BK, dtype):
    with level(lvl):
        a, b, c, _ = _run(M, N, K, BK, dtype)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    tol = 1e-4 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(c, ref, rtol=tol, atol=tol)


def _asm(kernel) -> str:
    import llvmlite.binding as llvm
    from tritium_cpu.compiler import host_cpu, host_target
    cpu, features = host_cpu()
    return host_target(cpu, features, 3).emit_assembly(llvm.parse_assembly(kernel.asm["llir"]))


@pytest.mark.skipif("avx512" not in NAMED, reason="the host cannot run AVX-512")
def test_avx512_block_keeps_24_accumulators_and_copies_tiles_with_vectors():
    with level("avx512"):
        _, _, _, k = _run(128, 128, 64, 32, np.float32)
        asm = _asm(k)
    # 6 rows x 4 vectors of C live in zmm registers over the K loop (the 4 x 2 block used 8)
    accs = set(re.findall(r"vfmadd231ps\s+[^\n]*?%(zmm\d+)\s*$", asm, re.M))
    assert len(accs) >= 24, sorted(accs)
    # the 128 x 32 tile of a is copied a row of two vectors at a time, not element by element
    assert "vscatter" not in asm
    scalar_moves = len(re.findall(r"vmovss\s+[^\n]*\(%r", asm))
    assert scalar_moves < 64, scalar_moves
