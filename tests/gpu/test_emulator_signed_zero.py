"""The sign of a zero from tl.maximum/tl.minimum (and tl.clamp) on the GPU emulator. x86 lowers llvm.maxnum/minnum
to maxss/minss, which return the second operand when the inputs compare equal, so max(-0.0, +0.0) came out -0.0 or
+0.0 by operand order; the interpreter, the CPU backend and (IEEE 754-2019 maximumNumber) GPUs order -0 below +0.
Found by the differential fuzzer (bfloat16 max in a loop)."""
from __future__ import annotations

import numpy as np
import pytest

import tritium as triton
import tritium.language as tl


@triton.jit
def min_max(x_ptr, y_ptr, o_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs)
    tl.store(o_ptr + offs, tl.maximum(x, y))
    tl.store(o_ptr + N + offs, tl.maximum(y, x))
    tl.store(o_ptr + 2 * N + offs, tl.minimum(x, y))
    tl.store(o_ptr + 3 * N + offs, tl.minimum(y, x))
    tl.store(o_ptr + 4 * N + offs, tl.clamp(x, y, y + 1))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_zero_signs(emulator, dtype):
    n = 32
    x = np.where(np.arange(n) % 2 == 0, -0.0, 0.0).astype(dtype)
    y = -x
    out = np.ones(5 * n, dtype)
    min_max[(1, )](x, y, out, n)
    neg = np.signbit(out)
    assert not neg[:2 * n].any(), "max(-0, +0) must be +0"
    assert neg[2 * n:4 * n].all(), "min(-0, +0) must be -0"
    # clamp(x, lo=y, hi=y+1): x = -0 with lo = +0 gives +0; x = +0 with lo = -0 gives +0
    assert not neg[4 * n:].any()
