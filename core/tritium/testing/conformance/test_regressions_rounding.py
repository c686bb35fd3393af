"""Rounding that a backend's instruction choice must not change (both found by the differential fuzzer).

- float32 -> bfloat16 rounds subnormals to nearest even like any other value. x86's VCVTNEPS2BF16 (AVX512-BF16,
  AVX-NE-CONVERT), which LLVM picks for the conversion when the target has it, flushes them to zero instead.
- ``enable_fp_fusion=False`` promises that ``a * b + c`` is rounded twice: no fused multiply-add. The GPU
  lowering marked every float op ``contract``, so LLVM fused it anyway.
"""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl

BF16_BITS = np.dtype(np.uint16)


@triton.jit
def _to_bf16(x_ptr, out_ptr, N: tl.constexpr):
    r = tl.arange(0, N)
    tl.store(out_ptr + r, tl.load(x_ptr + r).to(tl.bfloat16))


def _bf16_bits_of(x: np.ndarray) -> np.ndarray:
    """Round-to-nearest-even of float32 to bfloat16, as bit patterns (no NaN in the inputs here)."""
    bits = x.view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return rounded.astype(np.uint16)


def test_float32_subnormals_round_to_bfloat16(backend):
    backend.require_dtype("bfloat16")
    # subnormals that bfloat16 holds exactly, ones that round (up, down, to even), and the largest subnormal
    bits = np.array([0x007F0000, 0x00010000, 0x80400000, 0x00000001, 0x00008000, 0x00018000, 0x00028000,
                     0x007FFFFF, 0x807FFFFF, 0x00123456, 0x80654321, 0x00000000, 0x80000000, 0x00800000,
                     0x3F800000, 0x0000FFFF], np.uint32)
    x = bits.view(np.float32)
    out = np.zeros(16, BF16_BITS)
    _to_bf16[(1,)](x, triton.reinterpret(out, tl.bfloat16), N=16)
    np.testing.assert_array_equal(out, _bf16_bits_of(x), err_msg="float32 -> bfloat16 (bit patterns)")


@triton.jit
def _mul_add(a_ptr, b_ptr, c_ptr, out_ptr, N: tl.constexpr):
    r = tl.arange(0, N)
    tl.store(out_ptr + r, tl.load(a_ptr + r) * tl.load(b_ptr + r) + tl.load(c_ptr + r))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_no_fp_fusion_rounds_twice(backend, dtype):
    backend.require_dtype(dtype)
    rng = np.random.default_rng(7)
    n = 64
    a = (1 + rng.random(n)).astype(dtype)
    b = (1 + rng.random(n)).astype(dtype)
    # c = -(a*b rounded): a fused multiply-add leaves the rounding error of a*b (mostly nonzero), two roundings 0
    c = -(a * b)
    out = np.full(n, np.nan, dtype)
    _mul_add[(1,)](a, b, c, out, N=n, enable_fp_fusion=False)
    np.testing.assert_array_equal(out, np.zeros(n, dtype))
