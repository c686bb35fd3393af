"""fp8 constants in the GPU lowering (on the host emulator): encoded by tritium.llvmir.fp8, the one description of
the formats. Before it, the GPU lowering had its own encoder, which wrote 0 for an fp8e5 infinity."""
from __future__ import annotations

import pytest

import tritium
import tritium.language as tl

torch = pytest.importorskip("torch")


@tritium.jit
def _fill(o_ptr, VALUE: tl.constexpr, N: tl.constexpr):
    tl.store(o_ptr + tl.arange(0, N), tl.full([N], VALUE, tl.float8e5))


@pytest.mark.parametrize("value, code", [(float("inf"), 0x7C), (float("-inf"), 0xFC), (-0.0, 0x80), (1.5, 0x3E),
                                         (57344.0, 0x7B)])
def test_emulated_fp8e5_constant_codes(emulator, value, code):
    out = torch.zeros(64, dtype=torch.float8_e5m2)
    _fill[(1,)](out, VALUE=value, N=64)
    assert out.view(torch.uint8).tolist() == [code] * 64
