"""fp16 ``tl.minimum``/``tl.maximum`` on the GPU emulator. x86 has no fp16 arithmetic here (no AVX512-FP16), so
its code generation promotes ``llvm.minnum.f16``/``llvm.maxnum.f16`` to calls of the C library's ``fminf``/``fmaxf``;
the emulator refused such a kernel by name until they were linked (fuzz seed 19020003, kernel 19020060060009,
shrunk by hand to this clamp)."""
from __future__ import annotations

import numpy as np

import tritium as triton
import tritium.language as tl


@triton.jit
def clamp_half(x_ptr, o_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    tl.store(o_ptr + offs, tl.minimum(tl.maximum(x, -128.0), 127.0))


def test_fp16_clamp_ignores_nan(emulator):
    x = np.array([0, -300, 300, np.nan, 5.5, -0.0, 1, -2] * 2, np.float16)
    out = np.zeros_like(x)
    clamp_half[(1, )](x, out, x.size)
    # minnum/maxnum: a NaN operand yields the other one (Triton's default PropagateNan.NONE)
    np.testing.assert_array_equal(out, np.fmin(np.fmax(x, np.float16(-128)), np.float16(127)))
